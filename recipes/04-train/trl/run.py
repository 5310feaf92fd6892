"""Paired GRPO / OPSD / OPD arms on reverse-text with TRL, trained here on the CPU (tiny models).

    python recipes/04-train/trl/run.py              # build tiny models, train and score 3 arms,
                                                    # write runs/trl-tiny/results.json + results.png
    python recipes/04-train/trl/run.py --dry-run    # write the run dirs, print their reports
    python recipes/04-train/trl/run.py --collect    # poll arms launched before; exit 3 while any runs
Options: --arms grpo,opsd,opd  --steps 40  --holdout 32  --warmup 300  --lr 5e-4  --jobs 3
         --tag trl-tiny  --out runs/trl-tiny  --relaunch-failed
Offline, no GPU: a tokenizer and random tiny student and teacher (whileai.tiny) go to <out>/models;
--warmup gives the teacher that many supervised steps on the train split (the student a fifth) so
rewards start above zero. Tiny models test the pipeline, not the methods. Each arm folder is what
`whileai compile --backend trl --cpu` writes; its own command (`trl grpo|distillation --config
config.yaml`, `python train.py --config config.yaml`) runs under whileai.launch.trl_eval, which
scores the base model, each checkpoint and the final model on data/test.jsonl (greedy, LCS-ratio
reward per task) into the metrics file. A second launch skips arms done or running (Ctrl-C leaves
them running; --collect picks them up). Exit codes: 0 done, 1 an arm failed, 3 still running.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import whileai as wai
from whileai.launch import LocalBackend, Manifest, arm_from_compiled, call_argv, collect, launch
from whileai.launch.manifest import load_manifest, plan
from whileai.launch.trl_eval import PROGRESS, read_progress
from whileai.results import build, plot, write_results
from whileai.spec import Eval

ARMS = ("grpo", "opsd", "opd")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "TOKENIZERS_PARALLELISM": "false"}
EVAL = "whileai.launch.trl_eval:train_and_evaluate"
console = Console()


def method(kind: str, teacher: str, lr: float) -> wai.OPD | wai.OPSD | wai.GRPO:
    """Sized for a CPU: 64 new tokens, GRPO groups of 4, one OPD sample per prompt."""
    if kind == "opd":  # TRL loads the teacher in-process from its path; the URL is not used
        return wai.OPD(wai.Endpoint(url="http://localhost:8001/v1", model=teacher), samples=1,
                       max_tokens=64, learning_rate=lr)
    if kind == "grpo":
        return wai.GRPO(samples=4, max_tokens=64, learning_rate=lr)
    return wai.OPSD(max_tokens=64, learning_rate=lr)


def compile_arms(a: argparse.Namespace, kinds: list[str], models: Path) -> dict[str, wai.Compiled]:
    interval = max(1, a.steps // 4)  # a checkpoint every `interval` steps, each scored afterwards
    overrides = {"gradient_checkpointing": False, "logging_steps": 1, "report_to": "none",
                 "save_strategy": "steps", "save_steps": interval, "save_only_model": True,
                 "eval_strategy": "no"}  # trl_eval scores the checkpoints, the same way for every arm
    return {kind: wai.compile(wai.RunSpec(
        taskset="reverse-text", model=str(models / "student"), steps=a.steps, prompts=4, lora=False,
        method=method(kind, str(models / "teacher"), a.lr), overrides=overrides,
        eval=Eval(interval=interval, examples=a.holdout)), "trl", cpu=True) for kind in kinds}


def warm_up(path: str, steps: int, seed: int) -> None:
    """Supervised steps on the train split (loss on the answer only), batches of 16."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from whileai.tasksets import reverse_text as rt

    tok, net = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path)
    rows, g, pad = rt.splits()[0], torch.Generator().manual_seed(seed), tok.pad_token_id
    opt = torch.optim.AdamW(net.parameters(), lr=5e-3)
    for _ in range(steps):
        seqs = []
        for i in torch.randint(len(rows), (16,), generator=g).tolist():
            p = tok.apply_chat_template(rows[i]["prompt"], add_generation_prompt=True, tokenize=False)
            ans = f"<reversed_text>\n{rows[i]['answer']}\n</reversed_text>{tok.eos_token}"
            pi, ai = (tok(t, add_special_tokens=False)["input_ids"] for t in (p, ans))
            seqs.append((pi + ai, [-100] * len(pi) + ai))
        n = max(len(s) for s, _ in seqs)
        ids = torch.tensor([s + [pad] * (n - len(s)) for s, _ in seqs])
        labels = torch.tensor([lab + [-100] * (n - len(lab)) for _, lab in seqs])
        net(input_ids=ids, attention_mask=ids != pad, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    net.save_pretrained(path)


def build_models(models: Path, warmup: int) -> dict[str, Any]:
    """Tokenizer, student and teacher in `models` (kept once complete); returns the warm-up steps."""
    if (done := models / "warmup.json").exists():
        console.print(f"models: {models} (kept; delete the folder to rebuild)")
        return dict(json.loads(done.read_text()))
    from transformers.utils import logging

    from whileai.tiny import build as build_tiny

    logging.disable_progress_bar()
    record = {"teacher": warmup, "student": warmup // 5}
    with console.status(f"building tiny models, supervised warm-up steps {record}"):
        paths = build_tiny(models)
        for i, (name, steps) in enumerate(record.items()):
            warm_up(paths[name], steps, seed=i)
    done.write_text(json.dumps(record) + "\n")
    console.print(f"models: {models} (supervised warm-up steps {record})")
    return record


def run_arms(m: Manifest, be: LocalBackend, names: list[str], jobs: int, relaunch: bool) -> None:
    """Launch up to `jobs` arms at a time; one progress bar per arm until none is pending."""
    cols = (TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    seen: set[str] = set()
    with Progress(*cols, console=console) as bars:
        def log(msg: str) -> None:  # collect() logs its summary at every poll: show each line once
            if msg not in seen:
                seen.add(msg)
                bars.console.print(msg)

        ids, queue = {n: bars.add_task(n, total=None) for n in names}, list(names)
        while queue or any(m.arms[n].state == "pending" for n in names):
            while queue and sum(a.state == "pending" for a in m.arms.values()) < jobs:
                arm = m.arms[queue.pop(0)]
                if arm.state == "planned" or (arm.state == "failed" and relaunch):
                    (Path(arm.dir) / PROGRESS).unlink(missing_ok=True)
                launch(m, be, arms=[arm.spec.name], relaunch_failed=relaunch, log=log)
            collect(m, be, log=log)
            for n in names:
                state, p = m.arms[n].state, read_progress(m.arms[n].dir)
                if state == "pending" and p:
                    bars.update(ids[n], description=f"{n}: {p['phase']}", completed=p["done"],
                                total=p["total"])
                elif state in ("done", "failed"):
                    bars.update(ids[n], description=f"{n}: {state}", total=1, completed=1)
            time.sleep(0.5)


def report(m: Manifest, out: Path) -> int:
    """results.json and results.png from the manifest; a line per arm and per delta."""
    res = build(m)
    write_results(out / "results.json", res)
    plot(res, out / "results.png")
    for name, a in res["arms"].items():
        ev = ", ".join(f"{s}: {v:.3f}" for s, v in a["series"].get("eval_reward", []))
        console.print(f"{name:<5} {a['state']:<6} {a['seconds'] or 0:5.1f}s  eval reward {{step: mean}} "
                      f"{{{ev}}}", soft_wrap=True)
    for g, d in res["vs_grpo"].items():
        ci = "none" if d["ci95"] is None else f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]"
        delta = "none" if d["delta"] is None else f"{d['delta']:+.4f}"
        console.print(f"{g} vs {res['baseline']}: delta {delta}, 95% CI {ci}, p {d['p_value']}, "
                      f"{d['n_tasks']} tasks (paired {d['paired']}): {d['verdict']}", soft_wrap=True)
    for w in res["warnings"]:
        console.print(f"warning: {w}", style="yellow", soft_wrap=True)
    console.print(f"wrote {out / 'results.json'} and {out / 'results.png'}")
    return 1 if any(a["state"] == "failed" for a in res["arms"].values()) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write the run dirs, print the reports")
    mode.add_argument("--collect", action="store_true", help="poll arms; write results when done")
    ap.add_argument("--arms", default=",".join(ARMS), help="comma-separated: grpo, opsd, opd")
    ap.add_argument("--tag", default="trl-tiny", help="run tag (names the runs in the manifest)")
    ap.add_argument("--out", type=Path, default=Path("runs/trl-tiny"), help="the run folder")
    ap.add_argument("--steps", type=int, default=40, help="optimizer steps per arm")
    ap.add_argument("--holdout", type=int, default=32, help="holdout tasks scored per evaluation")
    ap.add_argument("--warmup", type=int, default=300, help="teacher SFT steps (student: a fifth)")
    ap.add_argument("--lr", type=float, default=5e-4, help="learning rate of every arm")
    ap.add_argument("--jobs", type=int, default=3, help="arms trained at the same time")
    ap.add_argument("--relaunch-failed", action="store_true")
    a = ap.parse_args(argv)
    kinds = [k.strip() for k in a.arms.split(",") if k.strip()]
    if set(kinds) - set(ARMS):
        ap.error(f"unknown arms {sorted(set(kinds) - set(ARMS))}; choose from {', '.join(ARMS)}")
    for k, v in OFFLINE.items():
        os.environ.setdefault(k, v)
    out = a.out.resolve()
    share = a.jobs > 1 and "OMP_NUM_THREADS" not in os.environ  # arms share the cores
    be = LocalBackend(env={"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // a.jobs))} if share else {})
    if a.collect:
        code = collect(m := load_manifest(out), be)
        return report(m, out) if code == 0 else code

    arms = compile_arms(a, kinds, out / "models")
    specs = {n: arm_from_compiled(n, c, argv=call_argv(EVAL, command=c.commands[0])) for n, c in arms.items()}
    warmup = build_models(out / "models", a.warmup) if not a.dry_run else {
        "teacher": a.warmup, "student": a.warmup // 5}
    meta = {"holdout": f"reverse-text holdout ({a.holdout} tasks)", "models": "whileai.tiny (random "
            "Qwen3)", "warmup_steps": warmup, "learning_rate": a.lr, "device": "cpu"}
    m = plan(specs, a.tag, out, meta=meta)
    for n in kinds:
        console.print(f"{n}: {m.arms[n].dir}/config.yaml [{m.arms[n].state}]  $ {arms[n].commands[0]}")
    if a.dry_run:
        for c in arms.values():
            print(f"\n{c}")
        return 0
    run_arms(m, be, kinds, a.jobs, a.relaunch_failed)
    return report(m, out)


if __name__ == "__main__":
    sys.exit(main())
