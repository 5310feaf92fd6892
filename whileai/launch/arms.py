"""Arms from spec files: their names, the baseline, the checks that keep a comparison fair,
the pairs compared, repeats and budget-matched steps. Used by both recipes and `whileai arms`.

    arms = load_arms(["grpo.toml", "opd.toml", "mine.toml"])    # baseline: the GRPO spec
    arms.runs        # {"grpo": RunSpec, "opd": RunSpec, "mine": RunSpec}  (names: file stems)
    arms.pairs       # (("opd", "grpo"), ("mine", "grpo"))   each arm vs the baseline, + extras

Every arm must share the baseline's taskset, holdout (its data file and eval.examples) and
student: anything else is refused with one SpecError line before anything is written.
Light: pydantic only (no torch, no I/O besides reading the spec files).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai.cost.budget import Budget, steps_for
from whileai.errors import SpecError, raw
from whileai.files.names import REPEAT, spec_name
from whileai.spec.load import replace_run
from whileai.spec.run import RunSpec

# Pairs of method types compared by default whenever arms of both exist (besides each arm
# against the baseline): on-policy distillation against its off-policy counterpart.
DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (("opd", "sft"),)
SHARED = "every arm shares the baseline's taskset, holdout (data file, eval.examples) and student"


@dataclass(frozen=True)
class Arms:
    runs: dict[str, RunSpec]
    paths: dict[str, Path]
    baseline: str
    pairs: tuple[tuple[str, str], ...]

    def methods(self) -> dict[str, str]:
        return {n: r.method.type for n, r in self.runs.items()}


def load_arms(
    specs: Sequence[str | Path], *, baseline: str | Path | None = None,
    pairs: Sequence[str] = (), check: bool = True,
) -> Arms:
    """Load spec files as arms; pick and check the baseline; list the pairs compared."""
    from whileai.spec.load import load_spec

    if not specs:
        raise SpecError("arms", raw("none given"), "one spec file or more")
    paths: dict[str, Path] = {}
    for p in [Path(s) for s in specs]:
        add_path(paths, p)
    base_name: str | None = None
    if baseline is not None:
        b = str(baseline)
        if b in paths:
            base_name = b
        elif b.endswith(".toml"):
            base_name = add_path(paths, Path(b))
        else:
            raise SpecError("--baseline", b, f"an arm ({', '.join(paths)}) or a spec file")
    from functools import partial

    from whileai.files.writable import named

    runs = {n: named(list(paths.values()), p, partial(load_spec, p)) for n, p in paths.items()}
    for n, r in runs.items():
        if r.sources:
            raise SpecError("arms", str(paths[n]), "a spec of one training source: an arm is one "
                            "method on one taskset, compared with the others on one holdout (compile "
                            "a mixture (sources) with `whileai compile -t prime-rl`)")
        if r.then is not None:
            raise SpecError("arms", str(paths[n]), "a one-stage spec: an arm trains one method "
                            "(compile a two-stage spec with `whileai compile`, which writes both "
                            "stages and the order to run them in)")
    base = base_name or pick_baseline({n: r.method.type for n, r in runs.items()})
    if check:
        check_shared(runs, base, paths)
    methods = {n: r.method.type for n, r in runs.items()}
    return Arms(runs, paths, base, tuple(comparisons(methods, base, [parse_pair(x) for x in pairs])))


def add_path(paths: dict[str, Path], p: Path) -> str:
    """Add a spec file under its stem; the same file twice is one arm, two files one name an error."""
    name = spec_name(p)
    if p.suffix != ".toml":
        raise SpecError("arms", str(p), "a .toml spec file")
    if REPEAT in name or not name:
        raise SpecError("arms", str(p), "a file name without '@' ('name@k' marks repeat k)")
    old = paths.get(name)
    if old is not None and old.resolve() != p.resolve():
        raise SpecError("arms", raw(f"two specs named {name!r} ({old} and {p})"),
                        "arm names are file stems: rename one")
    paths[name] = p
    return name


def pick_baseline(methods: Mapping[str, str]) -> str:
    """The GRPO arm (docs/research.md R17: believe no distillation number without one)."""
    grpo = [n for n, t in methods.items() if t == "grpo"]
    if len(grpo) == 1:
        return grpo[0]
    if "grpo" in grpo:
        return "grpo"
    if grpo:
        raise SpecError("--baseline", raw(f"unset with several GRPO arms ({', '.join(grpo)})"),
                        "name the one every arm is compared against")
    raise SpecError("--baseline", raw("unset and no GRPO arm"), "a GRPO spec on the same holdout, "
                    "or --baseline naming an arm (docs/research.md R17: a distillation number means "
                    "little without a GRPO arm)")


def holdout(run: RunSpec) -> tuple[str | None, int]:
    """What the arms are scored on: the data file's content (None: the taskset's own) and size."""
    digest = None
    if run.data is not None:
        try:
            digest = hashlib.sha256(Path(run.data).read_bytes()).hexdigest()
        except OSError:
            digest = str(Path(run.data).resolve())
    return digest, run.eval.examples


def check_shared(runs: Mapping[str, RunSpec], base: str, paths: Mapping[str, Path] | None = None) -> None:
    """Refuse (one line) an arm whose taskset, holdout or student differs from the baseline's."""
    where = dict(paths or {})
    b = runs[base]

    def label(n: str) -> str:
        return f"{n} ({where[n]})" if n in where else n

    for name, r in runs.items():
        diffs = [(what, mine, theirs) for what, mine, theirs in (
            ("taskset", r.taskset, b.taskset),
            ("student", r.model, b.model),
            ("data", r.data, b.data),
            ("eval.examples", r.eval.examples, b.eval.examples),
        ) if (holdout(r)[0] != holdout(b)[0] if what == "data" else mine != theirs)]
        if diffs:
            what, mine, theirs = diffs[0]
            raise SpecError("arms", raw(f"{label(name)} has {what} {mine!r} where the baseline "
                                        f"{label(base)} has {theirs!r}"), SHARED)


def parse_pair(text: str) -> tuple[str, str]:
    a, sep, b = text.partition(":")
    if not sep or not a.strip() or not b.strip() or a.strip() == b.strip():
        raise SpecError("--pair", text, "two different arm names as A:B (A compared against B)")
    return a.strip(), b.strip()


def comparisons(methods: Mapping[str, str], baseline: str,
                extra: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(arm, against) pairs: every arm vs the baseline, then the extras, then DEFAULT_PAIRS by
    method type wherever arms of both types exist. Names are arms (groups of repeats)."""
    if baseline not in methods:
        raise SpecError("--baseline", baseline, f"one of the arms: {', '.join(methods)}")
    for a, b in extra:
        for n in (a, b):
            if n not in methods:
                raise SpecError("--pair", f"{a}:{b}", f"arm names among {', '.join(methods)}")
    out = [(n, baseline) for n in methods if n != baseline] + list(extra)
    for ta, tb in DEFAULT_PAIRS:
        out += [(a, b) for a, t in methods.items() if t == ta for b, u in methods.items() if u == tb]
    return list(dict.fromkeys(out))


def match_budget(runs: Mapping[str, RunSpec], budget: Budget,
                 step_of: Callable[[RunSpec], dict[str, Any]]) -> dict[str, RunSpec]:
    """Each arm's steps set so that it spends `budget` (its own per-step spend from `step_of`)."""
    return {n: replace_run(r, steps=steps_for(budget, step_of(r))) for n, r in runs.items()}


def repeat(runs: Mapping[str, RunSpec], n: int) -> dict[str, RunSpec]:
    """n runs per arm: 'name' (its own seed) then 'name@2'.. 'name@n' (seed + k)."""
    if n < 1:
        raise SpecError("--repeats", n, "a whole number >= 1")
    out: dict[str, RunSpec] = {}
    for name, r in runs.items():
        for k in range(n):
            key = name if k == 0 else f"{name}{REPEAT}{k + 1}"
            out[key] = r if k == 0 else replace_run(r, seed=r.seed + k)
    return out


__all__ = ["DEFAULT_PAIRS", "SHARED", "Arms", "add_path", "check_shared", "comparisons", "holdout",
           "load_arms", "match_budget", "parse_pair", "pick_baseline", "repeat", "replace_run"]
