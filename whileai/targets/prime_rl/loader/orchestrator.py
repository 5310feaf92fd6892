"""The orchestrator's load-time rules (prime-rl 559b447 configs/orchestrator.py and
configs/algorithm.py): sources and their env, the eval table, the algorithms, batching and the
renderer. `rl` runs them at `orchestrator`, `orchestrator` on the whole file, `evals` and
`sft` run the eval table's rules at `eval`, `env-server` the env rule.
"""

from __future__ import annotations

from typing import Any

from whileai.catalogs import tasksets as taskset_catalog
from whileai.catalogs.targets import plugin_key
from whileai.targets.prime_rl import renderer
from whileai.targets.prime_rl.loader.trainer import protected_env_vars
from whileai.targets.prime_rl.loader.view import Found, RuleSet, View

SOURCE = RuleSet("a train or eval source (EnvConfig)")
EVAL = RuleSet("EvalConfig")
ALGO = RuleSet("an algorithm (AlgoConfig)")
ORCH = RuleSet("OrchestratorConfig")
FROZEN_OK = ("sft",)  # algorithms whose loss (ce) may sample from a frozen model


def env_id(source: View) -> str:
    """The source's resolved env id: the env id, else the taskset id (orchestrator.py:142)."""
    env = source["env"]
    if not isinstance(env, dict):
        return ""
    ident, taskset = env.get("id"), env.get("taskset")
    tid = taskset.get("id") if isinstance(taskset, dict) else None
    if ident and tid:
        return f"{ident}+{tid}"
    return str(ident or tid or "")


def name(source: View) -> str:
    return source["name"] or env_id(source)


@SOURCE("env-configured", "orchestrator.py:150")
def _env(s: View) -> Found:
    if not env_id(s):
        return "env", 'no env configured: set env = { taskset = { id = "<id>" } }'
    if name(s) == "agg":
        return "name", "'agg' is reserved for cross-env metrics; use another name"
    return None


def _duplicates(kind: str, sources: list[View]) -> Found:
    names = [name(s) for s in sources]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        return "source", f"duplicate {kind} source names {dup}: give each source its own name"
    return None


@EVAL("eval-needs-source", "orchestrator.py:342")
def _eval_sources(e: View) -> Found:
    if not e.items("source"):
        return ("source", "an eval table needs at least one source; to turn evaluation off leave "
                "the table out (or write eval = \"None\")")
    return None


@EVAL("eval-unique-names", "orchestrator.py:352")
def _eval_names(e: View) -> Found:
    return _duplicates("eval", e.items("source"))


@EVAL("eval-sources", "orchestrator.py:150")
def _eval_each(e: View) -> Found:
    return [p for s in e.items("source") for p in SOURCE.run(s)]


def _frozen(source: Any) -> bool:
    return isinstance(source, dict)


@ALGO("frozen-source-loss", "algorithm.py:179")
def _frozen_loss(a: View) -> Found:
    kind = a["type"]
    if kind not in FROZEN_OK and _frozen(a["sampling.source"]):
        return "sampling.source", (f"algorithm {kind!r} trains on the live policy's own sampling "
                                   "logprobs; only 'sft' may sample from a frozen model")
    return None


@ALGO("sft-needs-teacher", "algorithm.py:354")
def _sft_policy(a: View) -> Found:
    if a["type"] == "sft" and not _frozen(a["sampling.source"]):
        return "sampling.source", ("algorithm 'sft' needs a frozen model to sample from (an inline "
                                   "table with name and base_url), not the policy")
    return None


@ALGO("frozen-base-url", "algorithm.py:60")
def _base_url(a: View) -> Found:
    out = []
    for rel in ("teacher", "sampling.source"):
        model = a.raw(rel)
        if isinstance(model, dict) and "base_url" not in model:
            out.append((f"{rel}.base_url", "a frozen model needs base_url written explicitly "
                        "(prime-rl only hosts the policy)"))
    return out


@ALGO("echo-role", "algorithm.py:130")
def _echo(a: View) -> Found:
    if a["type"] == "echo" and a.has("roles"):
        roles = a["roles"]
        if isinstance(roles, dict) and all(roles.get(r) in (None, "None")
                                           for r in ("system", "user", "assistant", "tool")):
            return "roles", "echo needs at least one role (system, user, assistant or tool)"
    return None


@ORCH("sources", "orchestrator.py:150, :287")
def _sources(o: View) -> Found:
    train = o.items("train.source")
    found: list[Any] = [p for s in train for p in SOURCE.run(s)]
    dup = _duplicates("train", train)
    return found + ([(f"train.{dup[0]}", dup[1])] if isinstance(dup, tuple) else [])


@ORCH("algorithms", "algorithm.py; orchestrator.py:563")
def _algos(o: View) -> Found:
    views = [o.at("algo")] + [s.at("algo") for s in o.items("train.source") if s.present("algo")]
    return [p for v in views for p in ALGO.run(v)]


@ORCH("hierarchical-grpo-env", "algorithm.py:262 (orchestrator.py:572)")
def _hierarchical(o: View) -> Found:
    out = []
    for i, s in enumerate(o.items("train.source")):
        kind = s["algo.type"] if s.present("algo") else o["algo.type"]
        env = s["env"] if isinstance(s["env"], dict) else {}
        if kind != "hierarchical_grpo" or _proposer_solver(env) is not False:
            continue
        out.append((f"train.source[{i}].env", "algorithm 'hierarchical_grpo' needs the "
                    "proposer-solver env (it compares solver attempts on one proposed problem); "
                    "use 'grpo' for a flat env or 'rae' for self-play"))
    return out


def _proposer_solver(env: dict[str, Any]) -> bool | None:
    """Whether the env resolves to proposer-solver's env class (None: an unknown taskset)."""
    if env.get("id"):
        return plugin_key(env["id"]) == "proposer-solver"
    taskset = env.get("taskset")
    tid = taskset.get("id") if isinstance(taskset, dict) else None
    entry = taskset_catalog.entry(tid) if isinstance(tid, str) else None
    if entry is None:
        return None
    return bool(entry.get("env_config_class") == "ProposerSolverEnvConfig")


@ORCH("renderer-auto", "orchestrator.py:585")
def _renderer(o: View) -> Found:
    if o["renderer.name"] != "auto":
        return None
    model = o["tokenizer.name"] or o["model.name"]
    if model in renderer.model_map():
        return None
    pick = renderer.choose(str(model))
    return "renderer.name", (f"'auto' is refused for {model!r}, no key of the renderers package's "
                             f"model map; write it explicitly, e.g. name = {pick.name!r} "
                             f"({pick.origin})")


@ORCH("renderer-documented-wrong", "whileai: renderers package documentation")
def _renderer_wrong(o: View) -> Found:
    """The run's renderer, and OPSD's own (the run's algo and each source's), where the
    renderers package's documentation calls the name wrong for the model."""
    model = str(o["tokenizer.name"] or o["model.name"])
    sources = o.raw("train.source")
    rels = ["renderer.name", "algo.renderer.name"] + [
        f"train.source[{i}].algo.renderer.name"
        for i, s in enumerate(sources if isinstance(sources, list) else [])
        if isinstance(s, dict) and isinstance(s.get("algo"), dict)]
    return [(rel, msg) for rel in rels if (msg := renderer.misused(model, o[rel]))]


@ORCH("batching", "orchestrator.py:619")
def _batching(o: View) -> Found:
    batch, tokens, group = o["batch_size"], o["token_batch_size"], o.get("group_size", int, 1)
    if batch is not None and tokens is not None:
        return "token_batch_size", "set exactly one of batch_size or token_batch_size"
    if batch is None and tokens is None:
        batch = 128
    if isinstance(batch, int) and group and batch % group:
        return "batch_size", (f"{batch} is not divisible by group_size {group} (batch_size counts "
                              "rollouts: prompts x group_size)")
    for key in ("max_inflight", "initial_inflight"):
        value = o[f"concurrency.{key}"]
        if isinstance(value, int) and value < group:
            return f"concurrency.{key}", f"{value} is below group_size {group}"
    return None


@ORCH("concurrency-bounds", "orchestrator.py:438")
def _concurrency(o: View) -> Found:
    top, start, low = (o[f"concurrency.{k}"] for k in ("max_inflight", "initial_inflight", "min_inflight"))
    if isinstance(top, int) and isinstance(start, int) and start > top:
        return "concurrency.initial_inflight", f"{start} exceeds max_inflight {top}"
    if isinstance(top, int) and isinstance(low, int) and low > top:
        return "concurrency.min_inflight", f"{low} exceeds max_inflight {top}"
    return None


@ORCH("eval", "orchestrator.py:342")
def _eval(o: View) -> Found:
    if not o.present("eval"):
        return None
    return EVAL.run(o.at("eval"))


ORCH("env-vars-protected", "shared.py:27")(protected_env_vars)
