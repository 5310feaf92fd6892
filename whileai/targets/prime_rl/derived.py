"""Overrides of a value other keys are derived from: refused, with the spec field to change.

whileai derives several keys from one spec value: `method.max_tokens` sets the train sampling's
`max_completion_tokens`, and from it `seq_len` (prompt_tokens + max_tokens), the teacher server's
`vllm.max_model_len` (its own TOML) and the cost estimate. An override of the sampling cap alone
(`--set orchestrator.train.sampling.max_completion_tokens=4096`) would leave those at the old
cap: the report and the files would disagree with the run. So such an override is refused and
names the spec field that re-derives everything (a mixture source's cap: its own method's).
"""

from __future__ import annotations

import re
from typing import Any

from whileai.errors import SpecError
from whileai.spec import mixture
from whileai.spec.run import RunSpec

# compiled on first use (re's cache): only a run with overrides reads it
_CAP = r"^orchestrator\.train(?:\.source\[(\d+)\])?\.sampling\.max_completion_tokens$"
DERIVED = "seq_len, the teacher server's max_model_len, the eval cap and the cost"


def check(run: RunSpec) -> None:
    """SpecError for the first override of a derived-from value."""
    for path, value in run.overrides.items():
        m = re.match(_CAP, path.replace(" ", ""))
        if m is None:
            continue
        pos = int(m.group(1)) if m.group(1) is not None else 0
        entries = mixture.entries(run)
        e = entries[pos] if pos < len(entries) else entries[0]
        where = f"{e.field}method.max_tokens" if e.own_method else "method.max_tokens"
        raise SpecError(f"overrides.{path}", value, f"set {where} = {_show(value)} in the spec "
                        f"instead: whileai derives {DERIVED} from it, and an override of this key "
                        "alone would leave them at the old cap")


def _show(value: Any) -> str:
    return str(value) if isinstance(value, int) else repr(value)


__all__ = ["DERIVED", "check"]
