"""SFT on teacher samples as verl 0.9.1 runs it: two jobs, and whileai's conversion around them.

run.sh: convert.py writes the prompts as parquet (the generation server reads nothing else);
`python3 -m verl.trainer.main_generation_server` has the teacher answer them (`responses`,
main_generation_server.py:122-189); convert.py turns prompt + responses into `messages` rows;
`torchrun -m verl.trainer.sft_trainer` trains the student on them (sft_trainer.py:461). Keys of
the first job are `generate.<key>` in this map and in `--set`, the second's `sft.<key>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from whileai.errors import SpecError
from whileai.rules.facts import Facts
from whileai.spec.run import RunSpec
from whileai.targets import overrides as ov
from whileai.targets import registry
from whileai.targets.compiled import Compiled, counted
from whileai.targets.fieldmap import Drop, Fix, Row, To, apply
from whileai.targets.pipeline import Emitted, Steps, compile_run
from whileai.targets.story import Story, flat
from whileai.targets.verl import cost as verl_cost
from whileai.targets.verl import data, knobs, readme, script, sets
from whileai.targets.verl.fieldmap import COMMON, HERE, OFF, gsm8k, test_rows, trainer_rows
from whileai.targets.verl.fieldmap import files as files_of

if TYPE_CHECKING:
    from whileai.cost.estimate import Cost

GEN, SFT = "generate.", "sft."
JOBS = {"generate": "main_generation_server", "sft": "sft_trainer"}
PROMPTS, RESPONSES, MESSAGES = "data/prompts.parquet", "samples/responses.parquet", "data/sft.parquet"
VALIDATION = "data/sft_val.parquet"
ROLLOUT = f"{GEN}actor_rollout_ref.rollout."


# verl's SFT dataset tokenises each turn alone and asserts the concatenation equals the whole
# conversation's tokens (utils/dataset/multiturn_sft_dataset.py:425-456); Qwen3's template (and
# other thinking templates) add an empty think block to the last assistant turn in the whole form
# only, so a Qwen3-family student asserts on the first batch. verl's config names the switch
# (trainer/config/sft_trainer_engine.yaml:42-47).
MISMATCH = ("always on: verl trains on the per-turn tokens either way (the whole conversation is only "
            "compared, multiturn_sft_dataset.py:425-456), a thinking template (Qwen3's empty think "
            "block on the last turn) otherwise asserts on the first batch, and whileai reads no "
            "template at compile time; verl logs the difference once")
THINK = ("the teacher's <think>...</think> is stripped from each answer by convert.py (the SFT target "
         "is the text after </think>, as Qwen3's template renders a past turn): verl's per-turn "
         "tokenisation drops it for a Qwen3-family student anyway and would keep it as plain text for "
         "others, so every student trains on the teacher's final answers; an answer whose think block "
         "never closed (cut at max_tokens) is kept as written and counted in convert.py's output")


def rows_needed(r: RunSpec) -> int:
    return r.steps * r.prompts


def _tp(r: RunSpec) -> int:
    return knobs.tp(r.method.teacher.model, knobs.gpus_per_node(r), field="method.teacher.model")[0]  # type: ignore[union-attr]


def micro(r: RunSpec) -> int:
    return knobs.micro(r, r.method.samples)


SFT_MAP: list[Row] = [
    *COMMON,
    To("method.type", "<run.sh>", lambda r: "main_generation_server; convert.py; sft_trainer",
       note="the teacher answers, whileai's convert.py makes `messages` rows, verl's SFT trainer "
       "trains on them"),
    To("taskset", "<convert.py prompts: the prompts>", lambda r: files_of(r)[0],
       when=lambda r: r.data is None,
       note=lambda r: "openai/gsm8k as verl's rows (gsm8k_rows.py, run first)" if gsm8k(r)
       else f"{r.taskset} generated locally"),
    Drop("taskset", "a label only: the tasks come from data", when=lambda r: r.data is not None),
    To("data", "<convert.py prompts: the prompts>", lambda r: data.TRAIN if r.data else None, note="copied"),
    To("steps", "<convert.py prompts --rows>", rows_needed,
       note="steps x prompts: every step trains on fresh teacher answers (the train rows cycled)"),
    To("seed", "<convert.py prompts --seed>", note="the prompts' order"),
    Fix(f"{GEN}data.train_files", HERE + PROMPTS, "convert.py's parquet of the prompts"),
    Fix(f"{GEN}data.prompt_key", "prompt", "the chat column"),
    Fix(f"{GEN}data.output_path", HERE + RESPONSES, "where the job writes its `responses` column "
        "(a key verl reads that its config lacks: +data.output_path)"),
    To("method.teacher.model", f"{GEN}actor_rollout_ref.model.path", note="served by the job's "
       "own vLLM engines on the run's GPUs"),
    Drop("method.teacher.url", "verl's generation job starts its own servers for the teacher "
         "(main_generation_server.py:158-160): the URL is not queried"),
    Fix(f"{ROLLOUT}name", "vllm", "verl's default engine, written out"),
    To("method.samples", f"{ROLLOUT}n", note="answers per prompt"),
    To("method.temperature", f"{ROLLOUT}temperature"),
    To("method.max_tokens", f"{ROLLOUT}response_length"),
    To("prompt_tokens", f"{ROLLOUT}prompt_length"),
    To("inference_tp", f"{ROLLOUT}tensor_model_parallel_size"),
    Fix(f"{ROLLOUT}tensor_model_parallel_size", _tp, lambda r: "the teacher's TP: " + knobs.tp(
        r.method.teacher.model, knobs.gpus_per_node(r))[1],  # type: ignore[union-attr]
        when=lambda r: r.inference_tp is None),
    Fix(f"{ROLLOUT}gpu_memory_utilization", 0.85, "no actor shares the GPUs in this job"),
    Fix(f"{GEN}trainer.n_gpus_per_node", knobs.gpus_per_node, "the run's GPUs serve the teacher"),
    Fix(f"{GEN}trainer.nnodes", knobs.nodes, "the run's nodes"),
    Fix(f"{SFT}data.train_files", HERE + MESSAGES, "convert.py's `messages` rows"),
    Fix(f"{SFT}data.messages_key", "messages", "the column convert.py writes"),
    Fix(f"{SFT}data.ignore_input_ids_mismatch", True, MISMATCH),
    To("prompts", f"{SFT}data.train_batch_size", lambda r: r.prompts * r.method.samples,
       note="sft_trainer counts rows: prompts x samples teacher answers a step"),
    Fix(f"{SFT}data.use_dynamic_bsz", False, "fixed micro batches (verl's default packs by tokens)"),
    To("prompts", f"{SFT}data.micro_batch_size_per_gpu", micro, note=knobs.RULES["micro"]),
    To("prompt_tokens", f"{SFT}data.max_length", lambda r: r.prompt_tokens + r.method.max_tokens,
       note="prompt_tokens + max_tokens: longer rows are refused (data.truncation error)"),
    To("model", f"{SFT}model.path"),
    To("lora", f"{SFT}model.lora_rank", lambda r: r.lora_rank if r.lora else 0,
       note=lambda r: "LoRA on every linear layer" if r.lora else "0: full weights"),
    To("lora_rank", f"{SFT}model.lora_alpha", lambda r: 2 * r.lora_rank, when=lambda r: r.lora,
       note="alpha = 2 x rank"),
    Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
    To("method.learning_rate", f"{SFT}optim.lr", lambda r: r.learning_rate,
       note="verl's own SFT default 1e-5 (trainer/config/optim/fsdp.yaml) is not used"),
    Fix(f"{SFT}trainer.total_epochs", 1, "convert.py writes a row for every step: one pass"),
    Fix(f"{SFT}trainer.seed", lambda r: r.seed, "the spec's seed"),
    Drop("max_off_policy_steps", "SFT's answers all come from the frozen teacher before training: "
         "there is no policy lag to bound"),
    To("eval.examples", "<convert.py prompts --holdout-rows>", test_rows, when=lambda r: r.eval.enabled,
       note="holdout prompts the teacher answers in the same job: sft_trainer's validation loss is "
       "on those answers"),
    *[Drop(f"eval.{f}", "eval.enabled is false: sft.trainer.test_freq -1, no holdout answered",
           when=lambda r: not r.eval.enabled) for f in ("interval", "examples")],
    Fix(f"{SFT}data.val_files", HERE + VALIDATION, "convert.py's `messages` rows of the holdout",
        when=lambda r: r.eval.enabled),
    Drop("reward", "SFT trains on the teacher's answers, not a reward"),
    *[row for row in trainer_rows(SFT, "max_ckpt_to_keep")
      if getattr(row, "field", "") != "eval.examples"
      and not getattr(row, "path", "").endswith("val_before_train")],
]


def compile(run: RunSpec, *, out: str | None = None) -> Compiled:
    """SFT on teacher samples: convert, generate, convert, train (the shared pipeline,
    whileai.targets.pipeline, with these steps)."""
    return compile_run(registry.of(__name__), run, SFTSteps(out))


class SFTSteps(Steps):
    """verl's steps for SFT on teacher samples: two jobs, each override under its job's prefix
    checked against that job's composed config (sets.HydraKeys)."""

    off = OFF

    def __init__(self, out: str | None) -> None:
        self.out = out

    def refuse(self, run: RunSpec) -> None:
        if knobs.nodes(run) > 1:
            raise SpecError("nodes", run.nodes, "1 for verl's SFT on teacher samples: its "
                            "sft_trainer runs under torchrun, which needs a launch on every node, "
                            "while run.sh runs on one (the generation job alone would use Ray's "
                            "cluster); set gpus on one node, or compile SFT for prime-rl's "
                            "multi-node layout")
        if run.prompts * run.method.samples % knobs.gpus(run):
            raise SpecError("prompts", run.prompts, f"a number whose answers (prompts x samples) "
                            f"divide by the {knobs.gpus(run)} GPUs: sft_trainer splits each batch "
                            "evenly")
        self.plan = data.rows(run)

    def rows(self, run: RunSpec) -> Sequence[Row]:
        return SFT_MAP

    def story(self) -> Story:
        return lambda r: dict(flat(apply(SFT_MAP, r).doc))

    def overrides(self, doc: dict[str, Any], run: RunSpec) -> set[str]:
        """`generate.<key>` to the generation job, `sft.<key>` to sft_trainer, each against its
        config."""
        for key, value in run.overrides.items():
            head, _, rest = key.partition(".")
            if head not in JOBS or not rest:
                raise SpecError(f"overrides.{key}", value, "a key under generate. (the generation "
                                "job) or sft. (sft_trainer): verl's SFT on teacher samples is two jobs")
        return {f"{GEN}data.output_path"} | {
            k for job, name in JOBS.items()
            for k in ov.apply_overrides(doc, run.overrides, sets.HydraKeys(name), prefix=f"{job}.")}

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        self.added = added
        for job in ("generate", "sft"):  # whileai's rules where verl is lax, the generation job first
            keys = list(script.overrides_of(doc.get(job, {})))
            sets.lax_check([(("+" if f"{job}.{k}" in added else "") + k, script.hydra(v))
                            for k, v in keys], JOBS[job], run, f"{job}.")

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        plan, added = self.plan, self.added
        files = {k: v.decode() for k, v in plan.files.items()
                 if k in (data.TRAIN, data.TEST, data.GSM8K_PREP)}
        files["convert.py"] = resources.files("whileai.targets.verl").joinpath("convert.py").read_text()
        per = knobs.gpus_per_node(run)
        torchrun = f"torchrun --standalone --nnodes=1 --nproc_per_node={per}"
        source = files_of(run)[0]  # gsm8k: gsm8k_rows.py (plan.steps) writes it first
        blocks = [
            *(["\n".join(plan.steps)] if gsm8k(run) else []),
            f"python3 convert.py prompts {source} {PROMPTS} --rows {rows_needed(run)} --seed {run.seed}"
            + (f" --holdout {files_of(run)[1]} --holdout-rows {test_rows(run)}" if run.eval.enabled else ""),
            _job("python3 -m verl.trainer.main_generation_server", doc, "generate", added),
            f"python3 convert.py messages {RESPONSES} {MESSAGES}"
            + (f" --val {VALIDATION}" if run.eval.enabled else ""),
            _job(f"{torchrun} -m verl.trainer.sft_trainer", doc, "sft", added)]
        files["run.sh"] = script.run_sh(run, f"SFT on {run.method.teacher.model}'s answers "  # type: ignore[union-attr]
                                        f"on {run.taskset}", blocks, script.environment(run))
        teacher = verl_cost.teacher(run, None)
        teacher["notes"] = (*teacher.get("notes", ()), THINK)
        return Emitted(files=files, main="run.sh", commands=tuple(script.commands(run, self.out)),
                       **teacher)

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        sft = doc.get("sft", {})
        self.steps = steps = sft.get("trainer", {}).get("total_training_steps", run.steps)
        every = sft.get("trainer", {}).get("test_freq", -1)
        n = knobs.nodes(run)
        return Facts(estimator=run.method.LOSS, teacher_reads="text",
                     model=sft.get("model", {}).get("path"),
                     steps=steps, rollouts=sft.get("data", {}).get("train_batch_size"),
                     prompts=run.prompts, samples_effective=run.method.samples,
                     max_tokens=run.method.max_tokens, layout=f"{counted(knobs.gpus(run), 'GPUs')} on "
                     f"{counted(n, 'nodes')} (the teacher's job, then sft_trainer)",
                     weights=f"LoRA rank {run.lora_rank}" if run.lora else "full weights",
                     asynchrony="off-policy: the teacher answers every prompt before training",
                     learning_rate=sft.get("optim", {}).get("lr"), nodes=n,
                     eval_interval=every if isinstance(every, int) and every > 0 else None,
                     eval_off=not (isinstance(every, int) and every > 0), eval_at_start=False,
                     ignored=tuple(i.field for i in said.ignores))

    def cost(self, doc: dict[str, Any], run: RunSpec, facts: Facts) -> Cost | None:
        return verl_cost.estimate(run, steps=self.steps, prompts=run.prompts,
                                  samples=run.method.samples, max_tokens=run.method.max_tokens,
                                  eval_rollouts=0, eval_how="no validation", pool=None)

    def finish(self, compiled: Compiled) -> Compiled:
        compiled.files["README.md"] = readme.readme(compiled)
        return compiled


def _job(launcher: str, doc: dict[str, Any], job: str, added: set[str]) -> str:
    keys = list(script.overrides_of(doc.get(job, {})))
    return script.command(launcher, (script.word(k, v, f"{job}.{k}" in added) for k, v in keys))
