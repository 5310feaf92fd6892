"""verl's Python for the rehearsal: found (--python, $WHILEAI_VERL_PYTHON, or this one), checked
before any work (verl at the pin and the modules the steps import), and the commands that make
one (`whileai rehearse --setup DIR -t verl`; docs/rehearse.md shows the same SETUP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ENV = "WHILEAI_VERL_PYTHON"
MODULE = "whileai.targets.verl.rehearse.inside"
NEEDS = ("verl", "ray", "hydra", "omegaconf", "torch", "transformers", "datasets", "cachetools",
         "aiohttp", "pandas", "pyarrow")
SETUP = """python3.11 -m venv VENV && . VENV/bin/activate
pip install torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu
pip install --no-deps verl==0.9.1
pip install hydra-core omegaconf numpy "tensordict>=0.10,<0.11" ray cachetools aiohttp \\
    "transformers>=5.5.3,<5.11,!=5.6.0" codetiming datasets pillow pyarrow pandas \\
    torchdata peft uvicorn fastapi
pip install pydantic tomlkit      # whileai's own pieces the rehearsal imports there
export WHILEAI_VERL_PYTHON=VENV/bin/python"""


def find_python(flag: str | None) -> str:
    """--python (a python, or a venv / folder holding bin/python), else $WHILEAI_VERL_PYTHON, else
    this interpreter when it imports verl; else a SpecError with the setup command (exit 2)."""
    from whileai.errors import SpecError

    given = flag or os.environ.get(ENV)
    if given:
        p = Path(given)
        p = p / "bin" / "python" if p.is_dir() else p
        if not p.is_file():
            raise SpecError("--python" if flag else ENV, given, "verl's python (or its venv): "
                            "see `whileai rehearse --setup DIR -t verl`")
        return str(p)
    from whileai.targets.verl.check import available

    if available():
        return sys.executable
    raise SpecError("--python", None, f"verl's python: --python PATH or ${ENV}; this Python has no "
                    "verl (docs/rehearse.md, 'verl': the setup command)")


def usable(python: str, flag: str | None) -> str:
    """The python, when it has verl at the pin and every module the rehearsal needs (checked
    before any folder is made: a second or so); else a SpecError naming what it lacks (exit 2)."""
    from whileai.errors import SpecError
    from whileai.targets.verl.pin import VERSION

    got = probe(python)
    lacks = [m for m in got["missing"] if m != "verl"]
    if got["verl"] != VERSION or lacks:
        has = f"verl {got['verl']}" if got["verl"] else "no verl"
        raise SpecError("--python" if flag else ENV, python,
                        f"a Python with verl=={VERSION} and {', '.join(NEEDS[1:])} ({has}"
                        + (f"; lacks {', '.join(lacks)}" if lacks else "") + "): `whileai rehearse "
                        "--setup DIR -t verl` prints the commands that make one")
    return python


def probe(python: str) -> dict[str, Any]:
    """What verl's python has: verl's version and the modules the rehearsal needs that it lacks."""
    code = ("import importlib.util, json, sys\n"
            f"need = {list(NEEDS)!r}\n"
            "missing = [m for m in need if importlib.util.find_spec(m) is None]\n"
            "v = None\n"
            "if 'verl' not in missing:\n"
            "    import importlib.metadata as md\n"
            "    v = md.version('verl')\n"
            "print(json.dumps({'verl': v, 'missing': missing, 'python': sys.version.split()[0]}))\n")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": root()})
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"verl": None, "missing": list(NEEDS), "python": None}


def setup(folder: Path, python: str | None) -> tuple[list[str], bool]:
    """`--setup DIR -t verl`: DIR is verl's environment (a venv, or its python); says what it has."""
    from whileai.targets.verl.pin import VERSION

    candidate = python or str(folder)
    p = Path(candidate)
    p = p / "bin" / "python" if p.is_dir() else p
    if not p.is_file():
        return [f"no python at {p}: make verl's environment there with", *SETUP.replace(
            "VENV", str(folder)).splitlines()], False
    got = probe(str(p))
    lines = [f"python: {p} (Python {got.get('python')})",
             f"verl: {got.get('verl') or 'not installed'} (the pin: {VERSION})"]
    ok = got.get("verl") == VERSION and not got.get("missing")
    if got.get("missing"):
        lines.append("missing: " + ", ".join(got["missing"]))
    if not ok:
        lines += ["set it up with:", *SETUP.replace("VENV", str(folder)).splitlines()]
    else:
        lines.append(f"ok: rehearse with --python {p} (or {ENV}={p})")
    return lines, ok


def root() -> str:
    """The folder holding this whileai package: verl's python imports the rehearsal from it
    (this file is whileai/targets/verl/rehearse/env.py)."""
    return str(Path(__file__).resolve().parents[4])
