"""Target key paths: one key, one display form, everywhere; malformed keys are one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
from helpers import EXAMPLES, seed_run
from typer.testing import CliRunner

import whileai as wai
from whileai.catalogs import paths
from whileai.cli.app import app
from whileai.report.render import explain_rows
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": "250"})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("key,segs", [
    ("a.source[0].b", ("a", "source", 0, "b")), ("a.source.0.b", ("a", "source", 0, "b")),
    ("a[0][1]", ("a", 0, 1)), ("x", ("x",)), ("env.HF-HOME", ("env", "HF-HOME")),
    ("env.émoji😀", ("env", "émoji😀")), ("0.a", ("0", "a")),
])
def test_parse_and_one_display_form(key: str, segs: tuple) -> None:
    assert paths.parse(key) == segs
    assert paths.parse(paths.join(segs)) == segs
    assert paths.canonical("a.source.0.b") == paths.canonical("a.source[0].b") == "a.source[0].b"


@pytest.mark.parametrize("key,why", [
    ("a..b", "empty segment"), ("a]", "unexpected ']'"), ("a[", "unexpected '['"),
    ("a.[0]", "must follow a name"), ("", "empty key"), (".a", "empty segment"),
    ("a.", "at the end"), ("[0]", "must follow a name"), ("a b", "unexpected ' '"),
    ("a[99999]", "over 1023"), ("a\nb", "unexpected '\\\\n'"), ("a[0]b", "must follow a '.'"),
])
def test_malformed_keys_name_the_key(key: str, why: str) -> None:
    with pytest.raises(wai.SpecError) as e:
        paths.parse(key)
    assert "malformed key" in str(e.value) and "\n" not in str(e.value)
    assert why.replace("\\\\", "\\") in str(e.value)


def test_value_and_table_at_once_is_refused_in_the_spec_and_in_set(tmp_path: Path) -> None:
    with pytest.raises(wai.SpecError, match="sets a key inside inference.vllm.x"):
        seed_run("grpo", overrides={"inference.vllm.x": 2, "inference.vllm.x.y": 1})
    with pytest.raises(wai.SpecError, match="given twice"):
        seed_run("grpo", overrides={"a.source.0.b": 1, "a.source[0].b": 2})
    code, _, err = cli("compile", str(EXAMPLES / "grpo.toml"), "--set", "inference.vllm.x=2",
                       "--set", "inference.vllm.x.y=1")
    assert code == 2 and err.startswith("error: --set inference.vllm.x.y:") and err.count("\n") == 1
    spec = tmp_path / "s.toml"
    spec.write_text((EXAMPLES / "grpo.toml").read_text() + "\n[overrides]\n'inference.vllm.x' = 2\n")
    code, _, err = cli("compile", str(spec), "--set", "inference.vllm.x.y=1")
    assert code == 2 and "inference.vllm.x" in err


def test_both_spellings_write_the_same_key_and_report_the_display_form() -> None:
    a = prime_rl.compile(seed_run("grpo", overrides={"orchestrator.train.source.0.ratio": 0.5}))
    b = prime_rl.compile(seed_run("grpo", overrides={"orchestrator.train.source[0].ratio": 0.5}))
    assert a.text == b.text
    assert tomllib.loads(a.text)["orchestrator"]["train"]["source"][0]["ratio"] == 0.5
    assert "overrides.orchestrator.train.source[0].ratio -> orchestrator.train.source[0].ratio" in str(a)
    code, out, _ = cli("compile", str(EXAMPLES / "grpo.toml"), "--json", "--set",
                       "orchestrator.train.source.0.ratio=0.5")
    assert code == 0 and '"orchestrator.train.source[0].ratio"' in out


def test_suggestions_use_the_display_form() -> None:
    near = prime_rl_catalog().suggest("orchestrator.train.source[0].nmae")
    assert "orchestrator.train.source[0].name" in near
    with pytest.raises(wai.SpecError, match=r"did you mean 'orchestrator\.train\.source\[0\]\.name'"):
        prime_rl.compile(seed_run("grpo", overrides={"orchestrator.train.source.0.nmae": "x"}))


def test_list_items_are_added_one_at_a_time() -> None:
    doc: dict = {"a": [{"x": 1}]}
    paths.set_path(doc, "a[1].y", 2)
    assert doc == {"a": [{"x": 1}, {"y": 2}]}
    with pytest.raises(wai.SpecError, match="set \\[2\\] before \\[5\\]"):
        paths.set_path(doc, "a[5].y", 2)
    with pytest.raises(wai.SpecError, match="needs it to be a table"):
        paths.set_path({"m": 1}, "m.x", 2)
    assert paths.get_path({"o": 1}, "o.train.source[0]", "d") == "d"  # never a TypeError


def test_explain_shows_each_key_once_with_the_override_that_replaced_a_default() -> None:
    c = prime_rl.compile(seed_run("grpo", overrides={"orchestrator.renderer.name": "qwen3",
                                                     "trainer.optim.lr": 1e-5}))
    rows = explain_rows(c)
    keys = [k for k, _, _ in rows]
    assert len(keys) == len(set(keys))
    renderer = next(r for r in rows if r[0] == "orchestrator.renderer.name")
    assert renderer[1] == "qwen3" and "override" in renderer[2] and "'prime-qwen3'" in renderer[2]
    assert all(f.path != "orchestrator.renderer.name" for f in c.fixed)  # the replaced default left
    lr = next(r for r in rows if r[0] == "trainer.optim.lr")
    assert lr[1] == 1e-5 and "learning_rate" in lr[2]
    algo = [r for r in rows if r[0] == "orchestrator.algo.type"]
    assert len(algo) == 1
    code, out, _ = cli("explain", str(EXAMPLES / "grpo.toml"), "--set",
                       "orchestrator.renderer.name=qwen3")
    lines = [ln for ln in out.splitlines() if ln.startswith("orchestrator.renderer.name")]
    assert code == 0 and len(lines) == 1 and "'qwen3'" in lines[0]
