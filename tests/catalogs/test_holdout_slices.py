"""A true holdout: a dataset read with load_dataset(split=...) takes Hugging Face's split slicing,
so 'train[:90%]' and 'train[90%:]' are rows apart; the bundled examples train on one and evaluate
on the other, and the honest-holdout warning's fix names that slice (which exists) first."""

from __future__ import annotations

import pytest
from helpers import EXAMPLES

import whileai as wai
from whileai.catalogs import tasksets as tc
from whileai.spec.load import load_spec


@pytest.mark.parametrize(("a", "b", "shared"), [
    ("train", "train", True), ("train", "train[90%:]", True), ("train[:90%]", "train[90%:]", False),
    ("train[:90%]", "train[89%:]", True), ("train[:1000]", "train[1000:]", False),
    ("train[:1000]", "train[90%:]", True),  # units mixed: cannot tell, so shared
    ("train[-100:]", "train[:100]", True), ("train", "test", False), ("train[:90%]", "test", False),
    ("train+test", "test[:10%]", True), (None, None, True),
])
def test_which_split_values_share_rows(a: str, b: str, shared: bool) -> None:
    assert tc.overlap(a, b) is shared and tc.overlap(b, a) is shared


@pytest.mark.parametrize("name", ["opd", "grpo", "sft", "opsd"])
def test_the_bundled_examples_evaluate_on_rows_they_do_not_train_on(name: str) -> None:
    c = wai.compile(load_spec(EXAMPLES / f"{name}.toml"), "prime-rl")
    assert "holdout-is-training-data" not in {w.rule for w in c.warnings}
    assert c.facts.holdout is not None and not c.facts.holdout["same_rows"]
    assert (c.facts.holdout["train"], c.facts.holdout["eval"]) == ("train[:90%]", "train[90%:]")


def test_the_grpo_example_passes_strict() -> None:
    wai.compile(load_spec(EXAMPLES / "grpo.toml"), "prime-rl", strict=True)


def test_the_fix_names_a_slice_that_exists() -> None:
    c = wai.compile(wai.RunSpec(taskset="reverse-text", model="m/x", method=wai.GRPO()), "prime-rl")
    w = next(w for w in c.warnings if w.rule == "holdout-is-training-data")
    assert "taskset_args.dataset_split = 'train[:90%]'" in w.message
    assert "eval.taskset_args.dataset_split = 'train[90%:]'" in w.message
    half = wai.RunSpec(taskset="reverse-text", model="m/x", method=wai.GRPO(),
                       eval={"taskset_args": {"dataset_split": "train[90%:]"}})
    w = next(w for w in wai.compile(half, "prime-rl").warnings if w.rule == "holdout-is-training-data")
    assert "'train' and 'train[90%:]' share rows" in w.message  # training still reads all of train
