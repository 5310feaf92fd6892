"""Tokenizer check from the tokenizers themselves: do teacher and student share token ids?

The teacher scores the student's token ids (prime-rl's opd sends them as they are; TRL's
DistillationTrainer compares logits over one vocabulary), so a mismatch silently corrupts the
signal. When both tokenizers are on this machine — a local path, or a snapshot in the local
Hugging Face cache (nothing is downloaded) — `check_names` compares them:

- the vocabulary: sizes, and how many token strings map to the same id in both;
- the ids of a fixed probe text (words, digits, code, whitespace, non-ASCII);
- the special tokens EOS, PAD and BOS (their strings and ids);
- the chat template's output on a fixed conversation (rendered with jinja2, as transformers does);
- the models' embedding sizes (`vocab_size` in config.json), which TRL requires to be equal.

Only the light `tokenizers` library (tokenizer.json) and jinja2 are imported, and only when
both sets of files exist; otherwise the caller falls back to the model-name family heuristic.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from whileai.vocab.files import hub_cache, locate, missing

PROBE_TEXT = (
    "Reverse the text: 'Hello, World!' -> '!dlroW ,olleH'.\n"
    "def f(x):\n    return x ** 2  # 3.14159, 42, 1e-5\n"
    "Grüße, naïve café — 東京 🙂\t<tags> and   spaces."
)
PROBE_CONVERSATION = [
    {"role": "system", "content": "You are a careful assistant."},
    {"role": "user", "content": "What is 2 + 3?"},
    {"role": "assistant", "content": "2 + 3 = 5."},
]
SPECIALS = ("eos", "pad", "bos")


class SpecialToken(BaseModel):
    """One special token on both sides."""

    model_config = ConfigDict(extra="forbid")

    student: str | None = Field(description="The student's token string (null: none set).")
    teacher: str | None = Field(description="The teacher's token string (null: none set).")
    student_id: int | None = Field(description="Its id in the student's vocabulary.")
    teacher_id: int | None = Field(description="Its id in the teacher's vocabulary.")


class TokenizerCheck(BaseModel):
    """Teacher and student tokenizers compared from their files."""

    model_config = ConfigDict(extra="forbid")

    basis: Literal["measured"] = Field(default="measured", description="Compared from local files.")
    student_files: str = Field(description="Where the student's tokenizer was read.")
    teacher_files: str = Field(description="Where the teacher's tokenizer was read.")
    verdict: Literal["identical", "same-ids", "different"] = Field(
        description="identical: everything compared is equal; same-ids: token ids agree (probe, "
        "shared vocabulary, EOS) but something else differs (see differences); different: the "
        "teacher would score other tokens than the student sampled.")
    vocab_size: tuple[int, int] = Field(description="Tokens in each vocabulary (student, teacher), "
                                        "added tokens included.")
    same_id_tokens: int = Field(description="Token strings present in both with the same id.")
    id_overlap: float = Field(description="same_id_tokens / the larger vocabulary.")
    embedding_rows: tuple[int | None, int | None] = Field(
        description="config.json vocab_size of each model (null: no config.json).")
    probe_same: bool = Field(description="The probe text encodes to the same ids.")
    probe_tokens: tuple[int, int] = Field(description="Probe length in tokens (student, teacher).")
    special: dict[str, SpecialToken] = Field(description="eos, pad, bos of each side.")
    chat_template_same: bool | None = Field(
        description="The chat templates render the probe conversation to the same text (null: "
        "a template is missing or could not be rendered).")
    differences: list[str] = Field(description="Each difference found, one sentence each.")

    def statement(self) -> str:
        """One measured sentence for reports."""
        head = (f"tokenizers compared from local files: vocab {self.vocab_size[0]} vs "
                f"{self.vocab_size[1]}, {self.id_overlap:.1%} of tokens share an id, probe text "
                f"{'encodes identically' if self.probe_same else 'encodes differently'}")
        if not self.differences:
            return head + "; EOS/PAD/BOS and chat template output identical"
        return head + "; " + "; ".join(self.differences)

    def verdict_text(self) -> str:
        """The statement plus what it means for the distillation signal."""
        if self.verdict == "identical":
            return self.statement()
        risk = ("the teacher scores other tokens than the student sampled and the signal is "
                "silently wrong; use one tokenizer or a cross-tokenizer method"
                if self.verdict == "different" else "token ids agree, so the per-token signal is sound")
        return f"{self.statement()}; {risk}"


def check_names(student: str, teacher: str) -> TokenizerCheck | None:
    """Compare the two tokenizers when both are local; None when either is not (or the
    `tokenizers` library is not installed)."""
    a, b = locate(student), locate(teacher)
    if a is None or b is None:
        return None
    try:
        return _check(str(a), str(b), _stamp(a), _stamp(b))
    except ImportError:
        return None


def _stamp(folder: Path) -> int:
    return (folder / "tokenizer.json").stat().st_mtime_ns


@lru_cache(maxsize=16)
def _check(a: str, b: str, _sa: int, _sb: int) -> TokenizerCheck:
    return compare(_Side.load(Path(a)), _Side.load(Path(b)))


class _Side:
    def __init__(self, folder: Path, tok: Any, config: dict[str, Any], rows: int | None,
                 template: str | None) -> None:
        self.folder, self.tok, self.config, self.rows, self.template = folder, tok, config, rows, template

    @classmethod
    def load(cls, folder: Path) -> _Side:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        config = _json(folder / "tokenizer_config.json")
        for k, v in _json(folder / "special_tokens_map.json").items():
            config.setdefault(k, v)
        rows = _json(folder / "config.json").get("vocab_size")
        template = config.get("chat_template")
        if isinstance(template, list):  # named templates: the default one
            template = next((t.get("template") for t in template if t.get("name") == "default"), None)
        jinja = folder / "chat_template.jinja"
        if jinja.is_file():
            template = jinja.read_text(encoding="utf-8")
        return cls(folder, tok, config, rows if isinstance(rows, int) else None,
                   template if isinstance(template, str) else None)

    def special(self, kind: str) -> str | None:
        v = self.config.get(f"{kind}_token")
        if isinstance(v, dict):
            v = v.get("content")
        return v if isinstance(v, str) else None

    def render(self) -> str | None:
        if self.template is None:
            return None
        try:
            from jinja2.ext import loopcontrols
            from jinja2.sandbox import ImmutableSandboxedEnvironment
        except ImportError:
            return None

        def fail(msg: str) -> None:
            raise ValueError(msg)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = lambda x, indent=None, **_: json.dumps(x, ensure_ascii=False, indent=indent)
        env.globals["raise_exception"] = fail
        specials = {f"{k}_token": self.special(k) or "" for k in SPECIALS}
        try:
            return env.from_string(self.template).render(
                messages=PROBE_CONVERSATION, add_generation_prompt=False, **specials)
        except Exception:  # a template using features outside the sandbox: not comparable
            return None


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _id(vocab: dict[str, int], token: str | None) -> int | None:
    return vocab.get(token) if token is not None else None


def compare(s: _Side, t: _Side) -> TokenizerCheck:
    vs, vt = s.tok.get_vocab(with_added_tokens=True), t.tok.get_vocab(with_added_tokens=True)
    same = sum(1 for k, i in vs.items() if vt.get(k) == i)
    ps = s.tok.encode(PROBE_TEXT, add_special_tokens=False).ids
    pt = t.tok.encode(PROBE_TEXT, add_special_tokens=False).ids
    special = {k: SpecialToken(student=s.special(k), teacher=t.special(k), student_id=_id(vs, s.special(k)),
                               teacher_id=_id(vt, t.special(k))) for k in SPECIALS}
    rs, rt = s.render(), t.render()
    chat = None if rs is None or rt is None else rs == rt
    diffs: list[str] = []
    if ps != pt:
        at = next((i for i, (x, y) in enumerate(zip(ps, pt, strict=False)) if x != y), min(len(ps), len(pt)))
        diffs.append(f"the probe text encodes to different ids from token {at} on "
                     f"({len(ps)} vs {len(pt)} tokens)")
    if vs != vt:
        diffs.append(f"vocabularies differ: {len(vs)} vs {len(vt)} tokens, {same} with the same id")
    for k, sp in special.items():
        if (sp.student, sp.student_id) != (sp.teacher, sp.teacher_id):
            why = (": the teacher does not expect the student's end token, so the signal on it is "
                   "inflated") if k == "eos" else ""
            diffs.append(f"{k.upper()} differs: {sp.student!r} (id {sp.student_id}) vs "
                         f"{sp.teacher!r} (id {sp.teacher_id}){why}")
    if chat is False:
        diffs.append("the chat templates render the same conversation differently (the teacher "
                     "scores a prompt in a format it was not trained on)")
    elif chat is None and (s.template or t.template):
        diffs.append("chat template output not compared (one is missing or uses features "
                     "outside jinja2's sandbox)")
    if s.rows != t.rows:
        diffs.append(f"embedding rows differ ({s.rows} vs {t.rows}): TRL's DistillationTrainer "
                     "refuses unequal vocab_size; prime-rl's sampled-token signal is unaffected")
    eos = special["eos"]
    # one vocabulary extends the other: every id the smaller side can emit reads the same
    extends = same == min(len(vs), len(vt))
    ids_agree = ps == pt and extends and eos.student_id == _id(vt, eos.student)
    verdict: Literal["identical", "same-ids", "different"] = (
        "identical" if not diffs else "same-ids" if ids_agree else "different")
    return TokenizerCheck(
        student_files=str(s.folder), teacher_files=str(t.folder), verdict=verdict,
        vocab_size=(len(vs), len(vt)), same_id_tokens=same, id_overlap=same / max(len(vs), len(vt), 1),
        embedding_rows=(s.rows, t.rows), probe_same=ps == pt, probe_tokens=(len(ps), len(pt)),
        special=special, chat_template_same=chat, differences=diffs,
    )


__all__ = ["PROBE_CONVERSATION", "PROBE_TEXT", "TokenizerCheck", "check_names", "compare", "hub_cache",
           "locate", "missing"]
