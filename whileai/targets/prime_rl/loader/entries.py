"""The other entry points' own rules (prime-rl 559b447 configs/sft.py, inference.py, evals.py,
env_server.py) and the table of entry points: which root class of the catalogue each one
validates (`x-prime-rl.roots`) and which rule sets it runs at which table. The multi-node
SFT rules are not mirrored (whileai compiles no multi-node SFT entry-point configs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import urlparse

from whileai.targets.prime_rl import renderer
from whileai.targets.prime_rl.loader import orchestrator as orch
from whileai.targets.prime_rl.loader import rl, trainer
from whileai.targets.prime_rl.loader.view import Found, RuleSet, View

SFT = RuleSet("SFTConfig")
INFERENCE = RuleSet("InferenceConfig")
EVALS = RuleSet("EvalsConfig")
ENV_SERVER = RuleSet("EnvServerConfig")
VLLM_MAX_LORA_RANK = 512  # inference.py:178: vLLM's largest max_lora_rank


def _data_tables(s: View) -> list[tuple[str, View]]:
    out = [("data", s.at("data"))]
    if s.present("val"):
        out.append(("val.data", s.at("val.data")))
    return out


@SFT("data-batch", "sft.py:53, :117")
def _batches(s: View) -> Found:
    found = []
    for rel, d in _data_tables(s):
        batch, micro = d.get("batch_size", int), d.get("micro_batch_size", int)
        if isinstance(batch, int) and isinstance(micro, int) and micro and (batch % micro or batch < micro):
            found.append((f"{rel}.batch_size", f"{batch} must be a multiple of micro_batch_size {micro}"))
        lengths = {k: len(d[k]) for k in ("subsets", "splits", "probabilities") if isinstance(d[k], list)}
        if len(set(lengths.values())) > 1:
            found.append((rel, f"subsets, splits and probabilities must have one entry each: {lengths}"))
    return found


@SFT("gpus-per-node", "sft.py:165")
def _train_gpus(s: View) -> Found:
    if s["deployment.type"] == "single_node":
        gpus, per_node = s.get("deployment.num_train_gpus", int), s.get("deployment.gpus_per_node", int, 8)
        if isinstance(gpus, int) and gpus > per_node:
            return "deployment.num_train_gpus", f"{gpus} exceeds gpus_per_node {per_node}"
    return None


@SFT("online-eval", "sft.py:357")
def _online_eval(s: View) -> Found:
    if not s.present("eval"):
        return ("inference", "[inference] is only used for online evals: add an [eval] table or "
                "remove it") if s.present("inference") else None
    lora, infer = s.present("model.lora"), s.present("inference")
    kind = s["weight_broadcast.type"] if s.present("weight_broadcast") else (
        "filesystem" if lora or not infer else "nccl")
    if kind == "nixl":
        return "weight_broadcast.type", "NIXL is not supported for SFT online evals"
    if kind != "filesystem" and lora:
        return "weight_broadcast.type", "LoRA needs filesystem weight transfer: set it to 'filesystem'"
    if kind != "filesystem" and s["eval.retrigger_on_resume"] is True:
        return "eval.retrigger_on_resume", "needs weight_broadcast.type = 'filesystem'"
    if s["deployment.type"] != "single_node" or not infer:
        return None
    train, evals = s.get("deployment.num_train_gpus", int, 1), s.get("deployment.num_infer_gpus", int, 1)
    if train + evals > s.get("deployment.gpus_per_node", int, 8):
        return "deployment", f"{train + evals} GPUs (train + eval inference) exceed gpus_per_node"
    if s["inference.vllm.model"] != s["model.name"]:
        return "inference.vllm.model", "differs from model.name: leave it out to inherit it"
    tp = s.get("inference.vllm.tensor_parallel_size", int, 1)
    dp = s.get("inference.vllm.data_parallel_size", int, 1)
    if tp and evals != dp * tp and evals % tp:
        return "deployment.num_infer_gpus", f"{evals} is not divisible by tensor_parallel_size {tp}"
    client = urlparse(str(s["eval.client.base_url"])).port
    if s.has("eval.client.base_url") and client != s["inference.server.port"]:
        return "eval.client.base_url", "its port differs from inference.server.port"
    return None


@SFT("typed-renderer", "sft.py:490")
def _typed_renderer(s: View) -> Found:
    if s["data.type"] == "fake" and not s.present("val"):
        return None
    model, name = s["tokenizer.name"] or s["model.name"], s["renderer.name"]
    if name == "auto" and model not in renderer.model_map():
        return "renderer.name", (f"SFT needs a typed renderer, and 'auto' finds none for {model!r}; "
                                 "name a typed renderer whose template matches the model")
    if name == "default":
        return "renderer.name", "SFT needs a typed renderer; 'default' (the chat template) is refused"
    return None


@SFT("context-parallel", "sft.py:512, :521")
def _cp(s: View) -> Found:
    cp = s.get("model.cp", int, 1)
    if cp <= 1:
        return None
    for rel, d in _data_tables(s):
        if isinstance(d["seq_len"], int) and d["seq_len"] % cp:
            return f"{rel}.seq_len", f"must be divisible by the CP degree {cp}"
        if d["micro_batch_size"] != 1:
            return f"{rel}.micro_batch_size", "must be 1 with context parallelism"
    return None


@SFT("vlm-micro-batch", "sft.py:539")
def _vlm(s: View) -> Found:
    if s.present("model.vlm"):
        for rel, d in _data_tables(s):
            if d["micro_batch_size"] != 1:
                return f"{rel}.micro_batch_size", "VLM SFT needs micro_batch_size = 1"
    return None


@SFT("renderer-documented-wrong", "whileai: renderers package documentation")
def _wrong(s: View) -> Found:
    msg = renderer.misused(str(s["tokenizer.name"] or s["model.name"]), s["renderer.name"])
    return ("renderer.name", msg) if msg else None


@SFT("nccl-needs-inference", "whileai: entrypoints/sft.py:569 launch check")
def _nccl(s: View) -> Found:
    if s["weight_broadcast.type"] == "nccl" and s.present("weight_broadcast") and not s.present("inference"):
        return "weight_broadcast.type", ("NCCL weight broadcast needs an [inference] table; "
                                         "`uv run sft` refuses to launch without one")
    return None


SFT("env-vars-protected", "shared.py:27")(trainer.protected_env_vars)


@INFERENCE("max-lora-rank", "inference.py:178")
def _lora_rank(i: View) -> Found:
    rank = i.get("vllm.max_lora_rank", int)
    if isinstance(rank, int) and rank > VLLM_MAX_LORA_RANK:
        return "vllm.max_lora_rank", f"{rank} exceeds vLLM's largest rank {VLLM_MAX_LORA_RANK}"
    return None


@INFERENCE("kv-offload-prefix-caching", "inference.py:518")
def _kv(i: View) -> Found:
    if i.present("kv_cache_offload") and i["vllm.enable_prefix_caching"] is False:
        return "vllm.enable_prefix_caching", "KV cache offloading needs prefix caching on"
    return None


INFERENCE("env-vars-protected", "shared.py:27")(trainer.protected_env_vars)


@INFERENCE("deployment-router", "inference.py:486, :503")
def _deployment(i: View) -> Found:
    from whileai.targets.prime_rl.loader.deploy import inference_rules

    prefix = f"{i.path()}." if i.path() else ""
    return inference_rules(i.doc, prefix=prefix) if isinstance(i.doc, dict) else None


@EVALS("skip-first-step-online", "evals.py:105")
def _skip(e: View) -> Found:
    if e["eval.skip_first_step"] is True and not e.present("online"):
        return "eval.skip_first_step", "only applies to online evals: add [online] or remove it"
    return None


ENV_SERVER("env-configured", "env_server.py")(lambda e: None if orch.env_id(e) else (
    "env", 'no env configured: set env = { taskset = { id = "<id>" } }'))


Prepare = Callable[[dict[str, Any]], tuple[dict[str, Any], list[tuple[str, str]]]]


class EntryPoint(NamedTuple):
    root: str  # x-prime-rl.roots key
    command: str
    rules: list[tuple[RuleSet, str, bool]]  # (rules, table, only when the table is present)
    prepare: Prepare


def _rl(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    out, conflicts = rl.propagate(doc)
    return out, [(target, f"conflicts with the shared {shared} = {value!r} (set each value in "
                  "one place: prime-rl copies shared fields into the sub-configs)")
                 for shared, target, value in conflicts]


def _sft(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """sft.py:305: model.name fills inference.vllm.model when the document has [inference]."""
    out = dict(doc)
    name = out.get("model", {}).get("name") if isinstance(out.get("model"), dict) else None
    if isinstance(out.get("inference"), dict) and name:
        vllm = out["inference"].get("vllm", {})
        if isinstance(vllm, dict) and "model" not in vllm:
            out["inference"] = {**out["inference"], "vllm": {**vllm, "model": name}}
    return out, []


def _same(doc: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    return doc, []


TRAINER_SETS = [(trainer.TRAINER, "", False), (trainer.TRAINER_ONLY, "", False),
                (trainer.STEPS, "", False), (trainer.MODEL, "model", False),
                (trainer.RESUME, "resume", True)]
ENTRIES: dict[str, EntryPoint] = {
    "rl": EntryPoint("rl", "uv run rl @ {file}", [
        (rl.RL, "", False),
        *[(rules, f"trainer.{t}" if t else "trainer", False) for rules, t, _ in TRAINER_SETS],
        (orch.ORCH, "orchestrator", False), (trainer.RESUME, "orchestrator.resume", True),
        (trainer.RESUME, "resume", True), (INFERENCE, "inference", True)], _rl),
    "sft": EntryPoint("sft", "uv run sft @ {file}", [
        (SFT, "", False), (trainer.TRAINER, "", False), (trainer.STEPS, "", False),
        (trainer.MODEL, "model", False), (trainer.RESUME, "resume", True), (orch.EVAL, "eval", True),
        (INFERENCE, "inference", True)], _sft),
    "evals": EntryPoint("evals", "uv run evals @ {file}", [(EVALS, "", False), (orch.EVAL, "eval", True)],
                   _same),
    "inference": EntryPoint("inference", "uv run inference @ {file}", [(INFERENCE, "", False)], _same),
    "orchestrator": EntryPoint("orchestrator", "uv run orchestrator @ {file}",
                          [(orch.ORCH, "", False), (trainer.RESUME, "resume", True)], _same),
    "trainer": EntryPoint("trainer", "uv run trainer @ {file}", TRAINER_SETS, _same),
    "env-server": EntryPoint("env-server", "uv run env-server @ {file}", [(ENV_SERVER, "", False)], _same),
}
