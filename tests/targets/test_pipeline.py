"""The one compile skeleton (whileai.targets.pipeline): a target supplies its steps, the pipeline
runs them in its order, the report is named after the target object, and the overrides go
through the shared engine with the target's catalogue adapter."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import seed_run

from whileai.errors import SpecError
from whileai.rules.base import Rule
from whileai.rules.facts import Facts
from whileai.spec.run import RunSpec
from whileai.targets import overrides as ov
from whileai.targets.compiled import Fixed
from whileai.targets.fieldmap import Row, To
from whileai.targets.pipeline import Emitted, Steps, compile_run


class Keys:
    """An adapter that knows two keys; `plus` is written as an addition."""

    def check(self, path: str, value: Any) -> bool:
        if path not in ("steps", "plus"):
            raise SpecError(f"overrides.{path}", value, "steps or plus")
        return path == "plus"


class Recorder(Steps):
    rules = [Rule("pipeline-own", "always", "this test", lambda run, f: "own rule fired")]

    def __init__(self) -> None:
        self.seen: list[str] = []

    def refuse(self, run: RunSpec) -> None:
        self.seen.append("refuse")

    def rows(self, run: RunSpec) -> Sequence[Row]:
        self.seen.append("rows")
        return [To("steps", "steps"), To("model", "<a line>")]

    def story(self) -> Any:
        return lambda run: {"steps": run.steps}

    def derive(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        self.seen.append("derive")
        doc["epochs"] = 1
        return [Fixed(path="epochs", value=1, reason="derived before the overrides")]

    def keys(self) -> ov.OverrideKeys:
        self.seen.append("keys")
        return Keys()

    def settle(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        self.seen.append("settle")
        return []

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        self.seen.append("check")
        self.added = added

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        self.seen.append("emit")
        return Emitted(files={"f": str(doc)}, main="f", commands=("go",))

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        self.seen.append("facts")
        return Facts(steps=doc["steps"])


TARGET = SimpleNamespace(name="pipeline-test", pin="pipeline 0.0.0")


def test_the_steps_run_in_order_and_the_name_comes_from_the_target_object() -> None:
    steps = Recorder()
    run = seed_run("grpo", overrides={"plus": 3})
    c = compile_run(TARGET, run, steps)
    assert steps.seen == ["refuse", "rows", "derive", "keys", "settle", "check", "emit", "facts"]
    assert (c.target, c.pin, c.main, c.commands) == ("pipeline-test", "pipeline 0.0.0", "f", ("go",))
    assert c.doc == {"steps": run.steps, "epochs": 1, "plus": 3}  # `<...>` rows are not file keys
    assert steps.added == {"plus"}  # the adapter's verdict: written as an addition
    assert "pipeline-own" in {w.rule for w in c.warnings}  # the target's own rules run too
    assert [f.path for f in c.fixed] == ["epochs"] and c.facts.steps == run.steps


def test_an_override_replacing_a_derived_value_and_an_unknown_key() -> None:
    c = compile_run(TARGET, seed_run("grpo", overrides={"steps": 7}), Recorder())
    assert c.doc["steps"] == 7 and c.facts.steps == 7
    assert any(r.field == "overrides.steps" and "replaces" in r.note for r in c.reads)
    with pytest.raises(SpecError, match="overrides.nope"):
        compile_run(TARGET, seed_run("grpo", overrides={"nope": 1}), Recorder())


def test_the_engine_applies_only_the_keys_under_a_prefix() -> None:
    doc: dict[str, Any] = {}
    added = ov.apply_overrides(doc, {"a.plus": 1, "b.steps": 2}, Keys(), prefix="a.")
    assert doc == {"a": {"plus": 1}} and added == {"a.plus"}
