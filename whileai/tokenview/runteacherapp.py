"""`whileai inspect --run OUTPUT_DIR --teacher-endpoint URL | --local-teacher PATH | --teacher`:
the run's samples scored against a teacher while its exports are read (one pass). With
`--local-teacher`, `--local-student CHECKPOINT` adds the full-vocabulary KL.

Everything that can be refused is refused before a record is read: a bad --pick or
--per-step, a teacher that cannot be named, an endpoint that does not answer (one line naming
the URL and what it answered, or that it timed out: exit 2), a teacher whose tokenizer gives
other ids than the run's. A teacher that fails later, mid-run, ends the same way; nothing is
written unless the whole report is built. The progress bar is drawn on a terminal only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from whileai.errors import SpecError
from whileai.tokenview import exports
from whileai.tokenview.rundocument import RunReport
from whileai.tokenview.runsummary import Decoder, summarise
from whileai.tokenview.runteacher import PICKS, Scorer


def score_run(run: Path, *, window: tuple[int | None, int | None, int], dec: Decoder,
              tokenizer: str | None, flags: Any, show_step: int | None,
              err: Console) -> tuple[RunReport, dict[str, str]]:
    """(the run report with its `teacher` part, the token page's files by name)."""
    from whileai.tokenview.page import render
    from whileai.tokenview.teacher import (
        check_tokenizer,
        config_model,
        open_teacher,
        run_config,
        teacher_source,
    )
    from whileai.tokenview.teacherreport import PAGE, build

    pick, per_step = flags.pick, flags.per_step  # their defaults: TeacherFlags.settled()
    assert pick is not None and per_step is not None, "score_run takes settled flags"
    if pick not in PICKS:
        raise SpecError("--pick", pick, ", ".join(PICKS))
    if per_step < 1:
        raise SpecError("--per-step", per_step, "a whole number of samples per step, at least 1")
    if not 1 <= flags.top_k <= 20:
        raise SpecError("--top-k", flags.top_k, "1 to 20")
    if flags.student and not flags.local:
        raise SpecError("--local-student", flags.student, "with --run, --local-teacher as well: the "
                        "full-vocabulary KL needs both distributions, and an endpoint returns the "
                        "top-k log-probs only")
    root = exports.find_root(run)
    config = run_config(root)
    src = teacher_source(endpoint=flags.endpoint, local=flags.local, key_env=flags.key_env, config=config)
    start = time.perf_counter()
    with err.status("opening the teacher"):
        teacher = open_teacher(src, device=flags.device, timeout=flags.timeout)
        note = check_tokenizer(teacher, src, tokenizer or config_model(config))
        student = None
        if flags.student:
            from whileai.tokenview.local import findable
            from whileai.tokenview.run import ModelSource, open_model

            student = open_model("student", ModelSource(local=findable(flags.student, "--local-student")),
                                 device=flags.device)
    loaded = time.perf_counter() - start
    scorer = Scorer(teacher, dec, pick=pick, per_step=per_step, top_k=flags.top_k,
                    student=student)
    try:
        if err.is_terminal:
            from whileai.tokenview.summary import progress_bar

            with progress_bar(err) as update:
                scorer.progress = update
                report = summarise(run, window=window, decoder=dec, show_step=show_step, visit=scorer)
        else:
            report = summarise(run, window=window, decoder=dec, show_step=show_step, visit=scorer)
        if not report.reading.records:
            return report, {}
        teacher_run, page = build(scorer, report, teacher, tokenizer_note=note, load_seconds=loaded)
    finally:
        scorer.close()
    report.teacher = teacher_run
    report.timings["score"] = teacher_run.timings["score"]
    return report, {PAGE[0]: render(page), PAGE[1]: page.model_dump_json(indent=1) + "\n"}
