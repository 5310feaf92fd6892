"""Issue 8's spec additions: taskset_args, roles, eval.enabled/taskset/taskset_args, [checkpoint];
the honest holdout; renderers from the package's data. Both backends, and bad input."""

from __future__ import annotations

from typing import Any

import pytest
import tomllib

import whileai as wai
from whileai.errors import SpecError
from whileai.spec.load import build
from whileai.spec.run import RunSpec
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.check import check_document
from whileai.targets.prime_rl.renderer import choose
from whileai.targets.trl import compile as trl

MODEL = "Qwen/Qwen3-0.6B"


def spec(taskset: str = "reverse-text", **fields: Any) -> RunSpec:
    return build(RunSpec, {"taskset": taskset, "model": MODEL, "method": {"type": "grpo"}, **fields})


def doc(run: RunSpec) -> dict[str, Any]:
    out: dict[str, Any] = tomllib.loads(prime_rl.compile(run).text)
    assert check_document(out) == []
    return out


def sources(d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    o = d["orchestrator"]
    return o["train"]["source"][0], (o["eval"]["source"][0] if "eval" in o else None)


def test_taskset_args_reach_both_sources_and_eval_args_override() -> None:
    train, evals = sources(doc(spec("alphabet-sort", taskset_args={"min_turns": 3, "task": {
        "power_per_turn": False}}, eval={"taskset_args": {"min_turns": 5}})))
    assert train["env"]["taskset"] == {"id": "alphabet-sort", "min_turns": 3,
                                       "task": {"power_per_turn": False}}
    assert evals is not None
    assert evals["env"]["taskset"] == {"id": "alphabet-sort", "min_turns": 5,
                                       "task": {"power_per_turn": False}}


@pytest.mark.parametrize("fields,field,words", [
    ({"taskset_args": {"min_turn": 3}}, "taskset_args.min_turn", "did you mean 'min_turns'"),
    ({"taskset_args": {"split": "test"}}, "taskset_args.split", "must be 'train'"),
    ({"taskset_args": {"id": "gsm8k"}}, "taskset_args.id", "the taskset field names"),
    ({"eval": {"taskset_args": {"max_turn": 3}}}, "eval.taskset_args.max_turn", "did you mean"),
    ({"eval": {"taskset": "gsm8k", "taskset_args": {"min_turns": 3}}}, "eval.taskset_args.min_turns",
     "an argument of gsm8k"),
    ({"roles": ["agent"]}, "roles", "come from the pinned taskset catalogue"),
])
def test_taskset_tables_are_checked_against_the_catalogue(fields: dict, field: str, words: str) -> None:
    with pytest.raises(SpecError) as e:
        spec("alphabet-sort", **fields)
    assert e.value.field == field and words in str(e.value)


@pytest.mark.parametrize("fields,field", [
    ({"taskset_args": {"key": "sk-live-0123456789abcdef"}}, "taskset_args.key"),
    ({"taskset_args": {"password": "hunter2"}}, "taskset_args.password"),
    ({"taskset_args": {"port": 70000}}, "taskset_args.port"),
    ({"eval": {"taskset_args": {"a": {"token": "abc"}}}}, "eval.taskset_args.a.token"),
    ({"roles": ["player\n"]}, "roles"),
    ({"roles": ["p", "p"]}, "roles"),
    ({"eval": {"taskset": "Bad Id"}}, "eval.taskset"),
    ({"checkpoint": {"interval": 0}}, "checkpoint.interval"),
    ({"checkpoint": {"keep_last": 10**12}}, "checkpoint.keep_last"),
    ({"eval": {"enabled": "no"}}, "eval.enabled"),
])
def test_new_fields_are_hardened_like_the_others(fields: dict, field: str) -> None:
    with pytest.raises(SpecError) as e:
        spec("my-org/my-env@1", **fields)
    assert e.value.field.startswith(field), e.value
    assert "0123456789abcdef" not in str(e.value) and "hunter2" not in str(e.value)


def test_a_null_argument_from_python_is_refused() -> None:
    with pytest.raises(SpecError, match="TOML has no null"):
        wai.RunSpec(taskset="gsm8k", model=MODEL, method=wai.GRPO(), taskset_args={"split": None})


def test_roles_come_from_the_catalogue_or_the_spec() -> None:
    for taskset, roles in [("wordle", {"player"}), ("kuhn-poker", {"player0", "player1"}),
                           ("proposer-solver", {"proposer", "solver"}), ("code-golf", {"golfer"})]:
        train, _ = sources(doc(spec(taskset)))
        assert set(train["env"]) == {"taskset"} | roles, taskset
    c = prime_rl.compile(spec("my-org/my-game@0.2", roles=["white", "black"]))
    train, evals = sources(tomllib.loads(c.text))
    assert set(train["env"]) == set(evals["env"]) == {"taskset", "white", "black"}  # type: ignore[index]
    assert train["env"]["black"] == {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    assert {w.rule for w in c.warnings} >= {"taskset-unchecked"}
    assert any(r.field == "roles" for r in c.reads)


def test_bundled_harnesses_are_left_to_the_taskset() -> None:
    train, _ = sources(doc(spec("web-search-interception")))
    assert train["env"]["agent"] == {"runtime": {"type": "subprocess"}}


def test_eval_off_writes_no_eval_table_for_either_backend() -> None:
    run = spec(eval={"enabled": False, "interval": 5})
    c = prime_rl.compile(run)
    assert "eval" not in tomllib.loads(c.text)["orchestrator"]
    assert {i.field for i in c.ignores} >= {"eval.interval", "eval.examples"}
    assert "eval-never-runs" in {w.rule for w in c.warnings}
    t = trl.compile(run)
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load(t.files["config.yaml"])
    assert config["eval_strategy"] == "no" and "eval_steps" not in config


def test_checkpoints_for_both_backends() -> None:
    yaml = pytest.importorskip("yaml")
    off = spec(checkpoint={"enabled": False, "interval": 5})
    assert "ckpt" not in doc(off)
    assert yaml.safe_load(trl.compile(off).files["config.yaml"])["save_strategy"] == "no"
    on = spec(steps=40, checkpoint={"interval": 10, "keep_last": 2})
    assert doc(on)["ckpt"] == {"interval": 10, "keep_last": 2}
    config = yaml.safe_load(trl.compile(on).files["config.yaml"])
    assert (config["save_strategy"], config["save_steps"], config["save_total_limit"]) == ("steps", 10, 2)
    end = yaml.safe_load(trl.compile(spec(steps=40)).files["config.yaml"])
    assert (end["save_strategy"], end["save_steps"]) == ("steps", 40)  # one, at the last step
    assert doc(spec())["ckpt"] == {}


def test_eval_taskset_is_a_different_holdout() -> None:
    c = prime_rl.compile(spec(eval={"taskset": "gsm8k", "taskset_args": {"split": "test"}}))
    train, evals = sources(tomllib.loads(c.text))
    assert evals is not None and evals["name"] == "gsm8k"
    assert evals["env"]["taskset"] == {"id": "gsm8k", "split": "test"}
    assert train["env"]["taskset"] == {"id": "reverse-text"}
    assert "holdout-is-training-data" not in {w.rule for w in c.warnings}


def test_splits_follow_the_catalogue_and_respect_the_user() -> None:
    train, evals = sources(doc(spec("gsm8k")))
    assert (train["env"]["taskset"]["split"], evals["env"]["taskset"]["split"]) == ("train", "test")  # type: ignore[index]
    train, evals = sources(doc(spec("gsm8k", taskset_args={"split": "test"})))
    assert (train["env"]["taskset"]["split"], evals["env"]["taskset"]["split"]) == ("test", "test")  # type: ignore[index]
    c = prime_rl.compile(spec("gsm8k"))
    notes = {r.path: r.note for r in c.reads}
    assert "trains on 'train'" in notes["orchestrator.train.source[0].env.taskset.split"]
    assert "held-out" in notes["orchestrator.eval.source[0].env.taskset.split"]


@pytest.mark.parametrize("model,table,origin", [
    ("Qwen/Qwen3-8B", {"name": "qwen3"}, "exact map entry"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", {"name": "default", "reasoning_parser": "think"},
     "the package's rule"),
    ("someone/DeepSeek-R1-Distill-Llama-8B-ft", {"name": "default", "reasoning_parser": "think"},
     "the package's rule"),
    ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", {"name": "prime-qwen3"}, "base model of a fine-tune"),
    ("someone/Qwen3-1.7B-math", {"name": "qwen3"}, "base model of a fine-tune"),
    ("meta-llama/Llama-3.1-8B-Instruct", {"name": "default"}, "chat-template fallback"),
])
def test_renderer_choices_say_where_they_came_from(model: str, table: dict, origin: str) -> None:
    choice = choose(model)
    assert (choice.table, choice.origin) == (table, origin)
    c = prime_rl.compile(wai.RunSpec(taskset="gsm8k", model=model, method=wai.OPSD()))
    d = tomllib.loads(c.text)
    assert d["orchestrator"]["renderer"] == table == d["orchestrator"]["algo"]["renderer"]
    assert any(r.path == "orchestrator.renderer.name" and r.note.startswith(origin) for r in c.reads)
