"""A rehearsal's verdict as lines: per stage `ok` with its steps' facts, or `failed` with the first
cause, quoted with the log it came from; then what the offline copy replaced."""

from __future__ import annotations

from whileai.rehearse.run import Result


def step_line(s: dict[str, object]) -> str:
    keys = (
        "samples",
        "tokens",
        "trained_tokens",
        "micro_batches",
        "policy_generations",
        "teacher_calls",
        "adapters_loaded",
        "weight_updates",
    )
    facts = ", ".join(f"{k.replace('_', ' ')} {s[k]}" for k in keys if k in s)
    envs = ", ".join(str(e) for e in s.get("envs", []))  # type: ignore[attr-defined]
    return f"    step {s['step']}: {facts}; sources {envs}"


def lines(result: Result) -> list[str]:
    out: list[str] = []
    for name, subs, v in zip(result.stages, result.subs, result.verdicts, strict=False):
        head = "ok" if v.ok else "failed"
        out.append(
            f"{head}: {name}: {v.summary.split(': ', 1)[-1] if v.ok else v.summary.removeprefix('failed: ')}"
        )
        out += [step_line(s) for s in v.steps]
        if v.cause is not None:
            out.append(f"  cause ({v.cause.file}:{v.cause.line}): {v.cause.text}")
        out += [f"  replaced: {s}" for s in subs]
    skipped = result.stages[len(result.verdicts) :]
    out += [f"not rehearsed: {n} (an earlier stage failed)" for n in skipped]
    verdict = "ok" if result.ok else "failed"
    out.append(
        f"{verdict}: rehearsal of {len(result.stages)} stage(s); logs in {result.folder}"
        if not result.ok or result.folder
        else verdict
    )
    return out
