"""The teacher of `whileai inspect --run`: which one, opened and checked, and one sample scored.

The teacher is `--teacher-endpoint` (a URL serving the run's teacher, or `vllm:<model>@<url>`),
`--local-teacher PATH` (transformers, offline), or else the one the run itself used: prime-rl's
launcher writes the resolved orchestrator config to `<run dir>/configs/orchestrator.json`
(prime-rl 559b447 src/prime_rl/entrypoints/rl.py:77-86 `write_subconfigs`, the folder from
src/prime_rl/utils/pathing.py:93-94), whose `algo.teacher` (OPD's FrozenModelConfig: `name`,
`base_url`, `api_key_var`; packages/prime-rl-configs/.../configs/algorithm.py:296-307) names it.

An endpoint scores a sample the way the run's orchestrator did: OPD's score_episode sends each
branch's token ids to the teacher pool (src/prime_rl/orchestrator/algo/opd.py:37-45), which
prefill-scores them through `/inference/v1/generate` with `prompt_logprobs`
(src/prime_rl/utils/client.py:479-508; whileai.tokenview.remote.EndpointModel.prefill). A
local teacher runs one forward pass over the same ids (whileai.tokenview.local).

Before any sample is read, the teacher's tokenizer is measured against the run's (the
`--tokenizer`, else the run config's model when it is in the local Hugging Face cache): from
both sets of files (whileai.vocab.compare) when the teacher is local, else the fixed probe text
through the teacher's own /tokenize. A teacher that gives other ids is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from whileai.errors import SpecError, raw
from whileai.tokenview.run import ModelSource, open_model
from whileai.tokenview.scoring import Alt, Model

CONFIG = Path("configs") / "orchestrator.json"


class Scores(NamedTuple):
    """The teacher on one sample's ids: one entry per id, None at the first (no context)."""

    logprobs: list[float | None]
    ranks: list[int | None]
    top: Callable[[int], list[Alt]]  # the teacher's top-k at position i
    texts: Callable[[int], str | None]  # the token's text at position i, when the teacher says
    kl: list[float | None] | None = None  # full-vocabulary KL(student‖teacher) per position (--local-student)


def run_config(exports_root: Path) -> tuple[dict[str, Any], Path] | None:
    """The run's resolved orchestrator config (prime-rl writes it beside token_exports/)."""
    path = exports_root.parent / CONFIG
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (data, path) if isinstance(data, dict) else None


def config_teacher(config: tuple[dict[str, Any], Path] | None) -> ModelSource | None:
    if config is None:
        return None
    data, path = config
    algo = data.get("algo")
    t = algo.get("teacher") if isinstance(algo, dict) and algo.get("type") == "opd" else None
    if not isinstance(t, dict) or not t.get("name") or not t.get("base_url"):
        return None
    return ModelSource(url=str(t["base_url"]), model=str(t["name"]),
                       api_key_env=t.get("api_key_var") or "VLLM_API_KEY",
                       flag=f"{path} algo.teacher")


def config_model(config: tuple[dict[str, Any], Path] | None) -> str | None:
    """The run's student model id (its tokenizer's, unless the config names another)."""
    if config is None:
        return None
    data = config[0]
    for key in ("tokenizer", "model"):
        sec = data.get(key)
        if isinstance(sec, dict) and isinstance(sec.get("name"), str) and sec["name"]:
            return str(sec["name"])
    return None


def teacher_source(*, endpoint: str | None, local: str | None, key_env: str,
                   config: tuple[dict[str, Any], Path] | None) -> ModelSource:
    from whileai.tokenview.app import endpoint_source
    from whileai.tokenview.local import findable

    if endpoint and local:
        raise SpecError("--local-teacher", local, "either --local-teacher or --teacher-endpoint")
    if local:
        return ModelSource(local=findable(local, "--local-teacher"))
    from_config = config_teacher(config)
    if endpoint:
        if from_config is None and not endpoint.startswith("vllm:"):
            raise SpecError("--teacher-endpoint", endpoint, "vllm:<served model>@<url>: the run "
                            f"folder holds no {CONFIG} naming its teacher, so the model name is needed")
        model = from_config.model if from_config else ""
        return endpoint_source("--teacher-endpoint", endpoint, model or "", key_env)
    if from_config is not None:
        return from_config
    raise SpecError("--teacher-endpoint", None, "a teacher to score the run's samples: "
                    "--teacher-endpoint URL or --local-teacher PATH (the run folder holds no "
                    f"{CONFIG} with an OPD teacher)")


def open_teacher(src: ModelSource, *, device: str, timeout: float) -> Model:
    """The teacher, reachable: an endpoint answers one /tokenize first (else one line, exit 2)."""
    return open_model("teacher", src, device=device, timeout=timeout)


def check_tokenizer(teacher: Model, src: ModelSource, run_tokenizer: str | None) -> str:
    """One sentence on the check; SpecError when the teacher's ids differ from the run's."""
    from whileai.vocab import compare as tokcheck
    from whileai.vocab.files import locate

    flag = src.flag or ("--local-teacher" if src.local else "--teacher-endpoint")
    where = locate(run_tokenizer) if run_tokenizer else None
    if where is None:
        return ("not measured: the run's tokenizer is not on this machine (pass --tokenizer, a "
                "folder or a cached model id); the teacher scores the run's ids as they are")
    if src.local:
        check = tokcheck.check_names(str(run_tokenizer), src.local)
        if check is not None and check.verdict == "different":
            raise SpecError(flag, src.local, "a teacher with the run's tokenizer (it scores the run's "
                            "token ids as they are)", hint=check.verdict_text())
        if check is not None:
            return check.verdict_text()
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return "not measured: the tokenizers package is not installed"
    mine = Tokenizer.from_file(str(where / "tokenizer.json")).encode(tokcheck.PROBE_TEXT).ids
    theirs = teacher.encode(tokcheck.PROBE_TEXT)
    if mine != theirs:
        pairs = enumerate(zip(mine, theirs, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(mine), len(theirs)))
        raise SpecError(flag, raw(f"{teacher.name}'s tokenizer differs from the run's ({run_tokenizer})"),
                        "a teacher with the run's tokenizer: it scores the run's token ids as they "
                        "are, as prime-rl sends them", hint=f"the probe text is {len(mine)} ids under "
                        f"the run's tokenizer, {len(theirs)} under the teacher's, first different at {at}")
    return f"same ids as the run's tokenizer ({run_tokenizer}) on the probe text, through the teacher's own"


def score(teacher: Model, ids: list[int], top_k: int, student: Any = None) -> Scores:
    """The teacher's log-prob, rank and top-k at every position of a sample's ids; with a local
    student as well (and a local teacher), the full-vocabulary KL at every position."""
    if teacher.kind == "endpoint":
        return _prefilled(teacher.prefill(ids, top_k), ids, top_k)  # type: ignore[attr-defined]
    got = teacher.score(ids[:1], ids[1:], top_k)
    texts, top = got.texts or [], got.top
    kl: list[float | None] | None = None
    if student is not None and len(ids) > 1:
        from whileai.tokenview.local import full_kl

        found = full_kl(student.logprobs(ids[:1], ids[1:]).cpu(), got.full)
        kl = None if found is None else [None, *found]
    # the [n - 1, V] tensors are not kept
    return Scores([None, *got.logprobs], [None, *got.ranks], lambda i: top[i - 1] if i else [],
                  lambda i: texts[i - 1] if 0 < i <= len(texts) else None, kl)


def _prefilled(rows: list[Any], ids: list[int], top_k: int) -> Scores:
    lps: list[float | None] = [None]
    ranks: list[int | None] = [None]
    for i in range(1, len(ids)):
        row = rows[i] or {}
        mine = row.get(str(ids[i])) or row.get(ids[i])
        if not isinstance(mine, dict) or mine.get("logprob") is None:
            lps.append(None)
            ranks.append(None)
            continue
        lps.append(float(mine["logprob"]))
        ranks.append(int(mine["rank"]) if mine.get("rank") is not None else None)

    def top(i: int) -> list[Alt]:
        row = rows[i] or {}
        best = sorted(row.items(), key=lambda kv: -float(kv[1]["logprob"]))[:top_k]
        return [Alt(int(k), str(v.get("decoded_token") or ""), float(v["logprob"])) for k, v in best]

    def text(i: int) -> str | None:
        got = (rows[i] or {}).get(str(ids[i])) or {}
        t = got.get("decoded_token")
        return t if isinstance(t, str) else None

    return Scores(lps, ranks, top, text)
