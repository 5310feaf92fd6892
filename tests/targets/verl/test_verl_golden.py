"""Golden run directories for the bundled examples verl can run (examples/grpo.toml, opd.toml,
sft.toml; opsd.toml is refused). `WHILEAI_UPDATE_GOLDEN=1 pytest tests/targets/verl` rewrites them."""

from __future__ import annotations

import hashlib

import pytest
from helpers import EXAMPLES, ROOT, golden

from whileai.report.text import render_text
from whileai.spec.load import load_spec
from whileai.targets.verl.compile import compile

GOLDEN = ROOT / "tests" / "golden" / "verl"


@pytest.mark.parametrize("kind", ["grpo", "opd", "sft"])
def test_golden_bundled_examples(kind: str) -> None:
    c = compile(load_spec(EXAMPLES / f"{kind}.toml"))
    for name, text in sorted(c.files.items()):
        if name.startswith("data/"):  # the rows: their count, digest and first row
            digest = hashlib.sha256(text.encode()).hexdigest()
            text = f"{len(text.splitlines())} rows, sha256 {digest}\n" + text.split("\n", 1)[0] + "\n"
            name += ".digest"
        golden(GOLDEN / kind / name, text)
    golden(GOLDEN / kind / "report.txt", render_text(c, 100) + "\n")
    assert sorted(p.relative_to(GOLDEN / kind).as_posix() for p in (GOLDEN / kind).rglob("*")
                  if p.is_file()) == sorted([*(n + ".digest" if n.startswith("data/") else n
                                               for n in c.files), "report.txt"])
