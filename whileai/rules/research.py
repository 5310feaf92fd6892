"""Research-backed warning rules: each a small pure function with an id, a message and a source.

A rule reads the run spec and the facts a target reports about what it will really do
(`Compiled.facts`, whileai.rules.facts: estimator, truncated support, effective teacher
anchor, training top_p), and the method's traits (whileai.spec.methods: who scores, who samples).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from whileai.cost.sizes import size_b  # noqa: F401  (re-exported: rules read sizes from names)
from whileai.rules.accept import mark
from whileai.rules.base import Facts, Finding, Rule
from whileai.rules.honoured import divergence_check
from whileai.rules.tokenizers import CITATION as TOKENIZERS
from whileai.rules.tokenizers import CROSS, family
from whileai.spec.run import OPD, OPSD, RunSpec


def _opd(run: RunSpec) -> OPD | None:
    return run.method if isinstance(run.method, OPD) else None


def _teacher_model(run: RunSpec) -> str | None:
    """The teacher's model name for any method that has a separate teacher (OPD; SFT's too)."""
    teacher = run.method.frozen_teacher
    return teacher.model if teacher is not None else None


def _steps(run: RunSpec, f: Facts) -> Any:
    return run.steps if f.steps is None else f.steps


def _top_p(f: Facts) -> float:
    return 1.0 if f.top_p is None else f.top_p


def _tokenizer(run: RunSpec, f: Facts) -> str | None:
    teacher = _teacher_model(run)
    if teacher is None or f.teacher_reads == "own_tokenizer":  # GOLD: each model its own tokenizer
        return None
    from whileai.vocab import files as tokfiles

    absent = tokfiles.missing(run.model, teacher)
    check = None
    if not absent:  # both tokenizers are here: compare them (imports `tokenizers` only now)
        from whileai.vocab.compare import check_names

        check = check_names(run.model, teacher)
    text = f.teacher_reads == "text"  # the teacher's text is re-tokenized (TRL SFT)
    if check is not None:
        if check.verdict == "identical":
            return None
        return f"{check.statement()}; {_TEXT}" if text else check.verdict_text()
    a, b = family(run.model), family(teacher)
    if a and b and a != b:
        why = f"no local tokenizer files for {', '.join(absent)}" if absent else "`tokenizers` not installed"
        head = (f"by model-name family only ({why}): teacher {teacher} ({b}) and student "
                f"{run.model} ({a}) come from different families, so their tokenizers likely differ")
        if text:
            return f"{head}; {_TEXT}"
        if run.method.off_policy:  # prime-rl: the prompt goes to the teacher as token ids
            return (f"{head}; the teacher is sent the prompt as the student's token ids, which its "
                    "vocabulary reads as other text, so it answers a garbled prompt and the SFT "
                    "targets are silently wrong. Use one tokenizer")
        return (f"{head}; the teacher scores the student's token ids and the signal is silently "
                f"wrong. Use one tokenizer, or {CROSS}")
    return None


_TEXT = ("the teacher's completions reach the student as text and are re-tokenized, so the "
         "cross-entropy stays sound, but the teacher's own chat markup and special tokens become "
         "plain text in the student's targets")


def _top_k_one(run: RunSpec, f: Facts) -> str | None:
    m = _opd(run)
    if f.loss_top_k is False:  # the target's loss is full-vocabulary whatever top_k says
        return None
    if m and m.top_k == 1:
        return "top_k 1 fails: overlap, entropy and grad-norm spike; use k >= 16"
    if m and isinstance(m.top_k, int) and m.top_k < 16:
        return f"top_k {m.top_k} < 16: a late dip was seen at k=4; 16-64 is smooth"
    return None


def _topk_nucleus(run: RunSpec, f: Facts) -> str | None:
    if f.support_top_k and _top_p(f) >= 1.0:
        return ("teacher top-k support without nucleus sampling (top_p = 1) scored below plain "
                "OPD (17.7 vs 20.4 AIME24 avg@32)")
    return None


def _sampled_top_p(run: RunSpec, f: Facts) -> str | None:
    if f.estimator == "sampled_token" and _top_p(f) < 1.0:
        return f"the sampled-token estimator with top_p {f.top_p} < 1 is biased; keep top_p 1"
    return None


def _max_tokens(run: RunSpec, f: Facts) -> str | None:
    if run.method.distills and run.method.max_tokens > 8192:
        return (f"max_tokens {run.method.max_tokens} > 8k: runs at 10k-15k collapse late; the "
                "teacher's advantage falls from +0.37 at a 1k prefix to +0.02 at 16k")
    return None


_THINKING = re.compile(r"thinking|(^|[-/_])(r1|qwq)([-_]|$)")
_COLD = ("needs an SFT cold start on teacher rollouts first: a two-stage spec does it (method "
         "sft with lora = false, then [then.method] opd)")


def _cold_start(run: RunSpec, f: Facts) -> str | None:
    if not run.method.distills:
        return None
    # the weights the target loads (the compiled model: a two-stage run's second stage starts
    # from the first stage's output, which had its cold start)
    student = str(f.model or run.model)
    if re.search(r"(^|[-_/])base($|[-_])", student.lower()):
        return (f"{student} looks like a base model: a student that cannot produce the "
                f"teacher's tokens {_COLD}")
    teacher = _teacher_model(run)
    if teacher and _THINKING.search(teacher.lower()) and not _THINKING.search(student.lower()):
        return (f"the teacher {teacher} thinks aloud and the student {student} does not: a student "
                f"whose style differs from the teacher's {_COLD}")
    return None


def _exposure_bias(run: RunSpec, f: Facts) -> str | None:
    if run.method.off_policy and run.method.max_tokens > 4096:
        return (f"SFT on teacher completions of up to {run.method.max_tokens} tokens: the student "
                "never trains on its own mistakes, and errors compound with length (exposure "
                "bias); for long outputs use OPD, or SFT as a short cold start followed by OPD")
    return None


def _same_family(run: RunSpec, f: Facts) -> str | None:
    teacher = _teacher_model(run)
    if teacher and family(run.model) == family(teacher) and size_b(run.model) is not None \
            and size_b(run.model) == size_b(teacher):
        return ("teacher and student are the same size and family: the student saturates at the "
                "teacher; check the teacher beats the student on the holdout first")
    return None


def _thinking(run: RunSpec, f: Facts) -> str | None:
    name = run.model.lower()
    thinking = "thinking" in name or re.search(r"(^|[-/])(r1|qwq)([-_]|$)", name) \
        or re.fullmatch(r"qwen/qwen3-\d+(\.\d+)?b", name)
    if isinstance(run.method, OPSD) and thinking:
        return ("self-distillation on a thinking model costs points (up to 17% relative "
                "avg@16): the hint suppresses the fork tokens where the model checks itself")
    return None


def _small_opsd(run: RunSpec, f: Facts) -> str | None:
    size = size_b(run.model)
    if isinstance(run.method, OPSD) and size is not None and size < 7:
        return (f"a {size:g}B student is below ~7B, where in-context learning is too weak to use "
                "the hint (SDFT vs SFT: 3B -3.3, 7B +4.0)")
    return None


def _live_anchor(run: RunSpec, f: Facts) -> str | None:
    if isinstance(run.method, OPSD) and f.anchor == "live":
        return ("the self-teacher is the live policy (unanchored): it diverges in SDPO's ablation "
                "(36.1 vs 48.8 frozen, 49.3 EMA)")
    return None


def _long_opsd(run: RunSpec, f: Facts) -> str | None:
    steps = _steps(run, f)
    if isinstance(run.method, OPSD) and isinstance(steps, int) and steps > 300:
        return (f"{steps} steps of self-distillation: long runs collapse late; route failed "
                "rollouts to self-distillation and correct ones to the reward")
    return None


def _lora_lr(run: RunSpec, f: Facts) -> str | None:
    lr = run.learning_rate if f.learning_rate is None else f.learning_rate
    if isinstance(run.method, OPD) and run.lora and isinstance(lr, (int, float)) and lr >= 1e-3:
        return f"LoRA OPD at lr {lr:g} uses the SFT rate; OPD uses 1e-4"
    return None


def _eval_never(run: RunSpec, f: Facts) -> str | None:
    """From the compiled values: the eval interval (None: evaluation off) and the steps."""
    interval, steps = f.eval_interval, _steps(run, f)
    if f.eval_off:
        return "evaluation is off: the run reports no holdout score to compare arms on"
    if isinstance(interval, int) and isinstance(steps, int) and interval > steps:
        start = " (only the starting model, at step 0)" if f.eval_at_start else ""
        return (f"eval interval {interval} > {steps} steps: no trained step is ever "
                f"evaluated{start}; set eval.interval to at most {steps}")
    return None


def _eval_final(run: RunSpec, f: Facts) -> str | None:
    """From the compiled values (overrides included): the final step is evaluated only when the
    interval divides the steps."""
    interval, steps = f.eval_interval, _steps(run, f)
    if not isinstance(interval, int) or not isinstance(steps, int) or not 0 < interval <= steps \
            or steps % interval == 0:
        return None
    from whileai.spec.run import default_eval_interval

    return (f"eval interval {interval} does not divide {steps} steps: the last evaluation is at "
            f"step {steps - steps % interval}, so the final model is never scored; set "
            f"eval.interval to a divisor of the steps (e.g. {default_eval_interval(steps)})")


def _holdout(run: RunSpec, f: Facts) -> str | None:
    """From the compiled sources: which split train and eval read (a target fact); a mixture
    checks every eval source against every training source on its taskset (`holdouts`)."""
    found = [h for h in (f.holdouts or [f.holdout]) if h and h.get("same_rows")]
    if not found:
        return None
    out: dict[tuple[Any, ...], list[str]] = {}  # one sentence per eval source and split
    for h in found:
        key = (h.get("eval_source"), h["taskset"], h.get("arg"), h["train"], h.get("eval", h["train"]),
               h["advice"])
        out.setdefault(key, []).append(str(h.get("source")))
    said = []
    for (ev, taskset, arg, train, evals, advice), sources in out.items():
        rows = ("the same tasks: it has no split argument" if not arg else f"{arg} {train!r} for both"
                if train == evals else f"{arg} {train!r} and {evals!r} share rows")
        who = (f"eval source {ev!r} reads the rows training source{'s' if len(sources) > 1 else ''} "
               f"{', '.join(map(repr, sources))} read{'' if len(sources) > 1 else 's'}"
               if ev is not None else "eval reads the rows training reads")
        said.append(f"{who} ({taskset}: {rows}), so the eval score is no holdout score; {advice}")
    return "; ".join(said)


def _unchecked(run: RunSpec, f: Facts) -> str | None:
    from whileai.catalogs import tasksets as taskset_catalog

    names = f.unchecked_tasksets
    if not names:
        return None
    return ("; ".join(taskset_catalog.unknown_reason(n) for n in names) + ": its roles, arguments "
            "and splits were not checked. prime-rl imports a taskset when it loads the config, so "
            "it must be installed where `uv run rl` runs")


def _truncated(run: RunSpec, f: Facts) -> str | None:
    if f.support_top_k:
        return (f"the loss sees only the top {f.support_top_k} tokens: a top-32 reverse-KL run "
                "scored 0.189/0.240 against 0.434/0.438 over the full vocabulary in the anchor's "
                "text-to-SQL recipe")
    return None


def _single_number(run: RunSpec, f: Facts) -> str | None:
    if run.method.teacher_role is not None:
        return "run a GRPO arm on the same holdout before believing a single number"
    return None


def _temperature(run: RunSpec, f: Facts) -> str | None:
    if run.method.distills and run.method.temperature != 1.0:
        t = run.method.temperature
        if f.loss_temperature:  # TRL divides both models' logits by it in the loss
            return (f"temperature {t:g} != 1.0 changes the objective, not only sampling: the loss "
                    f"divides both models' logits by {t:g}, so it fits the student's {t:g}-tempered "
                    f"distribution to the teacher's (on-policy for that one); the student sampled "
                    "at 1.0 is not the distribution the loss fitted")
        return (f"student temperature {t:g} != 1.0 samples off the policy "
                "the loss assumes")
    return None


def _lora_rank(run: RunSpec, f: Facts) -> str | None:
    if isinstance(run.method, OPD) and run.lora and run.lora_rank < 32:
        return f"LoRA rank {run.lora_rank} < 32: rank 32 already trails full weights by ~6% after OPD"
    return None


RULES: list[Rule] = [
    Rule("tokenizer-mismatch", "teacher and student tokenizers differ: measured from local tokenizer "
         "files when both are found (path or HF cache), else guessed from model-name families",
         f"{TOKENIZERS}; TRL issues 2215, 3028, 4562", _tokenizer),
    Rule("top-k-small", "OPD top_k == 1 (fails) or < 16", "Li 2026, arXiv:2604.13016 §6.3", _top_k_one,
         ("method.top_k",)),
    Rule("top-k-no-nucleus", "the backend truncates the teacher's support and top_p = 1",
         "Fu 2026, arXiv:2603.25562, Table 3", _topk_nucleus),
    Rule("sampled-token-top-p", "sampled-token estimator with top_p < 1",
         "OpenRLHF enforces top_p = 1", _sampled_top_p),
    Rule("max-tokens-long", "OPD/OPSD max_tokens > 8192", "Li 2026, arXiv:2604.13016 §6.1", _max_tokens,
         ("method.max_tokens",)),
    Rule("sft-cold-start", "OPD/OPSD student looks like a base model, or the teacher thinks aloud "
         "(R1, QwQ, '-Thinking') and the student does not",
         "Li 2026, arXiv:2604.13016 §5.1; Lu 2025", _cold_start),
    Rule("sft-exposure-bias", "SFT max_tokens > 4096: off-policy errors compound with length",
         "the seed article on off- vs on-policy distillation (compounding error); Lu 2025; "
         "Agarwal 2024, arXiv:2306.13649", _exposure_bias),
    Rule("teacher-ceiling", "OPD or SFT teacher of the same family and size as the student",
         "Li 2026, arXiv:2604.13016 §3; Lu 2025", _same_family),
    Rule("opsd-thinking-model", "OPSD on a thinking model",
         "Kaur 2026, arXiv:2607.05184; Kim 2026, arXiv:2603.24472", _thinking),
    Rule("opsd-small-model", "OPSD student under ~7B parameters",
         "Shenfeld 2026, arXiv:2601.19897", _small_opsd),
    Rule("opsd-unanchored", "OPSD teacher is the live policy (effective anchor 'live')",
         "Hübotter 2026, arXiv:2601.20802, Table 4", _live_anchor),
    Rule("opsd-long-run", "OPSD for more than 300 steps",
         "Li 2026 (SRPO), arXiv:2604.02288", _long_opsd),
    Rule("lora-lr-high", "LoRA OPD with learning rate >= 1e-3",
         "tinker-cookbook distillation recipe", _lora_lr, ("method.learning_rate",)),
    Rule("support-truncated", "the backend restricts the loss to a top-k support",
         "anchor text-to-SQL recipe (docs/research.md R16)", _truncated),
    Rule("needs-grpo-arm", "any OPD, OPSD or SFT run", "docs/research.md R17 (Zhao 2026; Hübotter 2026)",
         _single_number),
    Rule("temperature-off-policy", "OPD/OPSD student temperature != 1.0",
         "Lu 2025; all frameworks sample at 1.0", _temperature, ("method.temperature",)),
    Rule("lora-rank-low", "LoRA OPD with rank < 32", "Lu 2025 (Thinking Machines)", _lora_rank,
         ("lora_rank",)),
    Rule("holdout-is-training-data", "eval reads the split training reads (or the taskset has "
         "no split argument)", "prime-rl 559b447 / verifiers a60a606: each source builds its "
         "taskset from its own env.taskset table (schemas/prime-rl-559b447.tasksets.json, split)",
         _holdout),
    Rule("taskset-unchecked", "the taskset is not in the pinned taskset catalogue",
         "verifiers a60a606 resolve_env_config (utils/loaders.py:302): tasksets are imported at "
         "load time", _unchecked),
    Rule("eval-never-runs", "the compiled eval interval exceeds the steps, or eval is off",
         "prime-rl EvalConfig.interval (evaluates every interval steps from step 0); "
         "transformers DefaultFlowCallback (evaluates when step % eval_steps == 0)", _eval_never),
    Rule("eval-skips-final-step", "the compiled eval interval does not divide the steps",
         "prime-rl 559b447 orchestrator/eval_source.py trigger (step % interval == 0); "
         "transformers DefaultFlowCallback (step % eval_steps == 0)", _eval_final),
    Rule("divergence-not-honoured", "method.divergence differs from the objective the compiled "
         "file trains (an override changed it)",
         "TRL 1.16.0 DistillationTrainer beta (0 forward KL, 1 reverse KL, between: JSD)",
         divergence_check),
]


def findings(run: RunSpec, facts: Facts, own: Sequence[Rule] = (),
             known: Sequence[str] | None = None) -> tuple[Finding, ...]:
    """Every shared rule's finding, then those of the target's own rules (`own`); those the spec
    accepts (its `accept` table) marked with its reason. `known`: every rule id an acceptance may
    name (every target's: whileai.targets.registry.rules); None: these rules' ids."""
    rules = [*RULES, *own]
    ids = [r.id for r in rules] if known is None else known
    return mark(run, (f for rule in rules if (f := rule(run, facts)) is not None), ids)
