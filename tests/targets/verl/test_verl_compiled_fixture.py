"""verl 0.9.1's own verdict on the run.sh whileai compiles, replayed offline.

tests/fixtures/verl/compiled.json is written by `python scripts/gen_verl_fixture.py --verl-python
PY --compiled-only` (PY: a Python with verl 0.9.1; docs/verl.md): each spec (the bundled examples
and the hidden-style specs under tests/fixtures/verl/specs/) compiled with `whileai compile -b
verl`, then every verl command of its run.sh composed and checked by verl itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.targets.verl.compile import compile

ROOT = Path(__file__).resolve().parents[3]
RECORD = json.loads((ROOT / "tests" / "fixtures" / "verl" / "compiled.json").read_text())
REGENERATE = "regenerate: python scripts/gen_verl_fixture.py --verl-python PY --compiled-only"
RUNS = [r for r in RECORD["compiled"] if "spec" in r]


@pytest.mark.parametrize("entry", RUNS, ids=lambda r: r["spec"])
def test_the_recorded_run_sh_is_what_whileai_compiles_today(entry):
    try:
        c = compile(load_spec(ROOT / entry["spec"]))
    except SpecError as e:
        assert not entry["whileai"]["accepted"], f"{entry['spec']}: {e}; {REGENERATE}"
        assert str(e).split(";")[0] in entry["whileai"]["error"]
        return
    assert entry["whileai"]["accepted"], REGENERATE
    assert c.files["run.sh"] == entry["run_sh"], f"{entry['spec']}: run.sh changed; {REGENERATE}"


@pytest.mark.parametrize("entry", [r for r in RUNS if "verl" in r], ids=lambda r: r["spec"])
def test_the_record_has_verl_accepting_every_command_whileai_compiled(entry):
    """Reads the record back; test_the_recorded_run_sh_is_what_whileai_compiles_today holds it to
    today's run.sh, so the two together replay verl's verdict on what whileai compiles now."""
    kinds = [v["kind"] for v in entry["verl"]]
    assert kinds in (["main_ppo"], ["main_generation_server", "sft_trainer"])
    for v in entry["verl"]:
        assert v["accepted"], (f"{entry['spec']}:{v['line']}: verl refuses {v['kind']} at "
                               f"{v['step']}: {v['error']}")


def test_the_record_covers_the_bundled_arms_and_the_hidden_style_specs():
    specs = {r["spec"] for r in RUNS}
    assert {"examples/grpo.toml", "examples/opd.toml", "examples/sft.toml"} <= specs
    assert len([s for s in specs if s.startswith("tests/fixtures/verl/specs/")]) >= 4
    [opsd] = [r for r in RUNS if r["spec"] == "examples/opsd.toml"]
    assert not opsd["whileai"]["accepted"] and "#6827" in opsd["whileai"]["error"]
    assert RECORD["meta"]["accepted"] == RECORD["meta"]["compiled"] == len([r for r in RUNS if "verl" in r])
