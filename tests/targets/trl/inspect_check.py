"""An independent recomputation of inspect's numbers: a forward pass written here, from the
token ids the JSON records, using no whileai code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="the trl extra (pip install -e '.[trl]'): torch and transformers")
pytest.importorskip("transformers", reason="the trl extra (pip install -e '.[trl]'): torch and transformers")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

TOL = 1e-5
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def load(path: str) -> Any:
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


def logprob_rows(net: Any, context: list[int], completion: list[int]) -> torch.Tensor:
    ids = torch.tensor([context + completion])
    with torch.no_grad():
        logits = net(input_ids=ids).logits[0].float()
    return torch.log_softmax(logits[len(context) - 1: len(context) + len(completion) - 1], dim=-1)


def recheck(report: dict[str, Any], student: Any, teacher: Any, *, full: bool,
            sampler: str = "student") -> int:
    """Assert every token's log-probs, signal and (when `full`) full-vocabulary KL; return the
    number of tokens checked."""
    checked = 0
    for c in report["completions"]:
        p = report["prompts"][c["prompt"]]
        ids = [t["id"] for t in c["tokens"]]
        if not ids:
            continue
        s = logprob_rows(student, p["student_context_ids"], ids)
        t = logprob_rows(teacher, p["teacher_context_ids"], ids)
        s_tok = s.gather(-1, torch.tensor(ids).unsqueeze(-1)).squeeze(-1)
        t_tok = t.gather(-1, torch.tensor(ids).unsqueeze(-1)).squeeze(-1)
        first, second = (s, t) if sampler == "student" else (t, s)
        kl = (first.exp() * (first - second)).sum(-1)
        for i, tok in enumerate(c["tokens"]):
            assert abs(tok["student_logprob"] - float(s_tok[i])) < TOL, (c["prompt"], i)
            assert abs(tok["teacher_logprob"] - float(t_tok[i])) < TOL, (c["prompt"], i)
            mine = float(s_tok[i] - t_tok[i]) if sampler == "student" else float(t_tok[i] - s_tok[i])
            assert abs(tok["signal"] - mine) < TOL, (c["prompt"], i)
            if full:
                assert abs(tok["full_kl"] - float(kl[i])) < TOL, (c["prompt"], i)
            else:
                assert tok["full_kl"] is None
            checked += 1
        mean = sum(float(x) for x in (s_tok - t_tok)) / len(ids)
        if sampler == "student":
            assert abs(c["stats"]["mean_signal"] - mean) < TOL
    return checked


def chromium(*args: str, user_data: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    exe = browser()
    assert exe is not None
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}", *args],
                          capture_output=True, text=True, timeout=timeout)


def browser() -> str | None:
    """Debian's `chromium` (or a `chromium-browser`) on PATH."""
    return next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
