"""Where a model's tokenizer files are on this machine: a local folder, or a snapshot in the
local Hugging Face hub cache (found the way huggingface_hub lays it out; nothing imported, nothing
downloaded). Standard library only, so `whileai compile` can ask cheaply on every OPD spec;
whileai.vocab.compare compares the files when both are found.
"""

from __future__ import annotations

import os
from pathlib import Path


def hub_cache() -> Path:
    """The local Hugging Face hub cache, as huggingface_hub resolves it (no import)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface")
    return Path(home).expanduser() / "hub"


def locate(name: str) -> Path | None:
    """The folder holding `name`'s tokenizer.json: a local path, or the cached snapshot of a hub
    id (refs/main first). None when there is none on this machine."""
    path = Path(name).expanduser()
    if (path / "tokenizer.json").is_file():
        return path
    if name.count("/") != 1 or path.exists():
        return None
    repo = hub_cache() / ("models--" + name.replace("/", "--"))
    snaps = repo / "snapshots"
    if not snaps.is_dir():
        return None
    try:
        main = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        main = ""
    candidates = ([snaps / main] if main else []) + sorted(
        snaps.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    return next((c for c in candidates if (c / "tokenizer.json").is_file()), None)


def missing(student: str, teacher: str) -> list[str]:
    """Which of the two names have no local tokenizer files (for fallback messages)."""
    return [n for n in (student, teacher) if locate(n) is None]
