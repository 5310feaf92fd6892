"""What prime-rl's loader adds beyond its schema, plus the renames people trip on.

`check_document(doc)` is what `whileai check CONFIG.toml` runs and what every compiled file
passes: the pinned catalogue, then the loader's cross-field rules, with rename hints first.
"""

from __future__ import annotations

import re
from typing import Any

from whileai.catalog import Catalog, Problem, prime_rl
from whileai.paths import get_path

# path (or trailing key) in old configs → what it is now
RENAMES: list[tuple[str, str]] = [
    (r"(^|\.)max_tokens$", "renamed to max_completion_tokens (per turn)"),
    (r"(^|\.)rollouts_per_example$", "renamed to orchestrator.group_size"),
    (r"^orchestrator\.sampling(\.|$)", "moved to [orchestrator.train.sampling]"),
    (r"^orchestrator\.train\.env(\.|$|\[)", "renamed to [[orchestrator.train.source]]"),
    (r"^max_off_policy_steps$", "moved to orchestrator.max_off_policy_steps (top level is rejected)"),
    (r"^orchestrator\.seed$", "removed: prime-rl has no run seed (only inference.vllm.seed)"),
    (r"(^|\.)(max_async_level|async_level)$", "removed; asynchrony is orchestrator.max_off_policy_steps"),
    (r"(^|\.)eval_base_model$", "removed"),
]
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"
DEFAULT_PORT = 8000


def rename_hint(path: str) -> str | None:
    bare = re.sub(r"\[\d+\]", "", path)
    return next((hint for pat, hint in RENAMES if re.search(pat, bare)), None)


def renderer_for(model: str, renderers: dict[str, str]) -> tuple[str, str]:
    """The renderer prime-rl should use for a model, and why (explicit, never 'auto')."""
    if model in renderers:
        return renderers[model], "the model's entry in prime-rl's model->renderer map"
    prefixes = [k for k in renderers if model.startswith(k) and model[len(k):][:1] in "-._"]
    if prefixes:
        base = max(prefixes, key=len)
        return renderers[base], (
            f"a fine-tune of {base} (renderer map entry); 'auto' would reject this name"
        )
    name = model.split("/")[-1].lower()
    org = model.split("/")[0].lower() if "/" in model else ""
    by_family = [
        (r"qwen3\.5", "qwen3.5"), (r"qwen3\.6", "qwen3.6"), (r"qwen3-vl", "qwen3-vl"),
        (r"qwen3", "prime-qwen3" if org == "primeintellect" else "qwen3"),
        (r"llama-?3", "llama-3"), (r"gemma-?4", "gemma4"), (r"gpt-oss", "gpt-oss"),
        (r"glm-?4\.5", "glm-4.5"), (r"kimi-k2\.5", "kimi-k2.5"), (r"kimi-k2", "kimi-k2"),
        (r"minimax-m2", "minimax-m2"), (r"deepseek-r1", "deepseek-r1"),
        (r"deepseek-v3", "deepseek-v3"),
    ]
    for pat, renderer in by_family:
        if re.search(pat, name):
            return renderer, f"the {renderer} family by name; 'auto' would reject this name"
    return "default", "no family renderer known for this name; 'default' uses its chat template"


def _problem(path: str, message: str) -> Problem:
    return Problem(path, message)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def loader_rules(doc: dict[str, Any], renderers: dict[str, str]) -> list[Problem]:
    """The loader's cross-field rules. Values of the wrong type are the schema's to report
    (cat.validate), so every rule here reads defensively and skips what it cannot judge."""
    out: list[Problem] = []
    for table in ("trainer", "orchestrator"):
        if table not in doc:
            out.append(_problem(table, f"[{table}] must be present (an empty table is enough)"))
    model = (_text(get_path(doc, "model.name")) or _text(get_path(doc, "orchestrator.model.name"))
             or DEFAULT_MODEL)
    for shared, copies in {
        "model.name": ["trainer.model.name", "orchestrator.model.name"],
        "max_steps": ["trainer.max_steps", "orchestrator.max_steps"],
        "output_dir": ["trainer.output_dir", "orchestrator.output_dir"],
        "seq_len": ["trainer.model.seq_len", "orchestrator.seq_len"],
    }.items():
        top = get_path(doc, shared)
        for c in copies:
            v = get_path(doc, c)
            if top is not None and v is not None and v != top:
                out.append(_problem(c, f"{v!r} disagrees with {shared} = {top!r}"))
    # The OPSD algo's own renderer is checked only when the orchestrator's is 'auto' as well:
    # prime-rl's reference self_distill config leaves it unset beside an explicit one.
    renderer_paths = ["orchestrator.renderer.name"]
    if (get_path(doc, "orchestrator.renderer.name") or "auto") == "auto":
        if get_path(doc, "orchestrator.algo.type") == "opsd":
            renderer_paths.append("orchestrator.algo.renderer.name")
        for i, src in enumerate(_list(get_path(doc, "orchestrator.train.source"))):
            if get_path(src, "algo.type") == "opsd":
                renderer_paths.append(f"orchestrator.train.source[{i}].algo.renderer.name")
    for p in renderer_paths:
        if (get_path(doc, p) or "auto") == "auto" and model not in renderers:
            pick, _ = renderer_for(model, renderers)
            out.append(_problem(p, f"'auto' is rejected for {model!r} (not in prime-rl's "
                                   f"model->renderer map); set it explicitly, e.g. {pick!r}"))
    batch = get_path(doc, "orchestrator.batch_size")
    group = get_path(doc, "orchestrator.group_size", 1)
    if isinstance(batch, int) and isinstance(group, int) and group > 0 and batch % group:
        out.append(_problem("orchestrator.batch_size", f"{batch} is not divisible by group_size "
                            f"{group} (batch_size counts rollouts: prompts x group_size)"))
    port = get_path(doc, "inference.server.port", DEFAULT_PORT)
    algos = [("orchestrator.algo", get_path(doc, "orchestrator.algo"))]
    for i, src in enumerate(_list(get_path(doc, "orchestrator.train.source"))):
        algos.append((f"orchestrator.train.source[{i}].algo", get_path(src, "algo")))
    teachers = []
    for path, algo in algos:
        out += _sampling_rules(path, algo)
        if isinstance(algo, dict):
            teachers += [(f"{path}.teacher", algo.get("teacher")),
                         (f"{path}.sampling.source", get_path(algo, "sampling.source"))]
    for path, t in teachers:
        if not isinstance(t, dict):
            continue
        if not isinstance(t.get("base_url", ""), str):
            continue
        if "base_url" not in t:
            out.append(_problem(f"{path}.base_url", "set the teacher's base_url explicitly (the "
                                "default points at the policy's own inference server)"))
        elif "inference" in doc and _port(t["base_url"]) == port:
            out.append(_problem(f"{path}.base_url", f"port {port} is the policy inference "
                                "server's; serve the teacher on another port"))
    client = _text(get_path(doc, "orchestrator.model.client.base_url"))
    if client and "inference" in doc and _port(client) not in (None, port):
        out.append(_problem("orchestrator.model.client.base_url",
                            f"port {_port(client)} must match inference.server.port {port}"))
    return out


# prime-rl's algorithms whose action loss is rl or ref_kl (algorithm.py): they need the live
# policy's own sampling logprobs, so only sft may sample from a frozen model
POLICY_SAMPLED = ("grpo", "echo", "max_rl", "rae", "hierarchical_grpo", "opd", "opsd")


def _sampling_rules(path: str, algo: Any) -> list[Problem]:
    """Who samples: sft needs a frozen `sampling.source` (a hosted teacher), every other
    algorithm the policy (algorithm.py :179 and :354 at the pin)."""
    if not isinstance(algo, dict):
        return []
    kind = algo.get("type", "grpo")
    source = get_path(algo, "sampling.source", "policy")
    frozen = isinstance(source, dict)
    if kind == "sft" and not frozen:
        return [_problem(f"{path}.sampling.source", "algorithm 'sft' needs a teacher to sample from: "
                         "set sampling.source to a hosted model (name and base_url), not the policy")]
    if kind in POLICY_SAMPLED and frozen:
        return [_problem(f"{path}.sampling.source", f"algorithm {kind!r} trains on the policy's own "
                         "samples (rl/ref_kl loss); a frozen sampling.source is only for 'sft'")]
    return []


def runtime_notes(doc: dict[str, Any]) -> list[Problem]:
    """Sources whose agent runtime is unset run in a remote sandbox VM by default."""
    out = []
    for kind in ("train", "eval"):
        for i, src in enumerate(_list(get_path(doc, f"orchestrator.{kind}.source"))):
            env = src.get("env", {}) if isinstance(src, dict) else {}
            for role, cfg in env.items() if isinstance(env, dict) else []:
                if isinstance(cfg, dict) and "harness" in cfg and "runtime" not in cfg:
                    out.append(_problem(f"orchestrator.{kind}.source[{i}].env.{role}.runtime",
                                        "unset: the default is a remote sandbox VM; set "
                                        "type = 'subprocess' to run locally"))
    return out


def _port(url: str) -> int | None:
    m = re.match(r"https?://[^/:]+(?::(\d{1,5}))?(?:/|\Z)", url)
    if not m:
        return None
    return int(m.group(1)) if m.group(1) else (443 if url.startswith("https") else 80)


def check_document(doc: dict[str, Any], catalog: Catalog | None = None) -> list[Problem]:
    """Every problem prime-rl's loader would raise for this document, with rename hints."""
    cat = catalog or prime_rl()
    problems = []
    for p in cat.validate(doc):
        hint = rename_hint(p.path) if p.message.startswith("unknown key") else None
        problems.append(Problem(p.path, f"unknown key: {hint}") if hint else p)
    renderers = cat.schema.get("x-prime-rl", {}).get("model_renderers", {})
    loader = loader_rules(doc, renderers) + out_of_range(doc)
    said = {p.path for p in loader}  # the loader's message is the more specific one
    return loader + [p for p in problems if p.path not in said]


def out_of_range(node: Any, path: str = "") -> list[Problem]:
    """Integers beyond TOML's signed 64-bit range (Python's TOML readers accept them; torch,
    vLLM and every other TOML reader do not)."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in out_of_range(v, f"{path}.{k}" if path else str(k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in out_of_range(v, f"{path}[{i}]")]
    if isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**63:
        return [_problem(path, f"an integer of {len(str(abs(node)))} digits is beyond TOML's signed "
                               "64-bit range")]
    return []


def looks_like_spec(doc: dict[str, Any]) -> bool:
    """A whileai run spec (taskset + method), not a prime-rl config."""
    return "taskset" in doc and "method" in doc
