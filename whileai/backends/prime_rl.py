"""prime-rl backend: RunSpec → a TOML for `uv run rl @ file.toml`, pinned to one commit.

The field map below is the whole mapping; the report, `whileai explain` and the docs are
derived from it. Output is checked against the pinned catalogue and the loader's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from shlex import quote
from typing import Any

import tomli_w

from whileai import __version__
from whileai.backends import overrides as ov
from whileai.backends.prime_rl_algo import (
    algo_rows,
    renderer,
    renderer_reason,
    serve_command,
    teacher,
    teacher_memory_rows,
)
from whileai.backends.prime_rl_rules import check_document, rename_hint
from whileai.catalog import prime_rl
from whileai.errors import SpecError, raw
from whileai.fieldmap import Drop, Fix, Row, To, apply, get_path
from whileai.report import Compiled
from whileai.rules import findings
from whileai.spec import RunSpec

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
VERSION = "0.8.0"
TARGET = f"prime-rl {COMMIT[:7]} ({VERSION})"

TRAIN = "orchestrator.train.source[0]"
EVAL = "orchestrator.eval.source[0]"


# Tasksets name their own agent roles: `agent` for single-agent ones, players for games.
ROLES: dict[str, tuple[str, ...]] = {"kuhn-poker": ("player0", "player1")}


def roles(taskset: str) -> tuple[str, ...]:
    base = taskset.split("/")[-1].split("@")[0]
    return ROLES.get(base, ("agent",))


def _has_role(role: str) -> Any:
    return lambda r: role in roles(r.taskset)


def _lora(r: RunSpec) -> bool:
    return r.lora


ALGO = algo_rows("orchestrator.algo")
FIELD_MAP: list[Row] = [
    ALGO[0],  # method.type -> orchestrator.algo.type, first: the report opens with it
    To("taskset", f"{TRAIN}.name"),
    To("taskset", f"{TRAIN}.env.taskset.id"),
    To("taskset", f"{EVAL}.name"),
    To("taskset", f"{EVAL}.env.taskset.id", note="the holdout is the taskset's eval split"),
    *[Fix(f"{src}.env.{role}.{key}", value, why, when=_has_role(role))
      for src in (TRAIN, EVAL) for role in ("agent", "player0", "player1")
      for key, value, why in (
          ("harness.id", "null", "no agent harness: the taskset drives the episode"),
          ("runtime.type", "subprocess", "always set the runtime: its default is a remote sandbox VM"))],
    To("model", "model.name", note="shared: fills trainer, orchestrator and inference"),
    Fix("orchestrator.renderer.name", renderer, renderer_reason),
    To("steps", "max_steps"),
    To("prompts", "orchestrator.batch_size", lambda r: r.rollouts,
       note=lambda r: f"prime-rl counts rollouts: {r.prompts} prompts x {r.method.samples} samples"),
    To("method.samples", "orchestrator.group_size"),
    To("gpus", "deployment.num_train_gpus", lambda r: r.train_gpus,
       note=lambda r: f"{r.gpus} GPUs minus {r.infer_gpus} for inference"),
    To("gpus", "deployment.num_infer_gpus", lambda r: r.infer_gpus,
       note="half of the GPUs, rounded down"),
    To("inference_gpus", "deployment.num_infer_gpus"),
    Fix("deployment.type", "single_node", "one machine; inference takes the first GPUs"),
    Fix("inference", {}, "rl launches the policy's inference server"),
    To("lora", "inference.vllm.enable_lora", lambda r: True, when=_lora),
    To("lora", "orchestrator.model.lora.name", lambda r: f"whileai-r{r.lora_rank}", when=_lora,
       note="the adapter name inference serves"),
    To("lora", "inference.vllm.enable_lora", lambda r: False, when=lambda r: not r.lora,
       note="full weights: no [trainer.model.lora]"),
    To("lora_rank", "trainer.model.lora.rank", when=_lora),
    To("lora_rank", "inference.vllm.max_lora_rank", when=_lora, note="vLLM must admit the rank"),
    Drop("lora_rank", "lora is false: full weights are trained", when=lambda r: not r.lora),
    Drop("seed", "prime-rl has no run seed (orchestrator.seed was removed); only vLLM sampling "
         "takes one, --set inference.vllm.seed=N"),
    To("prompt_tokens", "seq_len", lambda r: r.prompt_tokens + r.method.max_tokens,
       note="seq_len = prompt_tokens + max_tokens"),
    To("max_off_policy_steps", "orchestrator.max_off_policy_steps"),
    To("eval.interval", "orchestrator.eval.interval", lambda r: r.eval_interval),
    Fix("orchestrator.eval.interval", lambda r: r.eval_interval,
        "eval.interval unset: a quarter of the steps", when=lambda r: r.eval.interval is None),
    To("eval.examples", "orchestrator.eval.num_examples"),
    To("monitor.project", "monitors.wandb.project"),
    To("monitor.entity", "monitors.wandb.entity"),
    To("monitor.name", "monitors.wandb.name"),
    Fix("monitors.wandb.name", lambda r: f"{r.method.type}-{r.taskset}", "monitor.name unset",
        when=lambda r: r.monitor is not None and r.monitor.name is None),
    To("monitor.group", "monitors.wandb.group"),
    To("monitor.tags", "monitors.wandb.tags", when=lambda r: bool(r.monitor and r.monitor.tags)),
    Drop("monitor.tags", "empty", when=lambda r: bool(r.monitor and not r.monitor.tags)),
    To("output_dir", "output_dir"),
    Drop("data", "prime-rl reads its tasks from the taskset package named by taskset"),
    Drop("reward", "prime-rl scores rollouts with the taskset's own rubric"),
    Fix("ckpt", {}, "checkpoint at the end of training"),
    # the method: the per-run rows here, the algo table from prime_rl_algo (a mixture's source
    # reuses it at orchestrator.train.source[i].algo)
    To("method.temperature", "orchestrator.train.sampling.temperature",
       note=lambda r: "the teacher samples the training completions" if r.method.type == "sft" else ""),
    To("method.max_tokens", "orchestrator.train.sampling.max_completion_tokens"),
    To("method.max_tokens", "orchestrator.eval.sampling.max_completion_tokens"),
    To("method.learning_rate", "trainer.optim.lr", lambda r: r.learning_rate,
       note=lambda r: "" if r.method.learning_rate else
       f"default for {r.method.type} with {'LoRA' if r.lora else 'full weights'}"),
    *ALGO[1:],
    *teacher_memory_rows(),
]


def facts(run: RunSpec, doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """What prime-rl will do, read from the compiled document (overrides included) where
    given: the warning rules and the report's summary use these, not the spec's values."""
    m = run.method
    out: dict[str, Any] = {
        "estimator": {"grpo": "policy_gradient", "sft": "cross_entropy"}.get(m.type, "sampled_token"),
        "support_top_k": None,
        "anchor": "live" if m.type == "opsd" else None,
        "top_p": 1.0,
        "anchor_requested": getattr(m, "anchor", None),
    }
    if doc is None:
        return out
    steps = get_path(doc, "orchestrator.max_steps", get_path(doc, "max_steps"))
    batch, group = get_path(doc, "orchestrator.batch_size"), get_path(doc, "orchestrator.group_size")
    infer, train = get_path(doc, "deployment.num_infer_gpus"), get_path(doc, "deployment.num_train_gpus")
    rank = get_path(doc, "trainer.model.lora.rank")
    out |= {
        "model": get_path(doc, "model.name", run.model),
        "steps": steps,
        "rollouts": batch,
        "samples_effective": group,
        "prompts": batch // group if isinstance(batch, int) and isinstance(group, int) and group
        else "?",
        "layout": f"{infer + train} GPUs ({infer} inference, {train} trainer)"
        if isinstance(infer, int) and isinstance(train, int) else "GPUs as overridden",
        "weights": f"LoRA rank {rank}" if rank is not None else "full weights",
        "asynchrony": f"max_off_policy_steps {get_path(doc, 'orchestrator.max_off_policy_steps')}",
        "learning_rate": get_path(doc, "trainer.optim.lr", run.learning_rate),
        "eval_interval": get_path(doc, "orchestrator.eval.interval", 100)
        if isinstance(get_path(doc, "orchestrator.eval"), dict) else None,
        "eval_at_start": not get_path(doc, "orchestrator.eval.skip_first_step", False),
    }
    return out


def compile(run: RunSpec, *, name: str | None = None, extra: Sequence[Row] = ()) -> Compiled:
    """Compile a run spec to prime-rl TOML. Pure: returns text and report, writes nothing.

    extra: rows applied after the field map (a stage of a two-stage run: its run name, where its
    weights land); a key set twice keeps the later value, and the report shows that one."""
    if run.gpus > 8:
        raise SpecError("gpus", run.gpus, "at most 8: prime-rl's single_node deployment holds "
                        "gpus_per_node GPUs; whileai does not write multi-node configs")
    t = teacher(run.method)
    if t is not None and t.port == 8000:
        raise SpecError("method.teacher.url", t.url,
                        "a port other than 8000, where rl serves the policy itself")
    applied = apply([*FIELD_MAP, *extra], run)
    doc = applied.doc
    doc.setdefault("trainer", {})
    reads, ignores = list(applied.reads), list(applied.ignores)
    fixed = list({f.path: f for f in applied.fixed}.values())  # the later of two writers wins
    catalog = prime_rl()
    ov.apply_overrides(doc, run.overrides, catalog, hint=rename_hint)
    ov.override_reads(reads, ignores, fixed, run.overrides)
    problems = check_document(doc, catalog)
    if problems:
        p = problems[0]
        raise SpecError(p.path or "config", raw("the compiled file"), f"prime-rl would reject "
                        f"it: {p.message}")
    fname = name or f"{run.method.type}.toml"
    commands = _commands(run, fname)
    known = facts(run, doc)
    text = _header(run, fname) + tomli_w.dumps(_ordered(doc))
    return Compiled(
        backend="prime-rl", target=TARGET, run=run, files={fname: text}, main=fname,
        reads=tuple(reads), ignores=tuple(ignores), fixed=tuple(fixed),
        warnings=findings(run, known), commands=tuple(commands), data=known,
    )


def _commands(run: RunSpec, fname: str) -> list[str]:
    t = teacher(run.method)
    cmds = [serve_command(t)] if t is not None else []
    cmds.append(f"uv run rl @ {quote(fname)}")
    return cmds


def _header(run: RunSpec, fname: str) -> str:
    return (
        f"# written by whileai {__version__} for {TARGET}: {run.method.type} on {run.taskset}\n"
        f"# run: uv run rl @ {quote(fname)}    (what each key does: whileai explain <spec>)\n\n"
    )


def _ordered(doc: dict[str, Any]) -> dict[str, Any]:
    """Scalars first, then tables in a fixed, readable order."""
    order = ["model", "deployment", "trainer", "orchestrator", "inference", "monitors", "ckpt"]
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: doc[k] for k in order if k in doc and isinstance(doc[k], dict)}
    rest = {k: v for k, v in doc.items() if k not in scalars and k not in tables}
    return scalars | tables | rest
