"""TRL target: RunSpec → a run directory for `trl distillation` (OPD), `trl grpo` (GRPO),
TRL's experimental SDFTTrainer (OPSD, through a short train.py) or `trl sft` on completions the
teacher wrote first (SFT, through sample.py), pinned to TRL 1.16.0.

Pure: `compile(run)` returns every file's text and the report; nothing is imported from trl,
torch or transformers, and nothing is written. The field map (trl_map.py) is the mapping;
keys are checked against the pinned catalogue (schemas/trl-1.16.0.catalog.json) and the
files against TRL's own parser by `whileai.targets.trl.check.check_dir`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from whileai.errors import SpecError, raw
from whileai.report.text import render_text
from whileai.rules.facts import Facts
from whileai.spec.mixture import refuse_task_reward
from whileai.spec.run import OPSD, SFT, RunSpec
from whileai.targets import overrides as ov
from whileai.targets import registry
from whileai.targets.compiled import Compiled, Ignore, counted
from whileai.targets.fieldmap import Row, apply
from whileai.targets.pipeline import Emitted, Steps, compile_run, ignored, judged
from whileai.targets.story import Floor, Story, flat
from whileai.targets.trl import accelerate as accel
from whileai.targets.trl import batch as trl_batch
from whileai.targets.trl import catalog as trl_catalog
from whileai.targets.trl import cost as trl_cost
from whileai.targets.trl import reward as trl_reward
from whileai.targets.trl import teacher as trl_teacher
from whileai.targets.trl.fieldmap import (
    CPU_ROWS,
    DATA,
    FIELD_MAP,
    OFF,
    SAMPLE_PY,
    SAMPLES,
    TRAIN_PY,
    anchor_kind,
    command_name,
    completions,
    one_per_prompt,
    privileged_key,
)
from whileai.targets.trl.pin import TARGET
from whileai.targets.trl.pin import VERSION as TRL_VERSION
from whileai.targets.trl.rules import RULES
from whileai.tasksets.builtin import for_run, rows, source
from whileai.version import __version__

if TYPE_CHECKING:
    from whileai.cost.estimate import Cost

OFFLINE_ENV = "HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1"


def facts(run: RunSpec, doc: dict[str, Any], ignored: Sequence[str] = ()) -> Facts:
    """What TRL will really do, read from the compiled config (overrides included): the warning
    rules (whileai.rules.research), the report's summary and the per-step spend use these."""
    m = run.method
    anchor = None
    if isinstance(m, OPSD):
        anchor = {"base": "initial"}.get(anchor_kind(run), anchor_kind(run))
    samples = 1 if one_per_prompt(run) else doc.get("num_generations", m.samples)
    per_step = trl_batch.step_batch(doc, accel.processes(run))
    steps = doc.get("max_steps", -1)
    interval = trl_cost.eval_interval(doc, steps)
    opd = trl_teacher.shape(run)
    return Facts(
        estimator=_estimator(run, doc, opd),
        support_top_k=doc.get("loss_top_k") if opd == "server" and doc.get("beta") != 1.0 else None,
        teacher_reads="text" if m.off_policy else "own_tokenizer" if opd == "gold" else "token_ids",
        anchor=anchor,
        top_p=1.0,
        layout=(f"{accel.processes(run)} processes ({accel.strategy(run)[0]})"
                if accel.distributed(run) else f"one process ({accel.FILE}: num_processes 1)"),
        asynchrony="off-policy: the teacher's completions are all sampled before training"
        if m.off_policy else "synchronous (on-policy every step)",
        # TRL's top_k filters sampling only; its distillation and SDFT losses span the full
        # vocabulary and divide both models' logits by the temperature
        loss_top_k=opd == "server" and doc.get("beta") == 0.0,  # served, forward KL: the top-k
        loss_temperature=m.distills,
        # SDFTTrainer: ema + pure-LoRA training -> PEFTAdapterEMACallback, an EMA of the adapter
        adapter_ema=isinstance(m, OPSD) and anchor == "ema" and run.lora,
        strategy=accel.strategy(run)[0] if accel.distributed(run) else None,
        model=doc.get("model_name_or_path", run.model),
        steps=steps,
        samples_effective=samples,
        rollouts=per_step,
        prompts=(per_step // samples if per_step % samples == 0 else f"{per_step}/{samples}")
        if not m.off_policy else f"~{per_step / samples:g}",
        max_tokens=doc.get("max_completion_length", m.max_tokens),
        weights=f"LoRA rank {doc.get('lora_r', 16)}" if doc.get("use_peft") else "full weights",
        learning_rate=doc.get("learning_rate", run.learning_rate),
        eval_interval=interval,
        eval_off=interval is None,
        eval_at_start=bool(doc.get("eval_on_start", False)),
        divergence=divergence(m.type, doc),
        divergence_how="set by overrides" if {"beta", "distillation_alpha"} & set(run.overrides)
        else "",
        ignored=tuple(ignored),  # no rule fires on these
    )


def _estimator(run: RunSpec, doc: dict[str, Any], opd: str | None) -> str:
    """Full vocabulary, except a served teacher's reverse KL (beta 1): ServerDistillationTrainer
    scores the sampled token alone against the rest of the mass (its top-1 'sampled' mode)."""
    if opd == "server" and doc.get("beta") == 1.0:
        return "sampled_token"
    return "full_vocab" if run.method.distills else run.method.LOSS


def divergence(method_type: str, doc: dict[str, Any]) -> str | None:
    """The objective TRL's compiled config trains (None: no distillation loss)."""
    key = {"opd": "beta", "opsd": "distillation_alpha"}.get(method_type)
    if key is None or not isinstance(doc.get(key), (int, float)):
        return None
    v = float(doc[key])
    return "forward_kl" if v == 0.0 else "reverse_kl" if v == 1.0 else f"jsd:{v:g}"


def compile(run: RunSpec, *, cpu: bool = False, out: str | None = None,
            extra: Sequence[Row] = ()) -> Compiled:
    """Compile a run spec to a TRL run directory (relative name → text). Writes nothing: one pass
    through the shared pipeline (whileai.targets.pipeline) with TRL's steps.

    cpu: add `use_cpu: true` and `bf16: false` (TRL's configs default to bf16, which needs
    a GPU). out: the directory the files will be written to (only used in the commands).
    extra: rows applied after the field map, which win (a stage of a two-stage run: its student).
    """
    spec, mapped, cpu_ignores = accel.for_cpu(run) if cpu else (run, run, [])
    return compile_run(registry.of(__name__), mapped, TRLSteps(spec, cpu, out, extra, cpu_ignores))


class TRLSteps(Steps):
    """TRL's steps (whileai.targets.pipeline): refusals before the map, the overrides against the
    pinned catalogue of the run's command, TRL's batch rules on the final config, and the run
    directory's files."""

    off, rules = OFF, RULES

    def __init__(self, spec: RunSpec, cpu: bool, out: str | None, extra: Sequence[Row],
                 before: Sequence[Ignore]) -> None:
        self.spec, self.cpu, self.out, self.extra, self.before = spec, cpu, out, extra, before
        self.floors = FLOORS

    def refuse(self, run: RunSpec) -> None:
        no_task_reward(run)
        trl_teacher.refuse_served_across(run)
        if run.sources:
            raise SpecError("sources", raw(f"{len(run.sources) + 1} training sources"), "one source "
                            "for TRL: TRL has no per-source algorithms (one method and one "
                            "dataset per run; its async_distillation keys vLLM-served teachers by a "
                            "teacher_id column but needs the student on vLLM too); compile a mixture "
                            "for prime-rl (-t prime-rl)")
        n = accel.processes(run)
        if completions(run) % n:
            raise SpecError("prompts", run.prompts, f"a step whose {completions(run)} completions "
                            f"split evenly over the {n} training processes (one per GPU): TRL gives "
                            "every process the same per_device_train_batch_size")
        self.taskset = taskset = for_run(run)
        key = privileged_key(run)
        if key is not None and key not in taskset.fields:
            raise SpecError("method.privileged", key, f"a field of every {taskset.name} task: "
                            + (", ".join(taskset.fields) or "(none besides prompt)"))
        if run.method.rewarded and not taskset.module and run.reward is None:
            raise SpecError("reward", None, f"GRPO learns from a reward and {taskset.name} brings "
                            "none whileai can score (only reverse-text does): name a function "
                            "'module.function' that scores a completion (TRL's reward_funcs "
                            "signature), e.g. reward = \"rewards.contains_answer\" beside the spec")
        self.reward = trl_reward.locate(run) if run.method.rewarded and run.reward else None
        self.cmd = command_name(run)

    def rows(self, run: RunSpec) -> Sequence[Row]:
        return FIELD_MAP + (CPU_ROWS if self.cpu else [])

    def story(self) -> Story:
        return _story(self.cpu, self.extra)

    def keys(self) -> ov.OverrideKeys:
        return ov.SchemaKeys(trl_catalog.catalog(self.cmd))

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        _check_batch(doc, run)

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        cpu, reward, taskset = self.cpu, self.reward, self.taskset
        self.sampled = sampled = sample_prompts(run, doc)
        reads = [replace(r, value=sampled) if r.path == f"<{SAMPLE_PY} --prompts>" else r
                 for r in said.reads]
        files = {"config.yaml": _header(run, self.cmd) + dumps(doc)}
        files[accel.FILE] = (f"# written by whileai {__version__} for accelerate: "
                             f"{accel.readme(run, cpu)}\n\n" + dumps(accel.config(run, cpu)))
        train, holdout = _data(run, self.cmd == "gold")
        files["data/train.jsonl"] = train
        files["data/test.jsonl"] = holdout
        if run.method.rewarded and taskset.module and run.reward is None:
            files[f"{taskset.module}.py"] = source(taskset)
        if reward is not None:
            reads = [r if r.field != "reward" else replace(r, note=reward.note()) for r in reads]
            if reward.copy and reward.source is not None:
                files[reward.copy] = reward.source
        if self.cmd in TRAIN_PY:  # SDFT, GOLD, a served teacher: whileai's train.py
            files["train.py"] = _shipped(TRAIN_PY[self.cmd])
        if run.method.off_policy:
            files[SAMPLE_PY] = _shipped("sample.py")
        self.path = reward.pythonpath if reward is not None else None
        return Emitted(files=files, main="config.yaml", reads=tuple(reads), spec=self.spec,
                       commands=tuple(commands(run, self.out, self.path, sampled)),
                       **_teacher_and_notes(run, doc))

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        return judged(facts(run, doc, ignored(said)), said)

    def cost(self, doc: dict[str, Any], run: RunSpec, facts: Facts) -> Cost | None:
        got = trl_cost.estimate(run, doc)
        if got is None or not self.cpu:
            return got
        # --cpu: the estimate's hours are an H100's; on the CPU they would mislead (no GPU is held)
        return replace(got, gpu_hours=None, gpu_seconds=None, wall_hours=None, held_gpu_hours=None,
                       unknown="compiled for the CPU (--cpu), and whileai estimates GPU time only")

    def finish(self, compiled: Compiled) -> Compiled:
        compiled.files["README.md"] = _readme(compiled, self.path, self.sampled, self.cpu)
        return compiled


def _story(cpu: bool, extra: Sequence[Row]) -> Story:
    """What a run's files and lines say, overrides aside (whileai.targets.story)."""
    def story(run: RunSpec) -> dict[str, Any]:
        got = apply(FIELD_MAP + (CPU_ROWS if cpu else []), run, extra)
        lines = {r.path: r.value for r in got.reads  # sample.py's options; --prompts follows
                 if r.path.startswith("<") and r.path != f"<{SAMPLE_PY} --prompts>"}  # max_steps
        return dict(flat(got.doc)) | lines | {"<the teacher's size (the cost)>": trl_cost.teacher(run)}
    return story


def _floor(key: str, how: str) -> Floor:
    """A length whileai derives (0 where this method writes no such key)."""
    return Floor((key,), lambda run, doc: (doc.get(key, 0), how), "prompt_tokens (or method.max_tokens)")


# SFT's max_length and SDFT's max_prompt_length hold prompt_tokens + max_tokens (fieldmap)
FLOORS = [_floor("max_length", "prompt_tokens + max_tokens"),
          _floor("max_prompt_length", "prompt_tokens + max_tokens + the template's bytes")]


def _teacher_and_notes(run: RunSpec, doc: dict[str, Any]) -> dict[str, Any]:
    """trl_cost's teacher fields and notes, plus SFT's note on what a step holds."""
    out = trl_cost.teacher(run)
    said = trl_teacher.note(run)  # GOLD or a served teacher: the trainer, its loss, the server
    if said is not None:
        out["notes"] = (*out.get("notes", ()), said)
    if isinstance(run.method, SFT):
        per_step = trl_batch.step_batch(doc, accel.processes(run))
        s = run.method.samples
        out["notes"] = (*out.get("notes", ()), (
            f"prompts per step ~{per_step / s:g} is an average: trl sft shuffles the teacher's "
            f"completion rows, so a step's {counted(per_step, 'rows')} {'are' if per_step > 1 else 'is'} "
            "completions of whichever prompts the shuffle brings"
            + (f", and a prompt's {s} completions usually land in different steps" if s > 1 else "")))
    return out


def _shipped(name: str) -> str:
    """A standalone script of this package, written verbatim into the run directory."""
    return resources.files("whileai.targets.trl").joinpath(name).read_text()


def commands(run: RunSpec, out: str | None = None, pythonpath: str | None = None,
             prompts: int | None = None) -> list[str]:
    """The shell lines that run the directory, in order (SFT: sample, then train).
    prompts: SFT's train prompts to sample (default: steps x prompts)."""
    where = f"cd {shlex.quote(out)} && " if out else ""
    env = f"PYTHONPATH={shlex.quote(pythonpath)} " if pythonpath else ""
    if command_name(run) in TRAIN_PY:
        return accel.commands(run, "python train.py --config config.yaml", where)
    if isinstance(run.method, SFT):
        m = run.method
        n = prompts if prompts is not None else run.steps * run.prompts
        sample = (f"python {SAMPLE_PY} --teacher {shlex.quote(m.teacher.model)} --prompts {n} "
                  f"--samples {m.samples} --temperature {m.temperature:g} --max-new-tokens "
                  f"{m.max_tokens} --seed {run.seed} --data {DATA} --out {SAMPLES}")
        if accel.machines(run) > 1:
            sample += f"  # once, on the main machine: every machine reads {SAMPLES}/ (a shared filesystem)"
        return [f"{where}{sample}", *accel.commands(run, "trl sft --config config.yaml", where)]
    return accel.commands(run, f"trl {command_name(run)} --config config.yaml", where, env)


def sample_prompts(run: RunSpec, doc: dict[str, Any]) -> int | None:
    """SFT: train prompts the teacher answers, enough for every step of the final config (its
    max_steps x completions per step over every training process, over `samples` completions a
    prompt); None otherwise."""
    if not isinstance(run.method, SFT):
        return None
    steps = doc.get("max_steps", run.steps)
    per_step = trl_batch.step_batch(doc, accel.processes(run))
    if not isinstance(steps, int) or steps < 1:
        return run.steps * run.prompts
    return -(-steps * per_step // run.method.samples)


def dumps(doc: dict[str, Any]) -> str:
    """The config as YAML through PyYAML's safe dumper (imported here: only TRL needs it), in
    the document's own key order. Its floats load back as floats under the YAML 1.1 rules TRL's
    loader uses (1e-06 is written 1.0e-06); a text with line breaks is one double-quoted line,
    the breaks escaped."""
    import yaml

    return yaml.dump(doc, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=4096)


@cache
def _dumper() -> Any:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, data: str) -> Any:
        breaks = any(c in data for c in "\n\r\x85\u2028\u2029")  # YAML folds them unless escaped
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"' if breaks else None)

    Dumper.add_representer(str, text)
    return Dumper


_POSITIVE = ("per_device_train_batch_size", "gradient_accumulation_steps",
             "per_device_eval_batch_size", "num_generations")


def _check_batch(doc: dict[str, Any], run: RunSpec) -> None:
    """Batch keys are whole numbers of at least 1 (GRPO's group: 2); then TRL's generation
    batch and zero-step rules (whileai.targets.trl.batch)."""
    for key in _POSITIVE:
        least = 2 if key == "num_generations" and run.method.rewarded else 1
        v = doc.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < least):
            raise SpecError(f"overrides.{key}" if key in run.overrides else key, v,
                            f"a whole number of at least {least}" + (
                                ": GRPO compares completions within a group" if least == 2 else ""))
    trl_batch.check(doc, run)  # TRL's own rules: over every process, and no zero-step run


def _data(run: RunSpec, gold: bool = False) -> tuple[str, str]:
    """The rows as JSON lines; GOLD's dataset preparation needs a completion column (an empty
    assistant turn: lmbda 1 replaces it with the student's own completion every batch)."""
    from whileai.targets.trl.fieldmap import test_rows

    train, holdout = rows(run)
    holdout = holdout[: test_rows(run)]
    if gold:
        empty = {"completion": [{"role": "assistant", "content": ""}]}
        train, holdout = [r | empty for r in train], [r | empty for r in holdout]
    key = privileged_key(run)
    if key is not None:
        train = [r | {"privileged_context": r[key]} for r in train]
        holdout = [r | {"privileged_context": r[key]} for r in holdout]
    return _jsonl(train), _jsonl(holdout)


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _header(run: RunSpec, cmd: str) -> str:
    train = commands(run)[-1]  # with its accelerate config: the process count it states
    how = f"python {SAMPLE_PY} ... (see README.md), then {train}" if cmd == "sft" else train
    return (
        f"# written by whileai {__version__} for {TARGET}: {run.method.type} on {run.taskset}\n"
        f"# run from this directory: {how}    (what each key does: README.md)\n\n"
    )


def _readme(c: Compiled, pythonpath: str | None = None, prompts: int | None = None,
            cpu: bool = False) -> str:
    run = c.run
    here = replace(c, out=c.main, commands=tuple(commands(run, None, pythonpath, prompts)))
    names = "\n".join(f"- `{n}`" for n in sorted(c.files) if n != "README.md")
    fixed = "\n".join(f"- `{f.path}: {f.value!r}`: {f.reason}" for f in c.fixed) or "- none"
    return (
        f"# {run.method.type} on {run.taskset} for TRL {TRL_VERSION}\n\n"
        f"Written by whileai {__version__}. Run from this directory (paths are relative):\n\n"
        "```bash\n" + "\n".join(here.commands) + "\n```\n\n"
        "This folder needs TRL only, not whileai. Install the pinned target first: "
        f"`pip install trl=={TRL_VERSION}" + (" peft" if run.lora else "") + "`. "
        "For a fully offline run (local model paths) "
        f"prefix the command with `{OFFLINE_ENV}`.\n"
        f"{accel.readme(run, cpu)}\n\n" + (_SFT_NOTE if run.method.off_policy else "")
        + f"## Files\n\n{names}\n\n"
        "## What whileai read, ignored and set\n\n```text\n" + render_text(here, 100) + "\n```\n\n"
        f"Keys whileai set that no spec field produced:\n\n{fixed}\n"
    )


_SFT_NOTE = (
    f"Off-policy distillation runs in two steps: `{SAMPLE_PY}` loads the teacher in-process and writes "
    f"its completions of the train and holdout prompts to `{SAMPLES}/` (prompt and completion "
    "columns), then `trl sft` trains the student on them with cross-entropy on the completion "
    "tokens only. The teacher must be a local folder or in the local Hugging Face cache for an "
    f"offline run. `--prompts` is the step count x the completions of one step over every training "
    "process, over the completions per prompt: every step trains on fresh teacher completions.\n\n"
)


__all__ = ["TARGET", "TRL_VERSION", "TRLSteps", "command_name", "commands", "compile", "dumps", "facts",
           "sample_prompts"]


def no_task_reward(run: RunSpec) -> None:
    """OPD's task reward beside the teacher: TRL's DistillationTrainer scores nothing
    (trl/trainer/distillation_trainer.py:1531, "distillation has no rewards"; no reward_funcs
    argument, :320-333), so its loss is the teacher's divergence alone."""
    refuse_task_reward(run, "unset for TRL: its DistillationTrainer has no reward "
                       "(trl/trainer/distillation_trainer.py:1531); compile it for verl (-t verl)")
