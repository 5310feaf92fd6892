"""A [method] table without `type`, a misspelt table name, a misspelt key in [method], and a
sub-table named after a method: each error names the key that is wrong and what to write,
with the allowed types read from the union (issue 40, item 3)."""

from __future__ import annotations

from typing import Any

import pytest

from whileai.errors import SpecError
from whileai.spec.load import build
from whileai.spec.run import RunSpec

BASE: dict[str, Any] = {"taskset": "reverse-text", "model": "Qwen/Qwen3-0.6B"}


def error(**data: Any) -> str:
    with pytest.raises(SpecError) as e:
        build(RunSpec, BASE | data)
    return str(e.value)


def test_method_without_type_names_type_and_every_method() -> None:
    msg = error(method={"samples": 4})
    assert msg == "method.type: missing; one of grpo, opd, opsd, sft"
    assert "{" not in msg  # not the whole table as the value


def test_source_method_without_type_names_its_own_path() -> None:
    msg = error(method={"type": "grpo"}, sources=[{"taskset": "reverse-text", "method": {"samples": 4}}])
    assert msg == "sources[0].method.type: missing; one of grpo, opd, opsd, sft"


@pytest.mark.parametrize(("table", "key", "guess"), [
    ({"tpye": "grpo"}, "tpye", "type"),
    ({"smaples": 4}, "smaples", "samples"),
])
def test_misspelt_key_in_untyped_method_is_named_with_a_guess(table: dict[str, Any], key: str,
                                                              guess: str) -> None:
    msg = error(method=table)
    assert msg.startswith(f"method.{key}: unknown field (did you mean {guess!r}?)")
    assert "grpo | opd | opsd | sft" in msg


def test_misspelt_method_table_is_named_not_reported_missing() -> None:
    msg = error(methd={"type": "grpo"})
    assert msg.startswith("methd: unknown field (did you mean 'method'?)")


def test_sub_table_named_after_a_method_says_where_type_goes() -> None:
    msg = error(method={"opd": {"teacher": "vllm:Qwen/Qwen3-1.7B@http://localhost:8001/v1"}})
    assert msg.startswith("method.opd: a table named after a type")
    assert 'type = "opd"' in msg


def test_misspelt_sub_table_of_a_typed_method_is_named() -> None:
    msg = error(method={"type": "grpo", "smaples": {"n": 1}})
    assert msg.startswith("method.smaples: unknown field (did you mean 'samples'?)")
