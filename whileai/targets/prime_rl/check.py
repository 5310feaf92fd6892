"""What `whileai check` and every compiled file go through: the pinned loader's schema and
rules for an entry point (whileai.targets.prime_rl.loader), the renames people trip on, and
integers TOML cannot hold.

`check_document(doc, entry="rl")` returns the problems; `detect` says which entry point a
hand-written file is for; `check_file` is `whileai check` on a prime-rl TOML written by hand: the
pinned catalogue, the loader mirror's rules for its entry point, taskset argument typos, the notes
the loader would log, and, for a file written for an older release, the `whileai migrate` line.

    lines = check_file(Path("rl.toml"), "auto")   # [("ok" | "warning" | "error", text), ...]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.catalogs.paths import get_path
from whileai.catalogs.targets import Catalog, Problem
from whileai.errors import SpecError, raw
from whileai.targets.prime_rl import loader

# path (or trailing key) in old configs → what it is now
RENAMES: list[tuple[str, str]] = [
    (r"(^|\.)max_tokens$", "renamed to max_completion_tokens (per turn)"),
    (r"(^|\.)rollouts_per_example$", "renamed to orchestrator.group_size"),
    (r"^orchestrator\.sampling(\.|$)", "moved to [orchestrator.train.sampling]"),
    (r"^orchestrator\.train\.env(\.|$|\[)", "renamed to [[orchestrator.train.source]]"),
    (r"^max_off_policy_steps$", "moved to orchestrator.max_off_policy_steps (top level is rejected)"),
    (r"^orchestrator\.seed$", "removed: prime-rl has no run seed (only inference.vllm.seed)"),
    (r"(^|\.)(max_async_level|async_level)$", "removed; asynchrony is orchestrator.max_off_policy_steps"),
    (r"(^|\.)eval_base_model$", "removed"),
]


def rename_hint(path: str) -> str | None:
    bare = re.sub(r"\[\d+\]", "", path)
    return next((hint for pat, hint in RENAMES if re.search(pat, bare)), None)


def notes(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    """What `check` says besides problems: agent roles that run in a remote sandbox VM by
    default, tasksets the pinned catalogue does not know (not checked), booleans the loader
    reads leniently and likely typos among vLLM's free-form keys (whileai.targets.prime_rl.lax)."""
    from whileai.targets.prime_rl.lax import vllm_typos

    return runtime_notes(doc, entry) + unchecked(doc, entry) + lax_notes(doc, entry) + vllm_typos(doc, entry)


def _envs(doc: dict[str, Any], entry: str) -> list[tuple[str, Any]]:
    prefix = {"rl": "orchestrator.", "orchestrator": "", "sft": "", "evals": ""}.get(entry)
    tables: list[tuple[str, Any]] = []
    if prefix is not None:
        for kind in ("train", "eval"):
            for i, src in enumerate(_list(get_path(doc, f"{prefix}{kind}.source"))):
                tables.append((f"{prefix}{kind}.source[{i}].env", get_path(src, "env")))
    if entry == "env-server":
        tables.append(("env", doc.get("env")))
    return tables


def unchecked(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    from whileai.catalogs import tasksets as taskset_catalog

    out = []
    for where, env in _envs(doc, entry):
        tid = get_path(env, "taskset.id")
        if isinstance(tid, str) and taskset_catalog.entry(tid) is None and not taskset_catalog.typo(tid):
            out.append(Problem(f"{where}.taskset.id", f"not checked: {taskset_catalog.unknown_reason(tid)}; "
                                "prime-rl imports it at load time"))
    return out


def runtime_notes(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    """Agent roles whose runtime is unset run in a remote sandbox VM by default."""
    out = []
    for where, env in _envs(doc, entry):
        for role, cfg in env.items() if isinstance(env, dict) else []:
            if isinstance(cfg, dict) and "harness" in cfg and "runtime" not in cfg:
                out.append(Problem(f"{where}.{role}.runtime", "unset: the default is a remote "
                                    "sandbox VM; set type = 'subprocess' to run locally"))
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def check_document(doc: dict[str, Any], catalog: Catalog | None = None, *,
                   entry: str = "rl") -> list[Problem]:
    """Every problem prime-rl's loader (and launcher) would raise for this document as a config
    of `entry`, with rename hints for unknown keys, and integers beyond TOML's range."""
    out = []
    for p in loader.check(doc, entry, catalog):
        hint = rename_hint(p.path) if p.message.startswith("unknown key") else None
        out.append(Problem(p.path, f"unknown key: {hint}") if hint else p)
    return out + out_of_range(doc)


def taskset_typos(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    """A bare taskset id the pinned workspace does not have: prime-rl could not import it
    (`whileai check`; a compiled spec's taskset was checked as the spec was read)."""
    from whileai.catalogs import tasksets as taskset_catalog

    out = []
    for where, env in _envs(doc, entry):
        tid = get_path(env, "taskset.id")
        why = taskset_catalog.typo(tid) if isinstance(tid, str) else None
        if why:
            out.append(Problem(f"{where}.taskset.id", f"{tid!r} is not allowed: {why}"))
    return out


def detect(doc: dict[str, Any]) -> tuple[str, list[Problem]]:
    """The entry point a document is for (see prime_rl_loader.detect), and its problems."""
    entry, _ = loader.detect(doc)
    return entry, check_document(doc, entry=entry)


def out_of_range(node: Any, path: str = "") -> list[Problem]:
    """Integers beyond TOML's signed 64-bit range (Python's TOML readers accept them; torch,
    vLLM and every other TOML reader do not)."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in out_of_range(v, f"{path}.{k}" if path else str(k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in out_of_range(v, f"{path}[{i}]")]
    if isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**63:
        return [Problem(path, f"an integer of {len(str(abs(node)))} digits is beyond TOML's signed "
                               "64-bit range")]
    return []


def looks_like_spec(doc: dict[str, Any]) -> bool:
    """A whileai run spec (taskset + method), not a prime-rl config."""
    return "taskset" in doc and "method" in doc


def lax_notes(doc: dict[str, Any], entry: str = "rl") -> list[Problem]:
    """The values `check` accepted only as the loader's lax mode reads them (one note each)."""
    from whileai.catalogs.targets import LAX_NOTES

    notes: list[Problem] = []
    token = LAX_NOTES.set(notes)
    try:
        check_document(doc, entry=entry)
    finally:
        LAX_NOTES.reset(token)
    return list({(p.path, p.message): p for p in notes}.values())


# (doc, entry) -> "looks written for prime-rl v0.7.0" or None; (text, entry) -> old key -> what it became
OldRelease = tuple[Callable[[dict[str, Any], str], "str | None"], Callable[[str, str], dict[str, str]]]


def check_file(config: Path, entry: str, older: OldRelease | None = None) -> list[tuple[str, str]]:
    """What `whileai check` says of one file, in order: its warnings, then "ok" or its errors.
    older: how to tell a file written for an older release and what became of its keys (the
    migration's hint, given by the target: the migration stands above this module)."""
    from whileai.spec.load import loads_toml, read_text

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
    old_release_hint, moves = older or (lambda doc, kind: None, lambda text, kind: {})
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
