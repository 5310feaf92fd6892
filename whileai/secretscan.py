"""One secret scanner for every string whileai reads: key formats, URL credentials, random tokens.

`find(text)` names the kind of secret a string holds (or None), `mask(text)` hides every one
(error lines and reports run through it), `first_in(tree)` walks a spec's raw data (keys,
values, arrays) and `sensitive(segments)` says when a target key names a secret
(`[overrides.env_vars] PASSWORD = ...`), whose value must then be a variable NAME.
Calibrated so that model ids, local paths, URLs with /v1, 40-hex commit SHAs, W&B project
names and taskset ids never trip it (tests/test_secretscan.py checks both sides).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

_B = r"(?<![A-Za-z0-9])"  # a key starts at a word boundary: 'risk-x' holds no 'sk-' key
# prefix → the characters its body uses; the body must pass `_body_ok` (long, or with a digit)
_PREFIXED = re.compile(
    _B + r"(?P<prefix>sk-(?:ant-|proj-|live-|test-|svcacct-)?|(?:sk|rk|pk)_(?:live|test)_|hf_|"
    r"gh[pousr]_|github_pat_|glpat-|glptt-|xox[abposre]-|gsk_|r8_|pplx-|npm_|pypi-|a[ks]-|"
    r"dop_v1_|SG\.|shpat_|lin_api_)(?P<body>[A-Za-z0-9_\-.]{6,})"
)
_FIXED = re.compile(
    _B + r"(?:(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{12,}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{20,}"  # Google API keys
    r"|eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)*"  # JWTs
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/\-]{6,}=*"
    r"|(?i:\bbasic\s+)[A-Za-z0-9+/]{8,}=*"
)
# formats distinctive enough to find glued inside a longer word ('answerAKIA...', 'xghp_...'):
# each with its exact body length or a long random body, so words such as 'risk-x' or
# 'hf_datasets' never match
_GLUED = re.compile(
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}(?:\.[A-Za-z0-9_\-]*)?"
    r"|gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{40,}"
    r"|glpat-[A-Za-z0-9_\-]{20}|xox[abposre]-[0-9]{6,}-[0-9A-Za-z\-]{8,}"
    r"|hf_[A-Za-z]{34}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|sk-(?:ant-|proj-|svcacct-)[A-Za-z0-9_\-]{20,}"
)
# known prefixes found anywhere, glued to a word or not ('answerglpat-…'): the ones no word
# holds take any key body (`_body_ok`); the ones a word can end in ('highs_', 'task-', 'xoxo')
# take a body of letters and digits as long as the real keys' (GitHub 36, Hugging Face 34,
# OpenAI 48), of two kinds of character at least
_ANYWHERE = re.compile(r"(?P<prefix>glpat-|glptt-|gldt-|glrt-|glsoat-|github_pat_|sk-ant-|"
                       r"sk-proj-|sk-svcacct-|(?:sk|rk|pk)_(?:live|test)_|xox[abpres]-(?=[0-9]))"
                       r"(?P<body>[A-Za-z0-9_\-.]{6,})")
_ANYWHERE_LONG = re.compile(r"(?P<prefix>gh[pousr]_|sk-|hf_)(?P<body>[A-Za-z0-9]{30,})")
# W&B: a 40-hex key after a name that says so (a bare 40-hex string is a commit SHA), or a
# W&B server's local- key
_WANDB = re.compile(r"(?i:wandb[_\-]?(?:api[_\-]?)?key)[\s=:'\"]{0,3}(?P<body>[0-9a-f]{40})"
                    r"|(?<![A-Za-z0-9])local-(?P<local>[0-9a-f]{40})(?![0-9a-f])")
_URL_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^/\s?#@]+@")
_URL_QUERY = re.compile(
    r"(?i)[?&#][A-Za-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|sig|signature|auth|"
    r"credential|session)[A-Za-z0-9_\-]*=[^&#\s]+"
)
_CHUNK = re.compile(r"[A-Za-z0-9+=]{16,}")  # separators (- _ . / : @ ...) split a chunk
_HEX = r"[0-9a-f]+|[0-9A-F]+"
MARK = "[redacted]"

# target-key words that name a secret (the key's last word), and env-table names
_SECRET_WORDS = {"token", "secret", "password", "passwd", "pwd", "credential", "credentials",
                 "authorization", "cookie", "apikey", "passphrase"}
_SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
                 ("auth", "key"), ("client", "secret")}
_ENV_WORDS = _SECRET_WORDS | {"key"}
_ENV_NAME = r"\$?\{?[A-Z_][A-Z0-9_]*\}?"


def _body_ok(body: str) -> bool:
    """A key body: long enough, or shorter with a digit in it (so 'hf_datasets' is no key)."""
    body = body.rstrip(".-_")
    return len(body) >= 16 or (len(body) >= 8 and any(c.isdigit() for c in body))


def _classes(text: str) -> int:
    return sum(any(f(c) for c in text) for f in (str.isupper, str.islower, str.isdigit))


_PIECE = r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|."


def _piece_rate(text: str) -> float:
    """Pieces (a capitalised word, an acronym, a number) per character: about 0.5 for a
    random token, under 0.3 for names made of words ('MiniMaxM2RendererConfig': 6 in 23)."""
    return len(re.findall(_PIECE, text)) / len(text)


def _entropy(text: str) -> float:
    counts = {c: text.count(c) for c in set(text)}
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def is_random(chunk: str) -> bool:
    """A long run that reads like a random token, not like words, versions or a hex digest
    (hex digests such as commit SHAs are allowed)."""
    if len(chunk) < 16 or re.fullmatch(_HEX, chunk):
        return False
    digits = sum(c.isdigit() for c in chunk)
    if _classes(chunk) == 3:
        return len(chunk) >= 20 and _piece_rate(chunk) >= 0.4 and _entropy(chunk) >= 3.5
    if _classes(chunk) == 2 and not any(c.isupper() for c in chunk):  # lowercase + digits
        return len(chunk) >= 24 and digits >= 4 and _piece_rate(chunk) >= 0.3
    return False


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    for m in _PREFIXED.finditer(text):
        if _body_ok(m.group("body")):
            yield m.start("body"), m.end(), f"a {m.group('prefix')}… key"
    for m in _FIXED.finditer(text):
        yield m.start(), m.end(), "a credential"
    for m in _GLUED.finditer(text):
        yield m.start(), m.end(), "a credential inside a word"
    for m in _ANYWHERE.finditer(text):
        if _body_ok(m.group("body")):
            yield m.start("body"), m.end(), f"a {m.group('prefix')}… key"
    for m in _ANYWHERE_LONG.finditer(text):
        if _classes(m.group("body")) >= 2:
            yield m.start("body"), m.end(), f"a {m.group('prefix')}… key"
    for m in _WANDB.finditer(text):
        yield m.start(m.lastgroup or 0), m.end(), "a W&B API key"
    for m in _URL_USER.finditer(text):
        yield m.start() + m.group(0).index("://") + 3, m.end() - 1, "credentials in a URL"
    for m in _URL_QUERY.finditer(text):
        yield m.start() + m.group(0).index("=") + 1, m.end(), "a credential in a URL query"
    for m in _CHUNK.finditer(text):
        if is_random(m.group(0)):
            yield m.start(), m.end(), "a random-looking token"


def find(text: str) -> str | None:
    """What kind of secret `text` holds, or None."""
    return next((kind for _, _, kind in _spans(text)), None)


def mask(text: str) -> str:
    """`text` with every secret-looking span replaced by [redacted]."""
    spans = sorted((a, b) for a, b, _ in _spans(text))
    if not spans:
        return text
    out, pos = [], 0
    for a, b in spans:
        if b <= pos:
            continue
        out.append(text[pos:max(a, pos)] + MARK)
        pos = b
    return "".join(out) + text[pos:]


def first_in(tree: Any, path: str = "") -> tuple[str, str] | None:
    """(path, kind) of the first secret in a raw spec tree (dict keys, values, lists), or None."""
    if isinstance(tree, str):
        kind = find(tree)
        return (path, kind) if kind else None
    if isinstance(tree, dict):
        for k, v in tree.items():
            sub = f"{path}.{k}" if path else str(k)
            kind = find(k) if isinstance(k, str) else None
            if kind:
                return (path or "<key>", kind)
            hit = first_in(v, sub)
            if hit:
                return hit
    if isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            hit = first_in(v, f"{path}[{i}]")
            if hit:
                return hit
    return None


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", name) if w]


def sensitive(segments: list[str]) -> bool:
    """Whether a target key names a secret: an env-table entry such as PASSWORD or HF_TOKEN,
    or a key such as hub_token, api_key, Authorization (not api_key_var, max_tokens, demo_key)."""
    words = _words(segments[-1]) if segments else []
    if not words:
        return False
    parent = segments[-2].lower() if len(segments) > 1 else ""
    if parent == "env" or parent.endswith("env_vars") or parent == "environment":
        return bool(set(words) & _ENV_WORDS)
    return words[-1] in _SECRET_WORDS or tuple(words[-2:]) in _SECRET_PAIRS


def names_a_variable(value: str) -> bool:
    """A value that names an environment variable (HF_TOKEN, $HF_TOKEN, ${HF_TOKEN}) or is empty."""
    return value == "" or bool(re.fullmatch(_ENV_NAME, value))
