"""The executor interface (where an arm runs: a local process or a Modal container), and
launch / collect over a manifest.

An executor does two things: `spawn(arm) -> handle` starts a run without waiting, and
`poll(arm) -> Outcome` says, without waiting, whether it is pending, done (with its metrics)
or failed (with the reason). An executor raises `InfraError` when it cannot tell (no token,
server unreachable): `collect` then stops and marks nothing failed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from whileai.launch.manifest import ArmRecord, Manifest
from whileai.targets.run import Metrics

EXIT_DONE = 0
EXIT_RUNNING = 3
EXIT_INFRA = 4
MODAL_GPUS = "H100:2,H200:2,A100-80GB:2"  # an arm's Modal container: the first of these available


def modal_gpus() -> list[str]:
    """The GPU choices of an arm's Modal container (WHILEAI_MODAL_GPUS, else MODAL_GPUS), in
    Modal's `gpu=` form: the app is deployed with them (whileai.launch.modal_app)."""
    import os

    return [g.strip() for g in os.environ.get("WHILEAI_MODAL_GPUS", MODAL_GPUS).split(",") if g.strip()]


def container_gpus(choices: list[str]) -> int:
    """GPUs an arm can count on in its container: the fewest any choice gives ('H100:2' -> 2,
    'H100' -> 1); Modal may start any of them."""
    counts = []
    for g in choices:
        _, _, n = g.partition(":")
        counts.append(int(n) if n.strip().isdigit() else 1)
    return min(counts) if counts else 1


class InfraError(RuntimeError):
    """The executor could not be asked (auth, network). Never an arm's failure."""


@dataclass(frozen=True)
class Outcome:
    state: Literal["pending", "done", "failed"]
    metrics: Metrics | None = None
    error: str | None = None
    note: str | None = None  # pending: what was seen (a restart, a server error; polled again)

    @classmethod
    def from_metrics(cls, m: Metrics) -> Outcome:
        if m.status == "ok":
            return cls("done", m)
        return cls("failed", m, m.error or "the run reported an error")


class Executor(Protocol):
    name: str

    def spawn(self, arm: ArmRecord) -> str:
        """Start the arm's run; return a handle that a later process can poll."""
        ...

    def poll(self, arm: ArmRecord) -> Outcome:
        """The run's state now (never waits); raises InfraError when it cannot tell."""
        ...


def still_running(executor: Executor, arm: ArmRecord) -> bool:
    """Whether the run an arm's handle names still runs (an executor without `running` cannot
    tell, so False); raises InfraError when it cannot be asked."""
    ask = getattr(executor, "running", None)
    return bool(arm.handle) and arm.backend == executor.name and ask is not None and bool(ask(arm))


Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def _selected(m: Manifest, names: Iterable[str] | None) -> list[ArmRecord]:
    if names is None:
        return list(m.arms.values())
    unknown = sorted(set(names) - set(m.arms))
    if unknown:
        raise KeyError(f"unknown arms {unknown}; the manifest has {sorted(m.arms)}")
    return [m.arms[n] for n in names]


def launch(
    m: Manifest,
    executor: Executor,
    *,
    arms: Iterable[str] | None = None,
    relaunch_failed: bool = False,
    log: Log = _stderr,
) -> Manifest:
    """Spawn every planned arm (and failed ones with `relaunch_failed`); skip pending/done.

    The manifest is saved after each spawn. A spawn that raises leaves its arm planned, saves
    what was already spawned, and propagates (a missing deployment is not an arm's failure).
    """
    for arm in _selected(m, arms):
        if arm.state in ("pending", "done") or (arm.state == "failed" and not relaunch_failed):
            log(f"{arm.spec.name}: {arm.state}, not spawned again")
            continue
        if arm.state == "failed" and still_running(executor, arm):  # never a second copy
            arm.state, arm.error = "pending", None
            m.save()
            log(f"{arm.spec.name}: its call {arm.handle} still runs: pending again, not spawned a "
                "second time (collect it)")
            continue
        handle = executor.spawn(arm)
        arm.backend, arm.handle, arm.state = executor.name, handle, "pending"
        arm.attempts += 1
        arm.result, arm.error = None, None
        m.save()
        log(f"{arm.spec.name}: spawned on {executor.name} as {handle} (attempt {arm.attempts})")
    return m


def collect(m: Manifest, executor: Executor, *, log: Log = _stderr) -> int:
    """Poll every pending arm once and record the outcome; save after each poll.

    Returns EXIT_RUNNING (3) while any arm is still pending, EXIT_DONE (0) when none is
    (failed arms are reported, not hidden), EXIT_INFRA (4) when the executor could not be
    asked: then nothing is marked and a later collect picks up where this one stopped.
    """
    for arm in m.arms.values():
        if arm.state != "pending":
            continue
        if arm.backend not in (None, executor.name):
            log(f"{arm.spec.name}: launched on {arm.backend}, not polled by {executor.name}")
            continue
        try:
            out = executor.poll(arm)
        except InfraError as e:
            m.save()
            log(f"infrastructure error, collect stopped (no arm marked): {e}")
            return EXIT_INFRA
        if out.state == "pending":
            if out.note:
                log(f"{arm.spec.name}: pending ({out.note})")
            continue
        arm.state, arm.result, arm.error = out.state, out.metrics, out.error
        m.save()
        log(f"{arm.spec.name}: {out.state}" + (f" ({out.error})" if out.error else ""))
    m.save()
    return summary(m, log)


def summary(m: Manifest, log: Log = _stderr) -> int:
    counts: dict[str, list[str]] = {}
    for arm in m.arms.values():
        counts.setdefault(arm.state, []).append(arm.spec.name)
    log("; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(counts.items())))
    return EXIT_RUNNING if "pending" in counts else EXIT_DONE
