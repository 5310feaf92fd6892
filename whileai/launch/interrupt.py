"""Ctrl-C and `--collect` told honestly (both recipes).

Ctrl-C while local arms train: every arm this process started is stopped (its whole process
group), set back to `planned` in the manifest (saved atomically, so a rerun starts it again),
and the recipe prints one line. Ctrl-C while a launch spawns Modal arms: this tag's calls are
cancelled one by one (`cancel_remote`: FunctionCall.cancel, never the whole app, where other
tags' arms run too) and set back to planned; one that cannot be cancelled is listed with its
call id, to collect later.

`--collect` refuses to write a comparison while a planned arm never ran or one still runs
(it names them); `--partial` writes one anyway, marked partial in results.json.
"""

from __future__ import annotations

from typing import Any

from whileai.launch.manifest import Manifest

EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
EXIT_RUNNING = 3  # as whileai.launch.executor: an arm still runs
EXIT_MISSING = 5  # an arm of the plan never ran (never launched, or stopped by Ctrl-C)
STOPPED = "stopped by Ctrl-C before it finished; a rerun of the recipe starts it again"


class Interrupted(Exception):  # noqa: N818  (it is what happened, not an error of the input)
    """Ctrl-C: `stopped` are the local arms ended, `remote` (name, handle) those left running."""

    def __init__(self, stopped: list[str], remote: list[tuple[str, str]]) -> None:
        super().__init__(", ".join(stopped))
        self.stopped, self.remote = stopped, remote


def stop_local(m: Manifest, be: Any) -> Interrupted:
    """Stop the arms `be` (a LocalExecutor) started; back to planned; the manifest saved."""
    dirs = set(be.stop()) if hasattr(be, "stop") else set()
    stopped = []
    for arm in m.arms.values():  # "planned": a Ctrl-C between an arm's spawn and its record
        if arm.state in ("pending", "planned") and (arm.handle or arm.dir) in dirs:
            arm.state, arm.handle, arm.error = "planned", None, STOPPED
            stopped.append(arm.spec.name)
    m.save()
    return Interrupted(stopped, remote(m))


CANCELLED = "cancelled by Ctrl-C while launching; a rerun of the recipe starts it again"


def cancel_remote(m: Manifest, ex: Any) -> Interrupted:
    """Cancel this manifest's pending calls on `ex` (a remote executor with `cancel(arm)`), each
    back to planned; those that could not be cancelled stay pending and are listed. Saved."""
    stopped = []
    for arm in m.arms.values():
        if arm.state != "pending" or arm.backend != ex.name or not arm.handle:
            continue
        try:
            ex.cancel(arm)
        except Exception:  # not reachable: it stays pending, listed to collect later
            continue
        arm.state, arm.handle, arm.error = "planned", None, CANCELLED
        stopped.append(arm.spec.name)
    m.save()
    return Interrupted(stopped, remote(m))


def remote(m: Manifest) -> list[tuple[str, str]]:
    return [(a.spec.name, a.handle or "") for a in m.arms.values()
            if a.state == "pending" and a.backend not in (None, "local")]


def interrupted_line(e: Interrupted | None, app: str = "whileai") -> str:
    """The one line a recipe prints on Ctrl-C."""
    done = (f"stopped arm(s) {', '.join(e.stopped)} (back to planned: a rerun starts them)"
            if e and e.stopped else "no arm was running here")
    line = f"interrupted: {done}; nothing half-written"
    if e and e.remote:
        line += (f"; still running on Modal app {app} (not cancelled: Modal did not answer): "
                 + ", ".join(f"{n} ({h})" for n, h in e.remote)
                 + "; collect them later with --collect (each call can be cancelled alone, "
                 "never with `modal app stop`, which stops every tag's arms)")
    return line


def collect_gate(m: Manifest, partial: bool) -> tuple[int, str | None]:
    """(exit code, one line) when the comparison would leave a planned arm out; (0, None) or,
    with `partial`, (0, the note) when it may be written."""
    running = [n for n, a in m.arms.items() if a.state == "pending"]
    missing = [n for n, a in m.arms.items() if a.state == "planned"]
    if not running and not missing:
        return 0, None
    parts = ([f"still running: {', '.join(running)}"] if running else []) + (
        [f"never ran: {', '.join(missing)} (launch them: rerun without --collect)"] if missing else [])
    if partial:
        return 0, "partial comparison (--partial): " + "; ".join(parts)
    code = EXIT_RUNNING if running else EXIT_MISSING
    return code, ("not collected: " + "; ".join(parts)
                  + "; --partial writes a comparison of the finished arms, marked partial")


def mark_partial(res: dict[str, Any], m: Manifest) -> dict[str, Any]:
    """results.json says it is partial: which planned arms are left out, and why."""
    left = {n: a.state for n, a in m.arms.items() if a.state in ("planned", "pending")}
    if not left:
        return res
    res = dict(res)
    res["partial"] = {"missing": sorted(left), "states": left}
    res["warnings"] = [*res.get("warnings", []), "partial comparison: "
                       + ", ".join(f"{n} ({s})" for n, s in sorted(left.items())) + " left out"]
    return res
