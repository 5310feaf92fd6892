"""Any spec file, run offline on tiny local models (the TRL recipe's CPU loop).

    off = Offline(prompts=4, max_tokens=64, samples=4, holdout=32, lr=5e-4)
    off.check(name, run)                                   # SpecError: cannot run offline
    run, subs = off.apply(name, run, {"student": ..., "teacher": ...})
    texts, pairs = task_texts(run)                         # the tokenizer's texts, warm-up pairs

`apply` replaces what a CPU cannot run as the spec says and records each replacement (a
`Substitution` of results.json): the student and any teacher become the tiny models, the
sizes become the recipe's options, LoRA becomes full weights, W&B is dropped, and overrides
TRL does not know (another target's keys) are dropped. The holdout, the data, the method and
its divergence, anchor, template and seed are kept. Light: no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whileai.errors import SpecError
from whileai.launch.arms import replace_run
from whileai.spec.run import RunSpec
from whileai.tasksets.builtin import BUILTIN, name_of, rows

# how a built-in taskset's answer is written in a completion (for the supervised warm-up)
ANSWER_FORMAT = {"reverse-text": "<reversed_text>\n{answer}\n</reversed_text>"}
TINY = "tiny random Qwen3 models (whileai.launch.tiny) warmed up on the train split: a pipeline " \
       "test, not evidence about the methods"


@dataclass(frozen=True)
class Offline:
    prompts: int = 4
    max_tokens: int = 64
    samples: int = 4
    holdout: int = 32
    lr: float = 5e-4

    def check(self, name: str, run: RunSpec) -> None:
        """Refuse, in one line, a spec whose tasks cannot be had on this machine."""
        if run.data is None and name_of(run.taskset) not in BUILTIN:
            raise SpecError("taskset", run.taskset, "offline arms need tasks on this machine: a "
                            f"built-in taskset ({', '.join(BUILTIN)}) or data = 'tasks.jsonl' in "
                            "the spec", hint=f"arm {name}")

    def apply(self, name: str, run: RunSpec, models: dict[str, str]) -> tuple[RunSpec, list[dict[str, Any]]]:
        subs: list[dict[str, Any]] = []

        def sub(field: str, spec: Any, new: Any, reason: str) -> Any:
            if spec != new:
                subs.append({"arm": name, "field": field, "spec": spec, "run": new, "reason": reason})
            return new

        m = run.method.model_dump(mode="python")
        teacher = m.get("teacher")
        if isinstance(teacher, dict):
            teacher["model"] = sub("method.teacher.model", teacher["model"], models["teacher"],
                                   "the tiny teacher (loaded in-process; its URL is not used)")
        elif isinstance(teacher, str):
            m["teacher"] = sub("method.teacher", teacher, models["teacher"], "the tiny teacher")
        if "max_tokens" in m:
            m["max_tokens"] = sub("method.max_tokens", m["max_tokens"], self.max_tokens,
                                  "CPU-sized, and the same for every arm so the holdout is scored alike")
        if m.get("samples", 0) > self.samples:
            floor = 2 if m["type"] == "grpo" else 1  # a GRPO group needs two
            m["samples"] = sub("method.samples", m["samples"], max(self.samples, floor),
                               "CPU-sized (--samples)")
        if "learning_rate" in m:
            m["learning_rate"] = sub("method.learning_rate", m["learning_rate"], self.lr,
                                     "tiny random models need a large step (--lr)")
        overrides = self._overrides(name, run, subs)
        changes = {
            "model": sub("model", run.model, models["student"], TINY),
            "method": m,
            "prompts": sub("prompts", run.prompts, self.prompts, "CPU-sized (--prompts)"),
            "lora": sub("lora", run.lora, False, "full weights: the tiny models are small"),
            "monitor": sub("monitor", run.monitor.model_dump() if run.monitor else None, None,
                           "offline: no W&B"),
            "output_dir": sub("output_dir", run.output_dir, "outputs", "inside the arm's folder"),
            "eval": {"interval": run.eval.interval, "examples": sub(
                "eval.examples", run.eval.examples, self.holdout, "CPU-sized holdout (--holdout)")},
            "overrides": overrides,
        }
        return replace_run(run, **changes), subs

    @staticmethod
    def _overrides(name: str, run: RunSpec, subs: list[dict[str, Any]]) -> dict[str, Any]:
        """The spec's overrides that TRL knows; the others (another target's keys) dropped."""
        from whileai.targets import overrides as ov
        from whileai.targets.trl import catalog as trl_catalog
        from whileai.targets.trl.fieldmap import command_name

        kept: dict[str, Any] = {}
        catalog = trl_catalog.catalog(command_name(run))
        for key, value in run.overrides.items():
            try:
                ov.check_override(catalog, key, value)
                kept[key] = value
            except SpecError as e:
                subs.append({"arm": name, "field": f"overrides.{key}", "spec": value, "run": None,
                             "reason": f"dropped: not a TRL key here ({e.allowed})"})
        return kept


def task_texts(run: RunSpec) -> tuple[list[str], list[tuple[Any, str]]]:
    """(texts for the tokenizer, (prompt, completion) pairs for the warm-up) from the run's tasks.
    The warm-up writes each train task's `answer` (in the taskset's format); none without one."""
    train, holdout = rows(run)
    fmt = ANSWER_FORMAT.get(name_of(run.taskset), "{answer}") if run.data is None else "{answer}"
    texts = ["<|im_start|>", "<|im_end|>", "system user assistant"]
    for r in train + holdout:
        p = r["prompt"]
        texts += [p] if isinstance(p, str) else [str(msg.get("content", "")) for msg in p]
        texts += [v for k, v in r.items() if k != "prompt" and isinstance(v, str)]
        if isinstance(r.get("answer"), str):
            texts.append(fmt.format(answer=r["answer"]))
    pairs = [(r["prompt"], fmt.format(answer=r["answer"])) for r in train if isinstance(r.get("answer"), str)]
    return texts, pairs


def metric(run: RunSpec, reward: str | None) -> str:
    if reward:
        return f"{reward} (the baseline's reward)"
    ts = BUILTIN[name_of(run.taskset)]
    return f"{ts.name}: {ts.description.split('; ')[-1]}"


__all__ = ["ANSWER_FORMAT", "TINY", "Offline", "metric", "task_texts"]
