"""A rehearsal's folder, deadline and ending, whatever the target: its arguments checked, a
folder (--keep, or a temporary one), one Supervisor under one deadline for every process it
starts, SIGTERM taken as Ctrl-C, the verdict written as verdict.json, and the temporary folder
removed when it passed, was refused or crashed mid-way (or on Ctrl-C, said in the
`RehearsalInterrupted` it raises); a failed rehearsal keeps it and its verdict names it.

    checked(steps, timeout, keep, kept="tiny")     # SpecError for a bad --steps, --timeout, --keep
    result = held(Result(), keep=None, timeout=900, body=lambda root, sup: ...)
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.rehearse.supervise import RehearsalInterrupted, Supervisor
from whileai.rehearse.verdict import Result


def checked(steps: int, timeout: float, keep: Path | None, *, kept: str) -> None:
    """--steps, --timeout and --keep, before anything starts; `kept`: what a folder a rehearsal
    kept before holds (it may be used again)."""
    if steps < 1:
        raise SpecError("--steps", steps, "a whole number of steps, at least 1")
    if timeout <= 0:
        raise SpecError("--timeout", timeout, "seconds, more than 0")
    if keep is not None and keep.is_dir() and any(keep.iterdir()) and not (keep / kept).exists():
        raise SpecError("--keep", str(keep), "an empty or new folder, or one a rehearsal kept before")


def held(result: Result, *, keep: Path | None, timeout: float,
         body: Callable[[Path, Supervisor], None]) -> Result:
    """Run `body(root, supervisor)` in the rehearsal's folder with every process it starts under
    one deadline, `timeout` seconds from now; every process is stopped before this returns."""
    root = keep if keep is not None else Path(tempfile.mkdtemp(prefix="whileai-rehearse-"))
    root.mkdir(parents=True, exist_ok=True)
    result.folder = str(root)
    deadline = time.monotonic() + timeout
    old = _on_sigterm()
    try:
        with Supervisor(deadline) as sup:
            body(root, sup)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the processes are stopped; the folder is named
        raise RehearsalInterrupted(None if keep is None and _removed(root) else str(root)) from None
    except Exception as e:  # a refusal or a crash mid-way: its temporary folder goes, or is named
        if keep is None and not _removed(root) and isinstance(e, SpecError):  # removed, or named
            raise SpecError(e.field, e.value, e.allowed,
                            hint="; ".join(x for x in (e.hint, f"its folder is kept at {root}") if x)) from e
        raise
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
        if result.verdicts and root.is_dir():  # never a removed folder made again for its verdict
            from whileai.files.atomic import atomic_write

            atomic_write(root / "verdict.json", json.dumps(result.to_dict(), indent=1) + "\n", durable=False)
        if keep is None and result.ok:
            shutil.rmtree(root, ignore_errors=True)
            result.folder = ""  # gone: the verdict names no folder that is not there
    return result


def _removed(root: Path) -> bool:
    shutil.rmtree(root, ignore_errors=True)
    return not root.exists()


def _on_sigterm() -> Any:
    """SIGTERM ends a rehearsal as Ctrl-C does: every process it started is stopped first."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)
