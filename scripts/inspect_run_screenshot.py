"""Make docs/inspect-run.png: a real `whileai inspect --run` page, offline on the CPU.

Usage:

    python scripts/inspect_run_screenshot.py [--work DIR] [--out docs/inspect-run.png]

Trains a small byte-level BPE tokenizer (the `tokenizers` package) on whileai's reverse-text
texts, writes 30 steps of OPD token exports in prime-rl 559b447's layout with
tests/tokenview/token_export_gen.py (their token ids are that text's, so the page shows words; the last
step has no STABLE marker yet), runs

    whileai inspect --run RUN --tokenizer TOKENIZER -o OUT

in a fresh process (timed), then takes the screenshot with headless Chromium. Seconds.

Then the run with a teacher (docs/inspect-run-teacher.png, or --teacher-out): the stand-in
teacher of tests/fake_teacher.py (prime-rl's /inference/v1/generate with prompt_logprobs, known
log-probs, on 127.0.0.1, /tokenize through the same tokenizer so the check passes) and

    whileai inspect --run RUN --tokenizer TOKENIZER --teacher-endpoint vllm:stand-in/teacher@URL -o OUT

whose inspect-run-teacher.html is spec inspection's page over the run's own samples.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tokenview"))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
from inspect_screenshot import find_chromium, screenshot  # noqa: E402  (the sibling: Chromium, the shot)


def tokenizer(folder: Path) -> tuple[object, list[int]]:
    """A 600-token BPE over reverse-text's texts, saved as folder/tokenizer.json; and the ids of
    those texts, joined, as the export's corpus."""
    from helpers import train_bpe

    from whileai.tasksets.builtin import default_texts

    texts = default_texts()
    tok = train_bpe(folder, texts, vocab=600, specials=["<|pad|>", "<|im_start|>", "<|im_end|>"])
    corpus = [i for t in texts[3:400] for i in tok.encode(t + "\n").ids]
    return tok, corpus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "inspect-run.png")
    ap.add_argument("--teacher-out", type=Path, default=ROOT / "docs" / "inspect-run-teacher.png")
    args = ap.parse_args(argv)
    browser = find_chromium()
    if browser is None:
        return 1
    from token_export_gen import write_run

    work = args.work or Path(tempfile.mkdtemp(prefix="whileai-run-shot-"))
    tok, corpus = tokenizer(work / "tokenizer")
    hot = tuple(tok.encode(w).ids[0] for w in (">", "reversed"))  # type: ignore[attr-defined]
    run = work / "outputs" / "opd-reverse-text"
    if run.exists():
        shutil.rmtree(run)
    write_run(run, steps=30, ranks=2, sequences=6, prompt=24, completion=90, method="opd",
              envs=("reverse-text", "alphabet-sort"), vocab=600, hot=hot, corpus=corpus,
              stable=list(range(29)), seed=3)
    out = work / "view"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "whileai", "inspect", "--run", str(run.relative_to(work)),
                    "--tokenizer", "tokenizer", "-o", str(out), "--force"], check=True, env=env, cwd=work)
    print(f"whileai inspect --run: {time.perf_counter() - t:.1f}s", file=sys.stderr)
    screenshot(browser, out / "inspect-run.html", args.out, work, "1360,1500")
    print(f"wrote {args.out}", file=sys.stderr)
    from fake_teacher import MODEL, FakeTeacher

    with FakeTeacher(work / "tokenizer") as server:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "whileai", "inspect", "--run", str(run.relative_to(work)),
                        "--tokenizer", "tokenizer", "--teacher-endpoint", f"vllm:{MODEL}@{server.url}",
                        "--per-step", "4", "-o", str(out), "--force"], check=True, env=env, cwd=work)
        print(f"whileai inspect --run --teacher-endpoint: {time.perf_counter() - t:.1f}s", file=sys.stderr)
    screenshot(browser, out / "inspect-run-teacher.html", args.teacher_out, work, "1360,1500")
    print(f"wrote {args.teacher_out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
