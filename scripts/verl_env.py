"""verl 0.9.1's own Python for the tests that run verl's code, made the way the docs say.

    python scripts/verl_env.py DIR      # prints DIR/bin/python once it imports verl's pieces

verl's extra pins transformers below 5.11, TRL's above it, so verl gets a venv of its own (the
README, "Quick start"; docs/verl.md, "verl's own check"). The commands are the ones
`whileai rehearse --setup DIR -t verl` prints (whileai/targets/verl/rehearse/env.py SETUP, read
here as text: whileai need not be importable yet), run in order, plus whileai's own dependencies
(pyproject.toml), which `whileai check` needs when the tests run it with verl's Python. A DIR whose
python already imports every module the rehearsal needs (env.py NEEDS) is reused as it is.
`.ci/run` makes one and hands it to the suite as WHILEAI_VERL_PYTHON.
"""

from __future__ import annotations

import ast
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / "whileai" / "targets" / "verl" / "rehearse" / "env.py"


def constants() -> dict[str, object]:
    """SETUP and NEEDS from env.py's text."""
    tree = ast.parse(ENV.read_text(encoding="utf-8"))
    return {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name) and t.id in ("SETUP", "NEEDS")}


def commands(venv: Path) -> list[str]:
    """SETUP's commands for `venv`, each a line: this Python makes the venv, its pip installs; the
    closing `export` (for a person's shell) is left out."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    text = str(constants()["SETUP"]).replace("\\\n", " ")
    pip = shlex.quote(str(venv / "bin" / "pip"))
    out = [f"{shlex.quote(sys.executable)} -m venv {shlex.quote(str(venv))}"]
    for line in text.splitlines()[1:]:
        line = line.split("  #", 1)[0].strip()
        if line.startswith("pip install"):
            out.append(pip + line.removeprefix("pip"))
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    out.append(f"{pip} install " + " ".join(shlex.quote(d) for d in deps))
    return out


def ready(python: Path) -> bool:
    needs = [str(n) for n in constants()["NEEDS"]]  # type: ignore[attr-defined]
    return python.exists() and subprocess.run(
        [str(python), "-c", "import " + ", ".join(needs)], capture_output=True).returncode == 0


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    venv = Path(sys.argv[1]).absolute()
    python = venv / "bin" / "python"
    if not ready(python):
        for cmd in commands(venv):
            print(f"+ {cmd}", file=sys.stderr, flush=True)
            subprocess.run(cmd, shell=True, check=True, stdout=sys.stderr)  # stdout: the python alone
        if not ready(python):
            print(f"error: {python} does not import {', '.join(map(str, constants()['NEEDS']))}",  # type: ignore[call-overload]
                  file=sys.stderr)
            return 1
    print(python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
