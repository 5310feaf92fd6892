"""run.sh read by the real consumers, not by whileai's own reader: bash runs it (python3 and
torchrun replaced by an argv recorder) and Hydra's own override grammar (hydra-core's
OverridesParser, the parser verl's @hydra.main hands its argv to) parses each override. Every value
must come back equal to the one whileai compiled (`Compiled.doc`), on values holding quotes,
backslashes, spaces, `$`, `=`, commas and brackets, in a folder whose name holds a space and a `'`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import TEACHER
from test_paths_quoted import bash_argv

import whileai as wai
from whileai.targets.verl.compile import compile
from whileai.targets.verl.script import overrides_of
from whileai.targets.verl.values import INTERPOLATION, parse_value

parser = pytest.importorskip("hydra.core.override_parser.overrides_parser",
                             reason="needs hydra-core (the [dev] extra): Hydra's own override grammar")
pytestmark = pytest.mark.real_tool

# each a value Hydra or bash would split, retype, expand or unescape if written unquoted or escaped
# the wrong way: Hydra unescapes a backslash only before a quote or the closing quote
TRICKY = ["it's", 'say "hi"', "a\\b", "ends\\", "x\\'y", 'q\\"', "two  spaces", " lead",
          "$HOME $(id) `id` ${oc.env:HOME}", "k=v,w", "[a]", "{a: b}", "1e-3", "True", "null", "a!b"]


def written(run: wai.RunSpec, folder: Path) -> wai.Compiled:
    c = compile(run, out=str(folder))
    for name, text in c.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return c


def hydra_values(argv: list[str]) -> dict[str, Any]:
    """The overrides after `-m verl.<module>` as Hydra parses them: key -> value."""
    parsed = parser.OverridesParser.create().parse_overrides(argv[argv.index("-m") + 2:])
    return {o.key_or_group: o.value() for o in parsed}


def expected(doc: dict[str, Any], folder: Path) -> dict[str, Any]:
    """whileai's values, `$PWD/x` as bash expands it in run.sh's folder."""
    def here(v: Any) -> Any:
        return str(folder) + v[4:] if isinstance(v, str) and v.startswith("$PWD/") else v
    return {k: (list(v) if isinstance(v, tuple) else here(v)) for k, v in overrides_of(doc)}


def verl_calls(folder: Path, tmp_path: Path) -> list[list[str]]:
    return [a for a in bash_argv(folder, tmp_path) if "-m" in a and a[a.index("-m") + 1].startswith("verl.")]


def spec(kind: str, value: str, **fields: Any) -> wai.RunSpec:
    teacher = {"url": "http://localhost:8001/v1", "model": TEACHER}
    method = {"type": kind} | ({"teacher": teacher} if kind in ("opd", "sft") else {})
    return wai.RunSpec.model_validate({"taskset": "reverse-text", "model": f"/models/{value}/student",
                                       "method": method} | fields)


@pytest.mark.parametrize("value", TRICKY)
@pytest.mark.parametrize("kind", ["grpo", "opd"])
def test_bash_and_hydras_grammar_hand_verl_the_values_whileai_compiled(kind, value, tmp_path):
    sets = {"trainer.experiment_name": value, "actor_rollout_ref.model.override_config": {"k": value},
            "actor_rollout_ref.model.target_modules": [value, "q_proj"]}
    folder = tmp_path / "it's a run"
    c = written(spec(kind, value, overrides=sets), folder)
    [argv] = verl_calls(folder, tmp_path)
    got, want = hydra_values(argv), expected(c.doc, folder)
    assert got == {k.lstrip("+"): v for k, v in want.items()}, (got, want)
    assert got["trainer.experiment_name"] == value
    assert got["actor_rollout_ref.model.path"] == f"/models/{value}/student"
    assert got["actor_rollout_ref.model.target_modules"] == [value, "q_proj"]


@pytest.mark.parametrize("value", TRICKY)
def test_both_commands_of_an_sft_run_sh_hand_verl_the_values_whileai_compiled(value, tmp_path):
    sets = {"sft.trainer.experiment_name": value, "generate.data.prompt_key": value}
    folder = tmp_path / "it's a run"
    c = written(spec("sft", value, overrides=sets), folder)
    generate, train = verl_calls(folder, tmp_path)
    assert hydra_values(generate) == expected(c.doc["generate"], folder)
    assert hydra_values(train) == expected(c.doc["sft"], folder)
    assert hydra_values(train)["trainer.experiment_name"] == value


@pytest.mark.parametrize("value", TRICKY)
def test_whileais_reader_types_each_written_value_as_hydra_does(value, tmp_path):
    """values.parse_value (whileai check's reader) agrees with Hydra on what bash hands over."""
    folder = tmp_path / "run"
    written(spec("grpo", value, overrides={"trainer.experiment_name": value}), folder)
    [argv] = verl_calls(folder, tmp_path)
    words = dict(o.lstrip("+").split("=", 1) for o in argv[argv.index("-m") + 2:])
    got = hydra_values(argv)
    for key in ("trainer.experiment_name", "actor_rollout_ref.model.path"):
        typed = parse_value(words[key])  # a `$` in it: a shell variable or interpolation, left to verl
        assert typed == got[key] or ("$" in value and typed is INTERPOLATION), (key, typed)
