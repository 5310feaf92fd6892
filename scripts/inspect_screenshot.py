"""Make docs/inspect.png: a real `whileai inspect` page for tiny local models, offline on the CPU.

Usage:

    python scripts/inspect_screenshot.py [--work DIR] [--teacher-steps 400] [--student-steps 80]

Builds the tiny models (whileai.vocab.tiny), trains each briefly on reverse-text answers with plain
supervised steps (the teacher for longer, so it knows the format and some reversals the
student does not), runs the README's command

    whileai inspect examples/opd.toml --local-student S --local-teacher T --prompts 6 --max-tokens 64

in a fresh process (timed), then takes the screenshot with headless Chromium. Random-weight
models would give a uniform page; the short training makes the disagreement visible.
A few minutes on two cores; the inspect step itself takes seconds.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def find_chromium() -> str | None:
    """Debian's `chromium` (or a `chromium-browser`) on PATH; None, after saying what to install."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("needs chromium (Debian: apt-get install -y chromium)", file=sys.stderr)
    return browser


def screenshot(browser: str, page: Path, out: Path, work: Path, window: str) -> None:
    """The page in headless Chromium (a profile under `work`), `window` ("W,H") wide, as the PNG `out`
    (inspect_run_screenshot.py takes its screenshot through this too)."""
    subprocess.run([browser, *CHROMIUM, f"--user-data-dir={work / 'profile'}", f"--window-size={window}",
                    f"--screenshot={out.resolve()}", page.resolve().as_uri()],
                   check=True, capture_output=True)


def train(path: str, steps: int, data: list[tuple[list[int], list[int]]], pad: int, seed: int) -> float:
    """Plain next-token cross-entropy on the answers only, then save over the model."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    net = AutoModelForCausalLM.from_pretrained(path).train()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3)
    rng, loss = random.Random(seed), torch.tensor(0.0)
    for _ in range(steps):
        batch = rng.sample(data, 32)
        width = max(len(c) + len(a) for c, a in batch)
        ids = torch.full((32, width), pad)
        labels = torch.full((32, width), -100)
        mask = torch.zeros((32, width), dtype=torch.long)
        for i, (c, a) in enumerate(batch):
            ids[i, : len(c) + len(a)] = torch.tensor(c + a)
            labels[i, len(c): len(c) + len(a)] = torch.tensor(a)
            mask[i, : len(c) + len(a)] = 1
        loss = net(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.save_pretrained(path)
    return float(loss.detach())


def models(work: Path, teacher_steps: int, student_steps: int) -> dict[str, str]:
    from transformers import AutoTokenizer

    from whileai.tasksets import reverse_text as rt
    from whileai.tasksets.builtin import default_texts
    from whileai.vocab.tiny import build

    paths = build(work / "tiny", default_texts())
    tok = AutoTokenizer.from_pretrained(paths["student"])
    rows, _ = rt.splits()
    data = []
    for ex in rows:
        ctx = tok.apply_chat_template(ex["prompt"], add_generation_prompt=True, tokenize=True,
                                      return_dict=True)["input_ids"]
        answer = tok(f"<reversed_text>\n{ex['answer']}\n</reversed_text>", add_special_tokens=False)
        data.append((list(ctx), list(answer["input_ids"]) + [tok.eos_token_id]))
    for name, steps in (("teacher", teacher_steps), ("student", student_steps)):
        loss = train(paths[name], steps, data, tok.pad_token_id, seed=1)
        print(f"trained {name}: {steps} steps, last loss {loss:.3f}")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--teacher-steps", type=int, default=400)
    ap.add_argument("--student-steps", type=int, default=80)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "inspect.png")
    args = ap.parse_args(argv)
    browser = find_chromium()
    if browser is None:
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="whileai-shot-"))
    paths = models(work, args.teacher_steps, args.student_steps)
    command = [sys.executable, "-m", "whileai.cli.app", "inspect", "examples/opd.toml", "--local-student",
               paths["student"], "--local-teacher", paths["teacher"], "--prompts", "6", "--max-tokens", "64",
               "-o", str(work / "page"), "--force"]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, env=os.environ | {"COLUMNS": "110"})
    print(f"inspect took {time.perf_counter() - start:.1f} s (fresh process, imports included)")
    screenshot(browser, work / "page" / "inspect.html", args.out, work, "1360,1320")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
