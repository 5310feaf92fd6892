"""prime-rl's per-method `algo` table as field-map rows, and which methods have a frozen teacher.

prime-rl selects the training algorithm with one table: `orchestrator.algo` for the whole run,
or `orchestrator.train.source[i].algo` for one training source (a mixture). `algo_rows(table,
field)` writes the table for the method found at spec field `field` into the TOML path `table`:

    algo_rows("orchestrator.algo")                                      # the run's method
    algo_rows("orchestrator.train.source[1].algo", "sources[0].method")  # a mixture's extra source

Every method field that lives in the algo table is read there or ignored with its reason;
fields that are per run in prime-rl (samples → group_size, temperature and max_tokens → the
train sampling, learning_rate → the optimizer) stay in the target's own field map.
"""

from __future__ import annotations

from typing import Any

from whileai.spec.run import RunSpec
from whileai.targets.fieldmap import Drop, Row, To, field_value
from whileai.targets.prime_rl import renderer
from whileai.tasksets import opsd_template

OPSD_REASON = "prime-rl's opd/opsd loss is the sampled-token reverse-KL estimator, not configurable"
# where each method's frozen teacher goes inside its algo table (OPSD's teacher is the policy)
TEACHER_TABLE = {"opd": "teacher", "sft": "sampling.source"}


def renderer_rows(table: str, when: Any = None, same: str = "") -> list[Row]:
    """The renderer table at `table` (`orchestrator.renderer`, or OPSD's algo renderer), chosen
    from the student by the renderers package's data (never 'auto': targets/prime_rl/renderer).
    same: the table whose choice this one repeats, said instead of the reason again."""
    def value(key: str) -> Any:
        return lambda r: renderer.choose(r.model).table.get(key)

    def note(r: RunSpec) -> str:
        choice = renderer.choose(r.model)
        return f"{choice.origin}: {choice.reason}"
    return [To("model", f"{table}.{key}", value(key), note=f"the same as {same}" if same else note,
               when=when or (lambda r: True)) for key in renderer.TABLE_KEYS]


def _sampler_note(r: RunSpec) -> str:
    name = renderer.choose(r.model).name
    return (f"the frozen teacher samples every training completion; the student's renderer "
            f"({name}, orchestrator.renderer) sends it the prompt as token ids and backfills its "
            "reply into the student's tokens: teacher and student must share one tokenizer")


def algo_rows(table: str = "orchestrator.algo", field: str = "method") -> list[Row]:
    """The rows that write one method's algo table at `table` (see the module docstring)."""

    def m(r: RunSpec) -> Any:
        return field_value(r, field)

    def kind(*kinds: str) -> Any:
        return lambda r: getattr(m(r), "type", None) in kinds

    def reverse_kl(r: RunSpec) -> bool:
        return kind("opd", "opsd")(r) and m(r).divergence == "reverse_kl"

    def _template(r: RunSpec) -> tuple[str, str]:  # worded for the source's taskset
        prefix = field[: -len("method")]
        taskset = field_value(r, f"{prefix}taskset") if prefix else r.taskset
        return opsd_template.worded(taskset, m(r).privileged, m(r).template)

    def anchor(r: RunSpec) -> str | None:
        return getattr(m(r), "anchor", None) if kind("opsd")(r) else None

    rows: list[Row] = [
        To(f"{field}.type", f"{table}.type"),
        To(f"{field}.divergence", f"{table}.type", lambda r: m(r).type, when=reverse_kl,
           note="its loss is the sampled-token reverse-KL estimator"),
        Drop(f"{field}.top_k", "prime-rl scores only the sampled token (its reverse-KL "
             "estimator); there is no top-k or full-vocabulary support to restrict"),
        Drop(f"{field}.task_reward_kl_coef", "unset only: prime-rl's opd trains on the teacher's KL "
             "alone (configs/algorithm.py:296-305), so a set coefficient is refused at compile"),
        # OPSD: the policy, shown the privileged text, is the teacher
        To(f"{field}.privileged", f"{table}.demo_key",
           note="read from the task's info, then its top-level fields"),
        To(f"{field}.template", f"{table}.template", lambda r: _template(r)[0],
           note=lambda r: _template(r)[1]),
        *renderer_rows(f"{table}.renderer", when=kind("opsd"), same="orchestrator.renderer"),
        Drop(f"{field}.anchor", "prime-rl opsd scores against the live policy; an EMA or "
             "initial-weights teacher (SDFT, SDPO) is not offered there",
             when=lambda r: anchor(r) not in (None, "live")),
        To(f"{field}.anchor", f"{table}.type", lambda r: "opsd", when=lambda r: anchor(r) == "live",
           note="prime-rl's opsd teacher is the live policy"),
    ]
    for kind_, where in TEACHER_TABLE.items():
        sub = f"{table}.{where}"
        rows += [
            To(f"{field}.teacher.model", f"{sub}.name", when=kind(kind_),
               note=_sampler_note if kind_ == "sft" else ""),
            To(f"{field}.teacher.url", f"{sub}.base_url", when=kind(kind_),
               note="rl never launches the teacher: serve it there (see run)"),
            To(f"{field}.teacher.api_key_env", f"{sub}.api_key_var", when=kind(kind_)),
        ]
    return rows


__all__ = ["OPSD_REASON", "TEACHER_TABLE", "algo_rows", "renderer_rows"]
