"""The OPD teacher's other shapes on TRL, against the real TRL: across tokenizers (GOLD, its ULD
loss) and served (ServerDistillationTrainer querying a real HTTP stand-in on 127.0.0.1). Each
writes a run directory TRL's own parser accepts and trains two CPU steps on tiny local models."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import needs
from trl_helpers import OFFLINE, write

from whileai.spec.run import OPD, Endpoint, RunSpec
from whileai.targets.trl import compile as backend
from whileai.targets.trl.check import check_dir, command_of, parse

pytestmark = pytest.mark.trl
needs("trl", "torch", "transformers", "tokenizers")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: fake_openai


def _models(out: Path, vocabs: dict[str, int]) -> dict[str, str]:
    """Tiny Qwen3 models, each with a byte-level BPE tokenizer of its own size, learnt from its own
    texts (so the vocabularies differ where the sizes do), saved under out/<name>."""
    from whileai.tasksets.builtin import default_texts
    from whileai.vocab.tiny import build_model, tokenizer

    texts = default_texts()
    paths = {}
    for i, (name, n) in enumerate(vocabs.items()):
        tok = tokenizer(texts if i == 0 else [t[::-1] for t in texts], "chatml", vocab_size=n, left=True)
        build_model(tok, seed=i).save_pretrained(out / name)
        tok.save_pretrained(out / name)
        paths[name] = str(out / name)
    return paths


def _pair(out: Path) -> dict[str, str]:
    """A tiny student and a teacher with its tokenizer (a copy under another name)."""
    m = _models(out, {"student": 384})
    shutil.copytree(m["student"], out / "teacher")
    return m | {"teacher": str(out / "teacher")}


def _run(student: str, teacher: Endpoint, out: Path) -> RunSpec:
    return RunSpec(taskset="reverse-text", model=student, method=OPD(teacher, max_tokens=8), steps=2,
                   prompts=2, lora=False, output_dir=str(out), eval={"enabled": False},
                   overrides={"gradient_checkpointing": False, "logging_steps": 1,
                              "save_strategy": "no", "report_to": "none"})


def _train(d: Path, prelude: str = "") -> list[float]:
    """Run the directory's train.py (after `prelude`); the losses it logged."""
    code = f"{prelude}import runpy, sys; sys.argv = ['train.py', '--config', 'config.yaml']; " \
           "runpy.run_path('train.py', run_name='__main__')"
    env = os.environ | OFFLINE | {"CUDA_VISIBLE_DEVICES": "", "WANDB_DISABLED": "true"}
    p = subprocess.run([sys.executable, "-c", code], cwd=d, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return [float(x) for x in re.findall(r"'loss': '([-\d.e+naif]+)'", p.stdout + p.stderr)]


def test_gold_two_tokenizers_trains(tmp_path: Path) -> None:
    """Two vocabularies (384 and 320 tokens, learnt from other texts): the TRL target writes a GOLD
    run (ULD hybrid loss, the teacher's own tokenizer) that TRL's parser accepts and that trains
    two steps to a finite loss on the CPU."""
    m = _models(tmp_path / "m", {"student": 384, "teacher": 320})
    run = _run(m["student"], Endpoint(url="http://localhost:8001/v1", model=m["teacher"]), tmp_path / "o")
    c = backend.compile(run, cpu=True)
    assert "tokenizer-mismatch" not in {w.rule for w in c.warnings}  # GOLD aligns the vocabularies
    d = write(c, tmp_path / "run")
    assert command_of(d) == "gold" and check_dir(d) == []
    args = parse(d / "config.yaml", "gold")[1]
    assert type(args).__name__ == "GOLDConfig"
    assert (args.use_uld_loss, args.uld_use_hybrid_loss, args.lmbda) == (True, True, 1.0)
    assert args.teacher_tokenizer_name_or_path == m["teacher"]
    losses = _train(d)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), losses


def test_served_teacher_trains_against_the_endpoint(tmp_path: Path) -> None:
    """A teacher URL on 127.0.0.1 (not the localhost placeholder): the run's trainer is
    ServerDistillationTrainer, its config names the spec's server, and two CPU steps score every
    completion there (POST /v1/completions with prompt_logprobs). TRL's client refuses to start
    without the vllm package, which a CPU machine lacks: the stand-in run lifts that check only."""
    from fake_openai import FakeServer

    m = _pair(tmp_path / "m")
    with FakeServer(m["teacher"], Path(m["teacher"]), deadline=240) as server:
        run = _run(m["student"], Endpoint(url=server.url, model=m["teacher"]), tmp_path / "o")
        c = backend.compile(run, cpu=True)
        d = write(c, tmp_path / "run")
        assert command_of(d) == "server" and check_dir(d) == []
        args = parse(d / "config.yaml", "server")[1]
        assert type(args).__name__ == "ServerDistillationConfig"
        assert args.teacher_model_server_url + "/v1" == server.url and args.loss_top_k == 1
        losses = _train(d, "import trl.generation.vllm_client as v; v.is_vllm_available = lambda: True; ")
        scored = [r for r in server.requests if r[:2] == ("POST", "/v1/completions")]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), losses
    assert len(scored) >= 2, server.requests


def test_localhost_teacher_stays_in_process(tmp_path: Path) -> None:
    """The examples' placeholder URL (localhost) with one tokenizer: the stable `trl distillation`."""
    m = _pair(tmp_path / "m")
    run = _run(m["student"], Endpoint(url="http://localhost:8001/v1", model=m["teacher"]), tmp_path / "o")
    d = write(backend.compile(run, cpu=True), tmp_path / "run")
    assert command_of(d) == "distillation" and not (d / "train.py").exists() and check_dir(d) == []
