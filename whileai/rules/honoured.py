"""Method settings the target cannot honour, and `--strict`.

A setting the target replaces with something else is a warning with an id, naming what was asked
and what will run (not only a line among the ignores):

- `divergence-not-honoured`: method.divergence asks for one objective and an override makes the
  compiled file run another. TRL's DistillationTrainer interpolates with `beta` (0 forward KL, 1
  reverse KL, between: a generalized JSD; OPSD's train.py: distillation_alpha), so `--set
  beta=0.5` on a reverse-KL spec trains a JSD. A divergence a target cannot train at all is no
  warning but an error, on every target (prime-rl 559b447 has only the sampled-token reverse-KL
  estimator, orchestrator/algo/opd.py and opsd.py; verl 0.9.1 has no JSD): the target's
  refusal (whileai.targets.prime_rl.compile.check_divergence, whileai.targets.verl.compile.refuse).

Rules never fire on a field the target ignores: a Rule that names the spec fields it reads
(`Rule.fields`) is skipped when the compiled report lists one of them under ignores (the
target passes them as the `ignored` fact), e.g. `top-k-small` on prime-rl, which has no top-k.

`strict(compiled)`: every warning is an error (exit 2 in the CLI and the recipes, SpecError in
the API), raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whileai.errors import SpecError, raw
from whileai.rules.facts import Facts

NAMES = {"forward_kl": "forward KL", "reverse_kl": "reverse KL", "jsd": "JSD"}


def divergence_check(run: Any, facts: Facts) -> str | None:
    asked = getattr(run.method, "divergence", None)
    runs, how = facts.divergence, facts.divergence_how
    if asked is None or runs is None:
        return None
    same = runs == asked or (asked == "jsd" and runs == "jsd:0.5")
    if same:
        return None
    kind, _, beta = str(runs).partition(":")
    what = NAMES.get(kind, kind) + (f" (beta {beta})" if beta else "")
    return (f"method.divergence {asked!r} ({NAMES.get(asked, asked)}) is not what will run: the "
            f"compiled file trains {what}{'; ' + how if how else ''}")


def strict(compiled: Iterable[Any]) -> None:
    """--strict: the first warning of any compiled run (or stage) as one SpecError; a warning
    the spec accepts (its `accept` table, whileai.rules.accept) is not one."""
    found = [(c, w) for c in compiled for w in c.warnings if w.accepted is None]
    if not found:
        return
    c, w = found[0]
    more = f"; {len(found) - 1} more warning{'s' if len(found) > 2 else ''}" if len(found) > 1 else ""
    raise SpecError("--strict", raw(f"warning [{w.rule}] is an error"), f"{w.message}{more}",
                    hint="fix the spec, accept the warning in its `accept` table with a reason, or drop "
                    "--strict to write the files with the warnings")


__all__ = ["divergence_check", "strict"]
