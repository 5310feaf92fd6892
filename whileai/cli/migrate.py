"""`whileai migrate OLD.toml... [-o NEW.toml | -o DIR] [--from vX] [--force] [--allow-drops]`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from whileai.errors import SpecError, clean


def migrate_cmd(
    configs: Annotated[list[Path], typer.Argument(help="prime-rl TOML file(s) for an older release.",
                                                  show_default=False)],
    out: Annotated[Path | None, typer.Option("-o", "--out", help="NEW.toml (one input) or a folder; "
                   "default: print the migrated file")] = None,
    release: Annotated[str | None, typer.Option("--from", help="The release the files are for "
                       "(v0.5.0 ... v0.8.0); default: detected from the keys")] = None,
    entry: Annotated[str | None, typer.Option("--entry", help="The entry point the files are for "
                     "(rl, sft, inference, orchestrator, trainer); default: detected from the keys")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite files whileai did not write.")] = False,
    allow_drops: Annotated[bool, typer.Option("--allow-drops", help="Write even when a key needs a "
                           "decision (it is dropped and named).")] = False,
) -> None:
    """Rewrite prime-rl configs written for an older release into the pinned release's form."""
    from whileai.cli.fail import err_line as _err
    from whileai.cli.fail import fail as _fail
    from whileai.files import write
    from whileai.spec.load import read_text
    from whileai.targets.prime_rl.migrate import chain
    from whileai.targets.prime_rl.migrate.core import ENTRIES, migrate

    known = chain.releases()
    if release is not None:
        release = release if release.startswith("v") or release in known else f"v{release}"
        release = next((r for r in known if r == release or r.startswith(release + ".")), release)
        if release not in known:
            _fail(SpecError("--from", release, f"one of {', '.join(known[:-1])}"))
    if entry is not None and entry not in ENTRIES:
        _fail(SpecError("--entry", entry, f"one of {', '.join(ENTRIES)}"))
    if out is not None and out.suffix == ".toml" and len(configs) > 1:
        _fail(SpecError("-o", str(out), "a folder when migrating several files"))
    t0 = time.perf_counter()
    results, texts = [], {}
    for config in configs:
        try:
            text = read_text(config, "config", 8 << 20, "TOML file")
            m = migrate(text, release, entry)
        except SpecError as e:
            _fail(e)
        except Exception as e:  # noqa: BLE001 - a TOML the parser refuses
            _fail(SpecError("config", str(config), f"a TOML file ({type(e).__name__}: {e})"))
        how = "looks written for" if m.detected else "written for"
        what = "" if m.entry == "rl" else f" ({m.entry} entry point)"
        print(clean(f"{config}: {how} prime-rl {m.release}{what}; migrating to {chain.pin()}"))
        for c in m.changes:
            print(clean(f"  {c.line()}"))
        results.append((config, m))
        texts[config] = m.text
    decisions = [(c, d) for c, m in results for d in m.decisions]
    for config, d in decisions:  # with --allow-drops the file is written without the key: a warning
        kind = "warning: dropped" if allow_drops else "error"
        _err(f"{kind}: {config}: {d.old} needs a decision: {d.why}")
    if decisions and not allow_drops:
        _err("error: nothing written (--allow-drops writes the files without those keys)")
        raise typer.Exit(1)
    if out is None:
        for config, m in results:
            print(f"# --- {config} (migrated)\n{m.text}", end="")
    else:
        if out.suffix == ".toml":
            outputs = [write.Output(out.parent, {out.name: texts[configs[0]]}, whole=False)]
        else:
            outputs = [write.Output(out, {c.name: texts[c] for c in configs}, whole=False)]
        try:
            write.commit(write.plan(outputs, force=force))
        except SpecError as e:
            _fail(e)
        print(f"wrote {len(configs)} file(s) to {out} in {time.perf_counter() - t0:.2f} s")
