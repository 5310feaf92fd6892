"""Every list of targets a person reads is made from the registry, or held to it here: `--version`,
the top-level help, the target option's help, the README's table and docs/layout.md. A target
registered at run time (the toy target) appears in `--version` and `--help` with no other edit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from whileai.targets import registry

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "tests" / "targets"


def whileai(*args: str, toy: bool = False) -> str:
    """The CLI in a fresh process (the help is built at import), with the toy target registered
    before it when asked, as a plug-in target would be."""
    boot = "from whileai.targets import registry; import toy; registry.register(toy.TARGET); " if toy else ""
    code = f"import sys; {boot}from whileai.cli.app import main; sys.argv[0] = 'whileai'; main()"
    path = os.pathsep.join([str(TOY), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout


def versions(pin: str) -> list[str]:
    """The version words of a pin ("prime-rl 559b447 (0.8.0)" -> 559b447, 0.8.0)."""
    return re.findall(r"\b(?:[0-9a-f]{7}|\d+\.\d+(?:\.\d+)?)\b", pin)


def test_version_and_help_name_every_registered_target() -> None:
    version, top, compile_help = whileai("--version"), whileai("--help"), whileai("compile", "--help")
    for name in registry.names():
        assert registry.get(name).pin in version, (name, version)
        assert name in top, (name, top)
        assert name in compile_help, (name, compile_help)


def test_a_target_registered_at_run_time_is_named_by_version_and_help() -> None:
    assert "toy 0.0.1" in whileai("--version", toy=True)
    assert "toy" in whileai("--help", toy=True).split("COMMAND")[-1].split("Options")[0]
    assert "toy" not in whileai("--help").split("Options")[0]


def test_the_readme_table_has_a_row_for_every_target_with_its_pin() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Targets"):].split("\n\n")[1]
    rows = {re.match(r"\| \[([^\]]+)\]", r).group(1).lower(): r  # type: ignore[union-attr]
            for r in table.splitlines()[2:]}
    assert set(rows) == set(registry.names()), (sorted(rows), registry.names())
    for name in registry.names():
        pin = registry.get(name).pin
        assert versions(pin) and all(v in rows[name] for v in versions(pin)), (name, pin, rows[name])


def test_layout_doc_names_every_target_package() -> None:
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    for name, module in registry.TARGETS.items():
        package = module.rsplit(".", 1)[0].replace(".", "/")
        assert f"{package}/" in text or f"{package.split('/')[-1]}/" in text, (name, package)


def test_the_readme_rehearse_row_names_the_rehearsable_targets() -> None:
    """The README's `whileai rehearse` row names each target with a rehearsal hook and no other."""
    row = next(line for line in (ROOT / "README.md").read_text().splitlines()
               if line.startswith("| `whileai rehearse"))
    for name in registry.names():
        assert (name in row) == (registry.get(name).rehearsal is not None), (name, row)
