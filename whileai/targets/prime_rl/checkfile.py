"""`whileai check` on a prime-rl TOML written by hand: the pinned catalogue, the loader mirror's
rules for its entry point, taskset argument typos, the notes the loader would log, and, for a
file written for an older release, the `whileai migrate` line.

    lines = check_file(Path("rl.toml"), "auto")   # [("ok" | "warning" | "error", text), ...]
"""

from __future__ import annotations

from pathlib import Path

from whileai.catalogs.targets import Problem
from whileai.errors import SpecError, raw


def check_file(config: Path, entry: str) -> list[tuple[str, str]]:
    """What `whileai check` says of one file, in order: its warnings, then "ok" or its errors."""
    from whileai.spec.load import loads_toml, read_text
    from whileai.targets.prime_rl.check import (
        check_document,
        detect,
        looks_like_spec,
        notes,
        taskset_typos,
    )

    try:
        doc = loads_toml(read_text(config, "config", 8 << 20, "TOML file"), where=str(config))
    except SpecError as e:
        return [("error", str(e))]
    if not doc:  # nothing but blanks or comments: every default, which no one means to check
        return [("error", str(SpecError("config", raw(f"{config} is an empty file"),
                                        "a prime-rl TOML with the keys of a run")))]
    if looks_like_spec(doc):
        return [("error", str(SpecError("config", str(config), "a prime-rl TOML; this is a whileai "
                                        "spec", hint=f"compile it: whileai compile {config}")))]
    try:
        kind, problems = detect(doc) if entry == "auto" else (entry, check_document(doc, entry=entry))
    except SpecError as e:  # a loader rule that crashed (RuleCrash): one line, never skipped
        return [("error", f"{config}: {e}")]
    problems = [*problems, *taskset_typos(doc, kind)]
    out = [("warning", f"{config}: {note}") for note in notes(doc, kind)]
    if not problems:
        return [*out, ("ok", f"{config} is a prime-rl {kind} config (uv run {kind} @ {config}) "
                             "that passes the pinned schema and loader rules")]
    guess = _guessed(kind, len(problems)) if entry == "auto" else ""
    from whileai.targets.prime_rl.migrate.hint import moves, old_release_hint

    if (old := old_release_hint(doc, kind)) is not None:
        guess = f"; it {old}: run `whileai migrate {config}`"
        became = moves(read_text(config, "config", 8 << 20, "TOML file"), kind)
        problems = [_became(p, became, config) for p in problems]
    out += [("error", f"{config}: {p}") for p in problems]
    return [*out, ("error", f"{config} is not a valid prime-rl {kind} config{guess}")]


def _guessed(kind: str, n: int) -> str:
    """Why the file was checked as `kind` when no entry point accepts it, in plain words."""
    from whileai.targets.prime_rl.loader.entries import ENTRIES

    others = ", ".join(e for e in ENTRIES if e != kind)
    return (f": the {n} problem{'s' if n != 1 else ''} above. No prime-rl entry point accepts it; "
            f"it was checked as {kind} (`uv run {kind}`), whose top-level keys it matches best. "
            f"Fix the lines above, or name the entry point it is for with --entry ({others})")


def _became(problem: Problem, became: dict[str, str], config: Path) -> Problem:
    """An old key's problem line says what became of it (a table: of its first key)."""
    keys = [problem.path] if problem.path in became else [
        k for k in became if k.startswith((problem.path + ".", problem.path + "["))]
    if not keys:
        return problem
    what = became[keys[0]] if keys[0] == problem.path else f"{keys[0]}: {became[keys[0]]}"
    said = "unknown key" if "did you mean" in problem.message else problem.message  # a guess, not the move
    return Problem(problem.path, f"{said}; {what} -> run `whileai migrate {config}`")
