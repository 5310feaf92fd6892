"""The teacher-scored run as documents: `RunReport.teacher` (per step, per sample) and the token
page's report, spec inspection's InspectReport (whileai.tokenview.document), rendered by its
own page (whileai.tokenview.page), so a run's samples read as a spec's do."""

from __future__ import annotations

from whileai.tokenview import stats
from whileai.tokenview.document import Definitions, InspectReport, Method, Prompt, Settings, Side
from whileai.tokenview.rundocument import RunReport
from whileai.tokenview.runsummary import MAX_SHOWN
from whileai.tokenview.runteacher import Scorer
from whileai.tokenview.scoring import Model
from whileai.tokenview.teacherdocument import TeacherRun
from whileai.version import __version__

PAGE = ("inspect-run-teacher.html", "inspect-run-teacher.json")
ROUTE = {"endpoint": "POST {root}/inference/v1/generate {model, token_ids: the sample's ids, "
                     "sampling_params: {max_tokens: 1, temperature: 1, top_p: 1, prompt_logprobs: k}}: "
                     "prime-rl 559b447's teacher scoring (src/prime_rl/utils/client.py:479-508), "
                     "with k = top_k instead of 1",
         "local": "one forward pass over the sample's ids (transformers, float32 log-softmax at "
                  "temperature 1)"}
CONTEXT = ("the sample's own token ids, prompt and earlier turns included, as prime-rl's OPD "
           "orchestrator sends them to its teacher (src/prime_rl/orchestrator/algo/opd.py:37-45)")
FULL_KL = ("not available: the token exports hold the student's log-prob of the sampled token "
           "only, not its full distribution, so only the sampled-token signal is exact (with a "
           "local teacher, --local-student CHECKPOINT gives it)")
FULL_KL_LOCAL = ("KL(student‖teacher) over the full vocabulary at each position, the student's "
                 "distribution from --local-student (a checkpoint you name: the run's policy at a step "
                 "is that step's weights) and the teacher's from --local-teacher, on the sample's ids")


def teacher_side(teacher: Model) -> Side:
    return Side(role="teacher", kind=teacher.kind, model=teacher.name,  # type: ignore[arg-type]
                url=getattr(teacher, "url", None), api_key_env=getattr(teacher, "api_key_env", None),
                logprobs="prompt_logprobs" if teacher.kind == "endpoint" else teacher.logprob_source,
                full_distribution=teacher.full_distribution)


def build(scorer: Scorer, report: RunReport, teacher: Model, *, tokenizer_note: str,
          load_seconds: float) -> tuple[TeacherRun, InspectReport]:
    details = scorer.details()
    for n, d in enumerate(details):
        scorer.samples[d.sample].shown = n
    for n, d in enumerate(details):
        d.completion.prompt = n
    side = teacher_side(teacher)
    full = scorer.kl if scorer.kl is not None and scorer.sig else None
    overall = stats.stats_of(scorer.sig, full if full is not None else [None] * len(scorer.sig),
                             scorer.ranks, scorer.top_k)
    kl_note = FULL_KL if full is None else FULL_KL_LOCAL
    filler = stats.filler_share(scorer.sig, scorer.filler) if scorer.dec.name else None
    by_position = scorer.positions.bins()
    timings = {"load": round(load_seconds, 3), "score": round(scorer.seconds, 3)}
    run = TeacherRun(
        teacher=side, route=ROUTE[teacher.kind], pick=scorer.pick,  # type: ignore[arg-type]
        per_step=scorer.per_step, top_k=scorer.top_k, tokenizer_note=tokenizer_note,
        full_kl_note=kl_note, overall=overall, filler_share_signal=filler, by_position=by_position,
        steps=scorer.steps, samples=scorer.samples, page=PAGE[0], timings=timings)
    picked = {"surprise": f"the {scorer.per_step} with the largest mean student surprise",
              "advantage": f"the {scorer.per_step} with the lowest mean advantage",
              "all": "all of them"}[scorer.pick]
    notes = [f"{len(scorer.samples)} samples of {len(scorer.steps)} steps scored ({picked} per step); "
             f"the {len(details)} with the largest mean signal are shown token by token, from "
             f"their first trained token (at most {MAX_SHOWN} tokens each)",
             "student log-probs are the run's trainer_logprobs (token exports); positions count a "
             "sample's trained tokens"]
    if filler is not None:
        notes.append(f"share of the positive signal on filler tokens: {filler:.1%} "
                     "(whitespace, punctuation, discourse words)")
    envs = ", ".join(report.envs) or "(no env name)"
    page = InspectReport(
        whileai=__version__, spec=report.run, taskset=envs,
        method=Method(type="opd", sampler="student", teacher_context=CONTEXT),
        student=Side(role="student", kind="local", model=f"{report.run} (token exports)", url=None,
                     api_key_env=None, logprobs="trainer_logprobs", full_distribution=False),
        teacher=side,
        settings=Settings(prompts=len(details), samples=1, max_tokens=MAX_SHOWN, temperature=1.0,
                          top_k=scorer.top_k, seed=0, split="train",
                          data=f"token exports {report.reading.exports}"),
        definitions=Definitions(full_kl_available=full is not None, full_kl_note=kl_note),
        tokenizer_check=None, tokenizer_note=tokenizer_note, overall=overall,
        by_position=by_position, top_tokens=stats.top_tokens([d.completion for d in details]),
        prompts=[Prompt.model_construct(
            index=n, row=scorer.samples[d.sample].index,
            prompt=f"step {scorer.samples[d.sample].step}, rank {scorer.samples[d.sample].rank}, "
                   f"sequence {scorer.samples[d.sample].index}",
            privileged=None, student_context=scorer.dec.text(d.context_ids)[-400:],
            teacher_context=scorer.dec.text(d.context_ids)[-400:], student_context_ids=d.context_ids,
            teacher_context_ids=d.context_ids) for n, d in enumerate(details)],
        completions=[d.completion for d in details],
        timings={"load": timings["load"], "generate": 0.0, "score": timings["score"],
                 "total": round(load_seconds + scorer.seconds, 3)},
        notes=notes)
    return run, page
