"""How many trainable traces one episode of a taskset yields: what prime-rl's batch counts.

prime-rl 559b447 fills a step's batch with trainable *traces*, not episodes
(orchestrator/train_sink.py: `len(self.pending_batch) >= self.batch_size`, one entry per trace;
algo/base.py iter_trainable_traces skips a trace whose agent is not trainable). An episode of a
single-seat taskset is one trace; one of kuhn-poker is two (player0 and player1 play one hand,
each seat's trace is its own rollout: environments/kuhn_poker). So a spec's `prompts` x
`samples` episodes per step are `prompts x samples x traces_per_episode` in `batch_size`.

    per_episode(run)   # Seats(traces=2, roles=("player0", "player1"), how="...")

The seats come from the pinned taskset catalogue's roles (every verifiers agent is trainable by
default: v1/agent.py `self.trainable = True`), with what an env's own source changes
(`RUNS`, `TRAINABLE`), read with its arguments from the compiled env table where given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from whileai.catalogs import tasksets as tc
from whileai.catalogs.paths import get_path
from whileai.catalogs.targets import plugin_key
from whileai.spec import mixture
from whileai.spec.mixture import Entry
from whileai.spec.run import RunSpec

# a seat that runs more than once per episode: (env argument, its default), from the env's source
RUNS: dict[str, dict[str, tuple[str, int]]] = {
    "proposer-solver": {"solver": ("n", 4)},  # proposer_solver/taskset.py: n solver runs per problem
}
# a seat whose trainability the env sets from an argument (default True): proposer_solver's setup()
TRAINABLE: dict[str, dict[str, str]] = {
    "proposer-solver": {"proposer": "train_proposer", "solver": "train_solver"},
}


class Seats(NamedTuple):
    traces: int  # trainable traces per episode
    roles: tuple[str, ...]  # the trainable roles
    how: str  # the account, for the report ("" for one seat)


def of(taskset: str, roles: list[str] | None = None, env: dict[str, Any] | None = None) -> Seats:
    """The trainable traces of one episode of `taskset` (env: its compiled `env` table)."""
    known = tc.roles(taskset)
    names = tuple(known if known is not None else roles or tc.SINGLE_AGENT)
    key, env = plugin_key(taskset), env or {}
    count, kept, parts = 0, [], []
    for role in names:
        flag = TRAINABLE.get(key, {}).get(role)
        if flag is not None and env.get(flag, True) is False:
            continue
        arg, default = RUNS.get(key, {}).get(role, (None, 1))
        runs = env.get(arg, default) if arg else 1
        runs = runs if isinstance(runs, int) and runs > 0 else default
        count += runs
        kept.append(role)
        parts.append(f"{role} x {runs} (env {arg})" if arg else role)
    if count <= 1:
        return Seats(max(count, 1), tuple(kept) or names[:1], "")
    where = "pinned taskset catalogue" if known is not None else "the spec's roles"
    return Seats(count, tuple(kept), f"{key} yields {count} per episode ({', '.join(parts)}; "
                 f"{where})")


def per_episode(run: RunSpec, doc: dict[str, Any] | None = None, entries: Sequence[Entry] = (),
                shares: Sequence[float] = ()) -> Seats:
    """The run's traces per episode: its taskset's, or a mixture's, weighted by each source's
    share of the episodes (rounded up). entries, shares: the run's (whileai.spec.mixture), when
    listed already."""
    entries = entries or mixture.entries(run)
    found = [of(e.taskset, e.roles, _env(doc, e.pos) if doc is not None else None)
             for e in entries]
    if len(found) == 1 or len({s.traces for s in found}) == 1:
        return found[0]
    shares = shares or mixture.shares(run, entries)
    mean = sum(s.traces * w for s, w in zip(found, shares, strict=True))
    traces = -(-round(mean * 1000) // 1000)
    return Seats(traces, tuple(r for s in found for r in s.roles), f"the sources yield "
                 f"{', '.join(str(s.traces) for s in found)} trainable traces per episode: about "
                 f"{mean:.2f} at their shares, counted as {traces}")


def _env(doc: dict[str, Any], pos: int) -> dict[str, Any]:
    env = get_path(doc, f"orchestrator.train.source[{pos}].env", {})
    return env if isinstance(env, dict) else {}


__all__ = ["RUNS", "TRAINABLE", "Seats", "of", "per_episode"]
