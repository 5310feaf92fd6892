"""The offline copy a rehearsal runs: the compiled prime-rl document with only what a CPU without
a hub cannot have replaced, each replacement named (`Replacement`).

    plan = offline_copy(doc, steps=2, where=Path("rehearsal"), model_dir=..., data_dir=...)
    plan.doc, plan.subs, plan.expect, plan.sources

Replaced: the policy model (a tiny local model of the same architecture family), the output
folder (inside the rehearsal's folder), `max_steps`, the taskset's data (local rows, for a
taskset that reads a hub dataset: `scope` says how, and which tasksets are refused), the batch
(whole groups, every source, counted in trainable traces as whileai's seats count them, so a step
is seconds on a CPU, not minutes), evals (two examples, at the last step), and the in-flight
bounds. Kept: everything else, in particular every teacher's name, URL and port, the LoRA adapter,
seq_len, group_size, the renderer, the taskset arguments and the env-server wiring. Standard library only.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.targets.prime_rl.rehearse import scope as taskrows
from whileai.targets.prime_rl.rehearse.scope import stand_in


@dataclass(frozen=True)
class Replacement:
    key: str
    was: Any
    now: Any
    why: str

    def line(self) -> str:
        return f"{self.key}: {self.was!r} -> {self.now!r} ({self.why})"


@dataclass
class OfflineCopy:
    doc: dict[str, Any]
    subs: list[Replacement] = field(default_factory=list)
    expect: dict[str, Any] = field(default_factory=dict)  # what the trainer stand-in checks
    sources: list[dict[str, Any]] = field(default_factory=list)  # train/eval sources: name, taskset, split


READY_S = 60
CPU_INFLIGHT = 8


def _clients(o: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every client the orchestrator waits on: the policy's and each frozen model's."""
    out = [("orchestrator.model.client", o.setdefault("model", {}).setdefault("client", {}))]
    algos = [("orchestrator.algo", o.get("algo"))] + [
        (f"orchestrator.{split}.source[{s.get('name') or i}].algo", s.get("algo"))
        for split in ("train", "eval")
        for i, s in enumerate((o.get(split) or {}).get("source") or [])
    ]
    for key, a in algos:
        if not isinstance(a, dict):
            continue
        if isinstance(a.get("teacher"), dict):
            out.append((f"{key}.teacher", a["teacher"]))
        src = (a.get("sampling") or {}).get("source")
        if isinstance(src, dict):
            out.append((f"{key}.sampling.source", src))
    return out


def _sources(o: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for split in ("train", "eval"):
        srcs = (o.get(split) or {}).get("source") or []
        out += [(split, s) for s in (srcs if isinstance(srcs, list) else [srcs])]
    return out


def needs(doc: dict[str, Any]) -> dict[str, list[str]]:
    """Per training source (its env name; "*" for any other), the streams its samples must carry
    for its algorithm: the teacher's log-probs for OPD and OPSD (a mixture's sources differ)."""
    o = doc.get("orchestrator", {})
    top = str((o.get("algo") or {}).get("type") or "grpo")
    out = {"*": _streams(top)}
    for split, s in _sources(o):
        if split == "train":
            algo: dict[str, Any] = s["algo"] if isinstance(s.get("algo"), dict) else {}
            name = str(s.get("name") or ((s.get("env") or {}).get("taskset") or {}).get("id") or "source")
            out[name] = _streams(str(algo.get("type") or top))
    return out


def _seats(source: dict[str, Any]) -> int:
    """Trainable traces per episode of a source's taskset (whileai.tasksets.seats: kuhn-poker 2)."""
    from whileai.tasksets import seats

    env = source.get("env") or {}
    return seats.of(str((env.get("taskset") or {}).get("id") or ""), env=env).traces


def _streams(algo: str) -> list[str]:
    """The streams each method's real loss reads (prime-rl 559b447 trainer/rl/loss.py
    compute_loss; the routing of action tokens, orchestrator/algo/routing.py stamp_loss_routing:
    opd.py/opsd.py `ref_kl`, sft.py `ce`, the rest `rl`)."""
    if algo in ("opd", "opsd"):
        return ["ref_kl_weights", "ref_logprobs"]
    return ["ce_weights"] if algo == "sft" else ["advantages"]


def offline_copy(
    doc: dict[str, Any], *, steps: int, where: Path, model_dir: Path, data_dir: Path, vocab: int
) -> OfflineCopy:
    d = copy.deepcopy(doc)
    fam = stand_in(doc)
    plan = OfflineCopy(d)
    sub = plan.subs.append
    model = d.setdefault("model", {})
    sub(
        Replacement(
            "model.name",
            model.get("name"),
            str(model_dir),
            f"a tiny {fam.name} model built here, {fam.why}: no weights are loaded",
        )
    )
    model["name"] = str(model_dir)
    if "tokenizer" in d and isinstance(d["tokenizer"], dict) and d["tokenizer"].get("name"):
        sub(
            Replacement(
                "tokenizer.name", d["tokenizer"]["name"], str(model_dir), "the tiny model's tokenizer"
            )
        )
        d["tokenizer"]["name"] = str(model_dir)
    out = where / "outputs"
    sub(Replacement("output_dir", d.get("output_dir"), str(out), "inside the rehearsal's folder"))
    d["output_dir"] = str(out)
    sub(Replacement("max_steps", d.get("max_steps"), steps, "the rehearsal's --steps"))
    d["max_steps"] = steps
    d.pop("wandb", None)
    o = d.setdefault("orchestrator", {})
    n_train = max(1, len((o.get("train") or {}).get("source") or []))
    group = int(o.get("group_size") or 1)
    traces = [_seats(s) for split, s in _sources(o) if split == "train"] or [1]
    if o.get("token_batch_size") is None:
        per = 2 if group * n_train <= 8 else 1  # whole groups, every train source, few rollouts
        small = per * group * sum(traces)  # prime-rl counts trainable traces (whileai's seats)
        if o.get("batch_size") != small:
            plus = "+".join(map(str, traces))
            seats = f", x {plus} traces per episode" if max(traces) > 1 else ""
            why = f"{per} group(s) of {group} per train source{seats}: a step in seconds on a CPU"
            sub(Replacement("orchestrator.batch_size", o.get("batch_size"), small, why))
            o["batch_size"] = small
    conc = o.setdefault("concurrency", {})
    few = max(group, CPU_INFLIGHT)  # prime-rl requires at least a group in flight
    for key, now in (("initial_inflight", few), ("max_inflight", few)):
        was = conc.get(key)
        if was is None or int(was) > now:
            conc[key] = now
            sub(Replacement(f"orchestrator.concurrency.{key}", was, now, "a few rollouts at a time: each "
                             "is a harness process on this CPU (the stand-in reports no KV capacity)"))
    for key, client in _clients(o):
        was = client.get("wait_for_ready_timeout")
        if was is None or int(was) > READY_S:
            client["wait_for_ready_timeout"] = READY_S
            sub(
                Replacement(
                    f"{key}.wait_for_ready_timeout",
                    was,
                    READY_S,
                    "a stand-in answers within "
                    "seconds: a server still silent then is the failure, not a slow start",
                )
            )
    ev = o.get("eval")
    if isinstance(ev, dict) and ev.get("source"):
        sub(
            Replacement(
                "orchestrator.eval",
                {k: ev.get(k) for k in ("interval", "num_examples")},
                {"interval": steps, "num_examples": 2},
                "evaluated once, at the last step",
            )
        )
        ev["interval"], ev["num_examples"] = steps, 2
    for split, s in _sources(o):
        env = s.setdefault("env", {})
        ts = env.get("taskset") or {}
        name = str(s.get("name") or ts.get("id") or "source")
        how = taskrows.how(ts.get("id"))
        if how == "hub":
            raise SpecError(f"orchestrator.{split}.source[{name}].env.taskset.id", ts.get("id"),
                            taskrows.refusal(ts.get("id")))
        src = {"split": split, "name": name, "taskset": ts.get("id"), "how": how}
        plan.sources.append(src)
        if how == "cached":
            dataset, config, splits, _ = taskrows.CACHED[taskrows.key(ts.get("id"))]
            sub(Replacement(f"orchestrator.{split}.source[{name}].env.taskset ({dataset})",
                             f"{dataset} {config!r} from the hub", "local rows",
                             f"cached under its id in the rehearsal's own HF_HOME (splits "
                             f"{', '.join(splits)}), read by `datasets` offline"))
        if how != "rows":
            continue
        split_name = str(ts.get("dataset_split") or "train")
        rows = data_dir / name
        src.update({"dataset_split": split_name, "rows": str(rows)})
        sub(
            Replacement(
                f"orchestrator.{split}.source[{name}].env.taskset.dataset_name",
                ts.get("dataset_name"),
                str(rows),
                f"local rows for split {split_name!r}",
            )
        )
        ts["dataset_name"] = str(rows)
        env["taskset"] = ts
    plan.expect = {
        "vocab": vocab,
        "needs": needs(doc),
        "steps": steps,
        "batch_size": o.get("batch_size"),
        "group_size": o.get("group_size"),
        "train_sources": n_train,
        "traces_per_episode": traces,
    }
    return plan
