"""Whether a Modal token is configured here, read as modal's client reads it, without importing
modal (modal 1.6.4, modal/config.py): `MODAL_TOKEN_ID` in the environment overrides the file
(Config.get: the `MODAL_<KEY>` variable first); else the profile `MODAL_PROFILE` names, or the one
marked `active = true`, or "default" (`_config_active_profile`), of the TOML file at
`MODAL_CONFIG_PATH` or `~/.modal.toml` (`user_config_path`), with a `token_id`.

    modal_token()    # "MODAL_TOKEN_ID", "~/.modal.toml (profile 'me')", or None

Names where the token is, never its value.
"""

from __future__ import annotations

import os
from pathlib import Path

from whileai.errors import SpecError
from whileai.spec.load import loads_toml


def modal_token() -> str | None:
    """Where the Modal token is configured (words), or None when none is."""
    if os.environ.get("MODAL_TOKEN_ID"):
        return "MODAL_TOKEN_ID"
    path = Path(os.environ.get("MODAL_CONFIG_PATH") or os.path.expanduser("~/.modal.toml"))
    try:
        doc = loads_toml(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError, SpecError):
        return None
    profiles = {k: v for k, v in doc.items() if isinstance(v, dict)}
    name = os.environ.get("MODAL_PROFILE") or next(
        (k for k, v in profiles.items() if v.get("active") is True), "default")
    if (profiles.get(name) or {}).get("token_id"):
        return f"{path} (profile {name!r})"
    return None


__all__ = ["modal_token"]
