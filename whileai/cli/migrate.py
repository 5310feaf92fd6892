"""`whileai migrate OLD.toml... [-t TARGET] [-o NEW.toml | -o DIR] [--from vX] [--force] [--allow-drops]`:
through the target's `migration` hook (whileai.targets.hooks.Migrator; prime-rl's:
targets/prime_rl/migrate/). A target without one: "nothing to migrate for <target>", one line,
exit 0 (nothing is wrong; nothing is read or written)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from whileai.cli.params import TARGET
from whileai.errors import SpecError, clean
from whileai.report.wrap import fit

if TYPE_CHECKING:
    from whileai.targets.hooks import MigratedFile


def migrate_cmd(
    configs: Annotated[list[Path], typer.Argument(
        help="Config file(s) written for an older release of the target.", show_default=False)],
    target: Annotated[str, typer.Option(*TARGET.flags, help=TARGET.help)] = TARGET.default,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="NEW.toml (one input) or a folder; "
                   "default: print the migrated file")] = None,
    release: Annotated[str | None, typer.Option("--from", help="The release the files are for "
                       "(v0.5.0 ... v0.8.0); default: detected from the keys")] = None,
    entry: Annotated[str | None, typer.Option("--entry", help="The entry point the files are for "
                     "(rl, sft, inference, orchestrator, trainer); default: detected from the keys")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite files whileai did not write, and write a "
                     "migrated file the pin's checks refuse (saying so).")] = False,
    allow_drops: Annotated[bool, typer.Option("--allow-drops", help="Write even when a key is dropped "
                           "or needs a decision (it is left out and named).")] = False,
) -> None:
    """Rewrite configs written for an older release of a target into its pinned release's form."""
    from whileai.cli.fail import fail as _fail
    from whileai.files import write
    from whileai.spec.load import read_text
    from whileai.targets import registry

    try:
        t = registry.get(target)
    except SpecError as e:
        _fail(e)
    mig = t.migration
    if mig is None:  # nothing is wrong, and nothing is read or written
        can = [n for n in registry.names() if registry.get(n).migration is not None]
        _say(f"nothing to migrate for {t.name}: whileai writes its files for one release "
             f"(migrate carries older files of {', '.join(can)} to the pin)")
        raise typer.Exit(0)
    try:
        release = mig.release(release) if release is not None else None
    except SpecError as e:
        _fail(e)
    if entry is not None and entry not in mig.entries:
        _fail(SpecError("--entry", entry, f"one of {', '.join(mig.entries)}"))
    if out is not None and out.suffix == ".toml" and len(configs) > 1:
        _fail(SpecError("-o", str(out), "a folder when migrating several files"))
    if out is not None:  # as cp and mkdir do: a missing folder is named, never made (before any work)
        into = out.parent
        if not into.is_dir():
            what = "NEW.toml in a folder that exists" if out.suffix == ".toml" else \
                "a folder (new or not) inside a folder that exists"
            _fail(SpecError("-o", str(out), what, hint=f"no folder {into}"))
    pin = mig.releases()[-1]
    t0 = time.perf_counter()
    results, texts = [], {}
    refused = []
    for config in configs:
        try:
            text = read_text(config, "config", 8 << 20, "TOML file")
            m = mig.migrate(config, text, release, entry)
        except SpecError as e:
            _fail(e)
        except Exception as e:  # noqa: BLE001 - a TOML the parser refuses
            _fail(SpecError("config", str(config), f"a TOML file ({type(e).__name__}: {e})"))
        how = "looks written for" if m.detected else "written for"
        what = "" if m.entry == mig.entries[0] else f" ({m.entry} entry point)"
        also = f" (or {', '.join(m.also)}: they know all its keys too; --from to say which)" if m.also else ""
        if m.release == pin and not m.changes:  # nothing older about it: say so plainly
            _say(f"{config}: {how} {t.name} {m.release}{what}, the pinned release: nothing "
                 "to migrate (the file is carried over unchanged)")
        else:
            _say(f"{config}: {how} {t.name} {m.release}{also}{what}; migrating to {pin}")
            for c in m.changes:  # a drop, a decision or an unknown key: its one line is the error below
                if c not in m.decisions:
                    _say(f"  {c.line()}")
            if m.kept:
                _say(f"  kept: {', '.join(m.kept)}")
        results.append((config, m))
        texts[config] = m.text
        named = [d.old for d in m.decisions]  # the pin refusing a key already named is no second line
        refused += [(config, line) for line in mig.refused(m)
                    if not any(_under(line.split(":")[0], k) or _under(k, line.split(":")[0]) for k in named)]
    if not may_write(results, refused, force=force, allow_drops=allow_drops):
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
        _say(f"wrote {len(configs)} file(s) to {out} in {time.perf_counter() - t0:.2f} s")


def _under(key: str, root: str) -> bool:
    return key == root or key.startswith((root + ".", root + "["))


def may_write(results: list[tuple[Path, MigratedFile]], refused: list[tuple[Path, str]], *,
              force: bool, allow_drops: bool) -> bool:
    """Say what stops the files being written (errors) or is written past (warnings)."""
    from whileai.cli.fail import err_line

    stops = []
    for config, d in [(c, d) for c, m in results for d in m.decisions]:
        stop = not force if d.kind == "unknown" else not allow_drops
        stops += [d.kind] if stop else []
        what = {"unknown": "is unknown", "dropped": "is dropped"}.get(d.kind, "needs a decision")
        past = {"unknown": " (written as it is)", "dropped": " (left out)"}.get(d.kind,
                                                                              " (written undecided)")
        err_line(f"{'error' if stop else 'warning'}: {config}: {d.old} {what}: {d.why}{'' if stop else past}")
    for config, line in refused:
        kind = "warning" if force else "error"
        err_line(f"{kind}: {config}: the pin would refuse the migrated file: {line}")
    if stops or (refused and not force):
        hints = [h for k, h in (("unknown", "--force writes past unknown keys"),
                                ("dropped", "--allow-drops writes the files without dropped keys"),
                                ("decision", "--allow-drops writes them without deciding"))
                 if k in stops] or ["--force writes it anyway"]
        err_line(f"error: nothing written ({'; '.join(hints)})")
        return False
    if refused:
        err_line("warning: --force: writing files the pin's checks refuse")
    return True


def _say(text: str) -> None:
    """One line of migrate's account, wrapped to the terminal (a key or value never split)."""
    print("\n".join(fit([clean(text)])))
