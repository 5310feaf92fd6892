"""`import whileai` and `whileai compile` never import torch, transformers, trl or modal."""

from __future__ import annotations

import subprocess
import sys

from helpers import EXAMPLES

HEAVY = ("torch", "transformers", "trl", "modal", "numpy", "scipy", "matplotlib", "datasets")


def modules_after(code: str, *, full: bool = False) -> set[str]:
    probe = code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    import json

    names = json.loads(out.stdout.strip().splitlines()[-1])
    return set(names) if full else {m.split(".")[0] for m in names}


def test_import_is_light() -> None:
    loaded = modules_after("import whileai")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_compile_is_light(tmp_path) -> None:  # type: ignore[no-untyped-def]
    specs = [str(EXAMPLES / f"{k}.toml") for k in ("grpo", "opsd", "opd")]
    code = (
        "import sys\nfrom whileai.cli.app import app\n"
        f"sys.argv = ['whileai', 'compile', *{specs!r}, '-o', {str(tmp_path)!r}]\n"
        "try:\n    app()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
    )
    loaded = modules_after(code)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    code_trl = code.replace("'compile',", "'compile', '--backend', 'trl',").replace(
        str(tmp_path), str(tmp_path / "trl"))
    loaded = modules_after(code_trl)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    # no tokenizer files here (tests use an empty HF cache): no comparison, no `tokenizers`
    loaded = modules_after(code.replace(str(tmp_path), str(tmp_path / "again")), full=True)
    assert "whileai.vocab.files" in loaded and not {"whileai.vocab.compare", "tokenizers", "jinja2"} & loaded


def test_inspect_against_endpoints_is_light(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The endpoint form needs no torch: stdlib HTTP only (here the server is unreachable)."""
    code = (
        "import sys\nfrom whileai.cli.app import app\n"
        f"sys.argv = ['whileai', 'inspect', {str(EXAMPLES / 'opd.toml')!r}, '--student-endpoint', "
        f"'http://127.0.0.1:9/v1', '-o', {str(tmp_path / 'out')!r}]\n"
        "try:\n    app()\nexcept SystemExit as e:\n    assert e.code == 2, e.code\n"
    )
    loaded = modules_after(code)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
