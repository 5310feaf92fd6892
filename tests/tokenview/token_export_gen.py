"""Token exports written to prime-rl 559b447's layout, without prime-rl.

prime-rl's exporter (src/prime_rl/trainer/rl/token_export.py at 559b447) imports torch,
prime_rl.configs and prime_rl.trainer.rl.loss (beartype, jaxtyping, ...), which the test
dependencies do not carry, so this generator writes its records instead, field for field:

- `<root>/token_exports/step_<n>/rank_<r>.jsonl`, one record per sequence with a trained token,
  `json.dumps(record, separators=(",", ":"), allow_nan=False)` plus a newline;
- the header (schema_version 1, step, rank, micro_step, micro_sequence_idx, export_sequence_idx,
  env_name) then the per-token columns in the exporter's order;
- floats through float32 (the exporter's `.to(torch.float32).tolist()`), non-finite as null;
- ratio fields as `_compute_export_tensors`: log r = trainer − inference, r = exp(log r),
  mismatch_kl = r − log r − 1, prob_delta = exp(trainer) − exp(inference); DPPO masks with
  dppo_mask_low = dppo_mask_high = 0.2 (DefaultLossConfig) on the advantage's sign;
- OPD rows as the orchestrator's stamp_loss_routing('ref_kl') ships them: advantages 0,
  rl_weights 0 everywhere, ref_kl_weights 1 on the loss mask;
- `STABLE` touched in a step's folder once the step is complete.

tests/tokenview/test_inspect_run.py checks a record's keys, in order, against the pin's own exporter and
the reader's HEADER and COLUMNS (whileai.tokenview.exports) when the pinned tree is on the machine.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from pathlib import Path
from typing import Any

MASK = 0.2  # DefaultLossConfig.dppo_mask_low / dppo_mask_high


def f32(xs: list[float]) -> list[float | None]:
    return [x if math.isfinite(x) else None for x in array("f", xs).tolist()]


def sequence(rng: random.Random, *, step: int, prompt: int, completion: int, method: str,
             vocab: int, hot: tuple[int, ...], steps: int, corpus: list[int] | None = None) -> dict[str, Any]:
    """The per-token columns of one sequence; the student's surprise falls as steps pass and
    the `hot` ids stay hard (what a run that is learning looks like). Ids are random (every
    seventh trained one a hot id), or a slice of `corpus` (real text's ids) when given."""
    n = prompt + completion
    if corpus:
        at = rng.randrange(0, max(1, len(corpus) - n))
        ids = (corpus * (n // len(corpus) + 2))[at: at + n]
    else:
        ids = [rng.randrange(3, vocab) for _ in range(n)]
        for i in range(prompt, n, 7):
            ids[i] = rng.choice(hot) if hot else ids[i]
    mask = [i >= prompt for i in range(n)]
    progress = step / max(1, steps)
    trainer = []
    for i, tid in enumerate(ids):
        if not mask[i]:
            trainer.append(-rng.expovariate(1.0))
        elif tid in hot:
            trainer.append(-rng.uniform(2.5, 4.0))
        else:
            trainer.append(-rng.expovariate(1.0 / (1.5 * (1.0 - 0.8 * progress) + 0.05)))
    # trainer and vLLM agree closely, but on a few tokens by far (those the trust region masks)
    inference = [0.0 if not m else t + rng.gauss(0.0, 0.05 if rng.random() > 0.03 else 1.0)
                 for m, t in zip(mask, trainer, strict=True)]
    adv_value = 0.0 if method == "opd" else rng.choice([-1.0, -0.5, 0.5, 1.0])
    advantages = [adv_value] * n
    log_r = [t - q for t, q in zip(trainer, inference, strict=True)]
    ratio = [math.exp(x) for x in log_r]
    mkl = [r - lr - 1.0 for r, lr in zip(ratio, log_r, strict=True)]
    delta = [math.exp(t) - math.exp(q) for t, q in zip(trainer, inference, strict=True)]
    high = [m and a > 0 and d > MASK for m, a, d in zip(mask, advantages, delta, strict=True)]
    low = [m and a < 0 and d < -MASK for m, a, d in zip(mask, advantages, delta, strict=True)]
    masked = [m and ((d > MASK) if a > 0 else (d < -MASK))
              for m, a, d in zip(mask, advantages, delta, strict=True)]
    opd = method == "opd"
    return {
        "token_ids": ids, "position_ids": list(range(n)), "loss_mask": mask,
        "advantages": f32(advantages), "inference_logprobs": f32(inference),
        "trainer_logprobs": f32(trainer), "entropy": f32([rng.uniform(0.05, 3.0) for _ in range(n)]),
        "mismatch_kl": f32(mkl), "log_importance_ratio": f32(log_r), "importance_ratio": f32(ratio),
        "prob_delta": f32(delta), "is_masked": masked, "is_masked_high": high, "is_masked_low": low,
        "rl_weights": f32([0.0] * n) if opd else [None] * n,
        "ce_weights": [None] * n,
        "ref_kl_weights": f32([1.0 if m else 0.0 for m in mask]) if opd else [None] * n,
    }


def write_run(run: Path, *, steps: int = 3, ranks: int = 2, sequences: int = 4, prompt: int = 12,
              completion: int = 40, method: str = "opd", envs: tuple[str, ...] = ("reverse-text",),
              vocab: int = 384, hot: tuple[int, ...] = (17, 42), stable: bool | list[int] = True,
              seed: int = 0, first_step: int = 0, corpus: list[int] | None = None) -> Path:
    """Write `steps` steps of exports under `run/token_exports`; return that folder. `stable`:
    True (every step), False (none) or the steps that get STABLE."""
    rng = random.Random(seed)
    root = run / "token_exports"
    for step in range(first_step, first_step + steps):
        folder = root / f"step_{step}"
        folder.mkdir(parents=True, exist_ok=True)
        for rank in range(ranks):
            lines = []
            for k in range(sequences):
                cols = sequence(rng, step=step - first_step, prompt=prompt, completion=completion,
                                method=method, vocab=vocab, hot=hot, steps=steps, corpus=corpus)
                record = {"schema_version": 1, "step": step, "rank": rank, "micro_step": k // 2,
                          "micro_sequence_idx": k % 2, "export_sequence_idx": k,
                          "env_name": envs[(rank * sequences + k) % len(envs)], **cols}
                lines.append(json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n")
            (folder / f"rank_{rank}.jsonl").write_text("".join(lines), encoding="utf-8")
        if stable is True or (isinstance(stable, list) and step in stable):
            (folder / "STABLE").touch()
    return root
