"""verl target: RunSpec -> a run directory whose run.sh runs verl 0.9.1: `main_ppo` for GRPO and
OPD (the teacher on verl's own GPU pool), or SFT on teacher samples as two verl jobs (sft.py).

Pure: `compile(run)` returns every file's text and the report; nothing is imported from verl,
torch or ray, and nothing is written. The field map (fieldmap.py) is the mapping; the hardware
keys follow knobs.py's rules; verl's own check (check.py) runs on the result with
`compile --check`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from whileai.catalogs.paths import get_path, set_path
from whileai.errors import SpecError, raw
from whileai.rules.facts import Facts
from whileai.rules.tokenizers import refuse_measured
from whileai.spec.run import OPD, RunSpec
from whileai.targets import overrides as ov
from whileai.targets import registry
from whileai.targets.compiled import Compiled, Fixed, counted
from whileai.targets.fieldmap import Row, apply
from whileai.targets.pipeline import Emitted, Steps, compile_run
from whileai.targets.story import Story, flat
from whileai.targets.verl import cost as verl_cost
from whileai.targets.verl import data, knobs, mix, readme, script, sets
from whileai.targets.verl import fieldmap as fm
from whileai.targets.verl.fieldmap import ARR, FIELD_MAP, LOSS, OFF, POOL, TEACHER, samples, test_rows
from whileai.targets.verl.pin import TARGET

if TYPE_CHECKING:
    from whileai.cost.estimate import Cost

OPSD_ISSUE = "https://github.com/volcengine/verl/issues/6827"


def refuse(run: RunSpec) -> None:
    """What verl 0.9.1 cannot run, one line each."""
    if run.method.type == "opsd":
        raise SpecError("method.type", "opsd", f"grpo, opd or sft for verl: {TARGET} has no on-policy "
                        f"self-distillation (feature issue #6827, {OPSD_ISSUE}; PRs #6833, #6909 "
                        "open); compile OPSD for trl or prime-rl")
    divergence = getattr(run.method, "divergence", None)
    if run.method.type == "opd" and divergence not in LOSS:
        raise SpecError("method.divergence", divergence, f"reverse_kl or forward_kl for {TARGET}: its "
                        "distillation losses (kl, k1..k3, forward_kl_topk: trainer/distillation/"
                        "losses.py:305,370) have no JSD; compile JSD for trl")
    if run.sources:
        mix.refuse(run)
        data.check_sources(run)
    if not run.method.off_policy:  # verl's teacher scores the student's token ids (SFT: text)
        refuse_measured(run, "verl")
    if run.then is not None:
        raise SpecError("then", raw("a second stage"), "unset for verl: compile each stage as its "
                        "own run (stage 2's model: stage 1's merged weights, verl's model_merger)")


def compile(run: RunSpec, *, out: str | None = None) -> Compiled:
    """Compile a run spec to a verl run directory (relative name -> text). Writes nothing: one
    pass through the shared pipeline (whileai.targets.pipeline) with verl's steps (SFT on teacher
    samples: whileai.targets.verl.sft's)."""
    refuse(run)
    if run.method.off_policy:
        from whileai.targets.verl import sft

        return sft.compile(run, out=out)
    return compile_run(registry.of(__name__), run, VerlSteps(out))


class VerlSteps(Steps):
    """verl's steps for `main_ppo` (whileai.targets.pipeline): the batch rules and the data plan
    before the map, the epochs before the overrides, the overrides against the composed config
    (sets.HydraKeys), an OPD teacher's pool after them, whileai's rules where verl is lax on the
    final command line."""

    off = OFF

    def __init__(self, out: str | None) -> None:
        self.out = out

    def refuse(self, run: RunSpec) -> None:
        self.n = samples(run)
        knobs.check_batch(run, self.n)
        self.plan = data.rows(run)

    def rows(self, run: RunSpec) -> Sequence[Row]:
        return FIELD_MAP + (mix.rows(run) if run.sources else [])

    def story(self) -> Story:
        return _story

    def derive(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        train_rows = fm.rows(run)[0]
        set_path(doc, "trainer.total_epochs", knobs.epochs(run.steps, run.prompts, train_rows))
        return [Fixed(path="trainer.total_epochs", value=doc["trainer"]["total_epochs"],
                      reason=f"enough passes over the {train_rows} training rows for every step "
                      "(verl stops at total_training_steps or total_epochs, whichever comes first)")]

    def keys(self) -> ov.OverrideKeys:
        return sets.HydraKeys("main_ppo")

    def settle(self, doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
        return teacher_pool(doc, run) if isinstance(run.method, OPD) else []

    def check(self, doc: dict[str, Any], run: RunSpec, added: set[str]) -> None:
        self.env = script.environment(run)
        self.words = words = list(script.overrides_of(doc))
        mix.own_entries(run)
        added = added | {k for k, _ in words if k.startswith(mix.MODELS + ".")
                         and not k.startswith(f"{mix.MODELS}.{mix.DEFAULT}.")}  # named teachers: +
        sets.lax_check([(("+" if k in added else "") + k, script.hydra(v)) for k, v in words],
                       "main_ppo", run)
        self.added = added

    def emit(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Emitted:
        plan, added = self.plan, self.added
        what = f"{run.method.type.upper()} on {run.taskset}"
        files = {name: text.decode() for name, text in plan.files.items()}
        steps = ["\n".join(plan.steps)] if plan.steps else []  # gsm8k: verl's preprocessing first
        files["run.sh"] = script.run_sh(run, what, [*steps, script.command(
            "python3 -m verl.trainer.main_ppo",
            (script.word(k, v, k in added) for k, v in self.words), ' "$@"')], self.env)
        if knobs.nodes(run) > 1:
            files[script.SLURM] = script.slurm(run)  # no runtime_env.yaml: no Ray working_dir
        self.pool = knobs.pool(run)
        reads = [replace(r, note=f"{r.note}; {plan.source}") if r.path == "data.train_files" else r
                 for r in said.reads]
        return Emitted(files=files, main="run.sh", reads=tuple(reads),
                       commands=tuple(script.commands(run, self.out)),
                       **verl_cost.teacher(run, self.pool))

    def facts(self, doc: dict[str, Any], run: RunSpec, said: ov.Account) -> Facts:
        return facts(run, doc, [i.field for i in said.ignores])

    def cost(self, doc: dict[str, Any], run: RunSpec, facts: Facts) -> Cost | None:
        pool = self.pool
        rollouts, how = verl_cost.evals(run, facts.steps or run.steps, test_rows(run),
                                        facts.eval_interval, bool(facts.eval_at_start))
        return verl_cost.estimate(
            run, steps=facts.steps or run.steps, prompts=run.prompts, samples=self.n,
            max_tokens=facts.max_tokens or run.method.max_tokens, eval_rollouts=rollouts,
            eval_how=how, pool=pool)

    def finish(self, compiled: Compiled) -> Compiled:
        note = verl_cost.pools_note(compiled.run, compiled.cost, self.pool)
        if note:  # the slowest pool, known once the cost is
            compiled = replace(compiled, notes=(*compiled.notes, note))
        compiled.files["README.md"] = readme.readme(compiled)
        return compiled


def teacher_pool(doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
    """The teacher's pool, after the overrides, as knobs.pool places it (the pool keys an
    override sets kept): its TP, its replicas filling the pool (num_replicas x TP = the pool)."""
    pool = knobs.pool(run)
    assert pool is not None
    if pool.each:
        return teachers_pool(doc, run, pool)
    values = dict(zip(POOL, (pool.per_node, pool.nnodes, pool.replicas, pool.tp), strict=True))
    why = {POOL[0]: f"the teacher's pool, {pool.placed}: num_replicas x TP = {pool.replicas} x "
                    f"{pool.tp} (workers/config/distillation.py:281-287)",
           POOL[1]: "the teacher's pool on one node" if pool.nnodes == 1 else "the teacher's pool's nodes",
           POOL[2]: "replicas filling the pool", POOL[3]: f"teacher TP: {pool.why}"}
    out = []
    for key in POOL:
        if key not in run.overrides:
            set_path(doc, key, values[key])
            out.append(Fixed(path=key, value=values[key], reason=why[key]))
    return out + teacher_serving(doc, run)


def teachers_pool(doc: dict[str, Any], run: RunSpec, pool: knobs.Pool) -> list[Fixed]:
    """Several teachers' pool and entries: one pool, each named entry's replicas, TP and serving
    keys (a named entry has none of teacher_model's YAML defaults and interpolations, so its
    engine, memory and context are written out: the keys verl's MOPD example writes,
    examples/on_policy_distillation_trainer/run_qwen3_8b_mopd_fsdp.sh)."""
    data = doc.get("data", {})
    prompt, response = _int(data.get("max_prompt_length")), _int(data.get("max_response_length"))
    out: list[Fixed] = []
    pool_keys: tuple[tuple[str, int, str], ...] = (
            ("distillation.n_gpus_per_node", pool.per_node, f"the teachers' pool, {pool.placed}: the "
             "sum of num_replicas x TP over the teachers (workers/config/distillation.py:274-287)"),
            ("distillation.nnodes", pool.nnodes, "the teachers' pool on one node" if pool.nnodes == 1
             else "the teachers' pool's nodes"))
    for key, n, said in pool_keys:
        if key not in run.overrides:
            set_path(doc, key, n)
            out.append(Fixed(path=key, value=n, reason=said))
    for entry, replicas, tp, why in pool.each:
        at = f"{mix.MODELS}.{entry}."
        for key, value, reason in (
                ("num_replicas", replicas, "its replicas in the teachers' pool"),
                ("inference.name", get_path(doc, f"{ARR}.rollout.name", "vllm"), "the student's engine "
                 "(teacher_model's YAML takes it by interpolation; a named entry has none)"),
                ("inference.tensor_model_parallel_size", tp, f"teacher TP: {why}"),
                ("inference.gpu_memory_utilization", knobs.TEACHER_MEMORY, knobs.RULES["teacher_memory"]),
                ("inference.prompt_length", prompt, "the student's prompt length (teacher_model's YAML "
                 "interpolates it; verl adds the response to it: distillation.py:184)"),
                ("inference.response_length", response, "the student's response length"),
                ("inference.max_model_len", prompt + response + 1, knobs.RULES["teacher_context"])):
            if at + key not in run.overrides:
                set_path(doc, at + key, value)
                out.append(Fixed(path=at + key, value=value, reason=reason))
    return out


def teacher_serving(doc: dict[str, Any], run: RunSpec) -> list[Fixed]:
    """The teacher's vLLM memory and context, after the overrides (the context from the prompt
    and response lengths they leave): verl's defaults are 0.5 and the model's whole context."""
    data = doc.get("data", {})
    context = _int(data.get("max_prompt_length")) + _int(data.get("max_response_length")) + 1
    values = {f"{TEACHER}.inference.gpu_memory_utilization": (knobs.TEACHER_MEMORY,
                                                              knobs.RULES["teacher_memory"]),
              f"{TEACHER}.inference.max_model_len": (context, knobs.RULES["teacher_context"])}
    out = []
    for key, (value, reason) in values.items():
        if key not in run.overrides:
            set_path(doc, key, value)
            out.append(Fixed(path=key, value=value, reason=reason))
    return out


def facts(run: RunSpec, doc: dict[str, Any], ignored: list[str]) -> Facts:
    """What verl will do, read from the compiled overrides (the user's included)."""
    arr = doc.get(ARR, {})
    rollout, trainer = arr.get("rollout", {}), doc.get("trainer", {})
    n, prompts = rollout.get("n", samples(run)), doc.get("data", {}).get("train_batch_size", run.prompts)
    every = trainer.get("test_freq", -1)
    lora = arr.get("model", {}).get("lora_rank", 0)
    opd = isinstance(run.method, OPD)
    mode = get_path(doc, "distillation.distillation_loss.loss_mode", None) if opd else None
    return Facts(
        estimator="sampled_token" if mode == "k1" else "full_vocab" if mode else run.method.LOSS,
        support_top_k=get_path(doc, "distillation.distillation_loss.topk", None)
        if mode == "forward_kl_topk" else None,
        divergence={"k1": "reverse_kl", "forward_kl_topk": "forward_kl"}.get(str(mode)) if opd else None,
        top_p=rollout.get("top_p", 1.0), model=arr.get("model", {}).get("path", run.model),
        steps=trainer.get("total_training_steps", run.steps),
        rollouts=prompts * n if isinstance(prompts, int) and isinstance(n, int) else None,
        prompts=prompts, samples_effective=n, max_tokens=doc.get("data", {}).get("max_response_length"),
        layout=f"{counted(knobs.gpus(run), 'GPUs')} on {counted(knobs.nodes(run), 'nodes')}"
        " (rollout and actor colocated)", weights=f"LoRA rank {lora}" if lora else "full weights",
        asynchrony="synchronous (on-policy every step)",
        learning_rate=arr.get("actor", {}).get("optim", {}).get("lr"),
        eval_interval=every if isinstance(every, int) and every > 0 else None,
        eval_off=not (isinstance(every, int) and every > 0),
        eval_at_start=bool(trainer.get("val_before_train", True)) and isinstance(every, int) and every > 0,
        nodes=knobs.nodes(run), output_dir=trainer.get("default_local_dir"), ignored=tuple(ignored))


def _story(run: RunSpec) -> dict[str, Any]:
    return dict(flat(apply(FIELD_MAP, run).doc))



def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 1
