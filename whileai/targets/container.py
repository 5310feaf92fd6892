"""What a container job does when its input starts again, and how it stops: shared by the targets
whose arms run on Modal (prime-rl, verl). Light: no modal.

An arm works in its own folder on the Modal volume (whileai.launch.modal_app `train`): its files,
logs, outputs and checkpoints. Modal restarts a preempted input on a new container (modal's
preemption guide; the client's own loop retries internal failures, "lost inputs or worker
preemption": modal/_functions.py:487) and mounts the same volume, so the folder says whether this
is a restart (`attempt`) and what to resume from (each target's checkpoints).
"""

from __future__ import annotations

import hashlib
import json
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ATTEMPTS = "attempts"  # a line per attempt of a container job in the arm's volume folder


CKPT_EVERY = 10  # checkpoints per arm where its config asks for none (a restart resumes from one)


def ckpt_every(steps: int) -> int:
    """Steps between an arm's checkpoints: a tenth of its steps, at least one."""
    return max(1, steps // CKPT_EVERY)


def _digest(job: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(job.get("files", {}), sort_keys=True).encode()).hexdigest()[:16]


def done_before(folder: Path, job: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ok record an earlier attempt of this same job left in `folder` (a restarted input
    returns it instead of training again); None when there is none, or when it was another job's
    (a re-planned spec under the same tag: its files differ)."""
    from whileai.targets.run import finished

    f = folder / ATTEMPTS
    last = f.read_text(encoding="utf-8").split()[-1:] if f.exists() else []
    if last and last != [_digest(job)]:
        return None
    return finished(folder / "metrics.json")


def attempt(work: Path, job: Mapping[str, Any]) -> int:
    """This attempt's number in the arm's folder, counted there (1: the first). A later one is
    a restarted input (Modal restarts a preempted input on the same folder) or a
    --relaunch-failed: it resumes from the last checkpoint the folder holds. An arm whose files
    changed since (a re-planned spec under the same tag) counts from 1 again: its old
    checkpoints are not its own."""
    digest = _digest(job)
    f = work / ATTEMPTS
    lines = f.read_text(encoding="utf-8").split() if f.exists() else []
    n = len(lines) + 1 if lines and lines[-1] == digest else 1
    work.mkdir(parents=True, exist_ok=True)
    with open(f, "a" if n > 1 else "w", encoding="utf-8") as out:
        out.write(digest + "\n")
    return n


def restarted(n: int, where: str) -> str:
    """The log's and the record's words for attempt `n` (> 1) resuming from `where`."""
    return (f"whileai: attempt {n} in this folder: restarted (a preempted input that Modal "
            f"restarted, or --relaunch-failed), not a failure; resuming from {where}")


def run_group(argv: list[str], *, cwd: Path, log: Path, env: Mapping[str, str] | None = None,
              grace: float = 30.0) -> int:
    """argv in its own process group, its output appended to `log`; its exit code. Any exception
    while it runs (modal's InputCancellation when the call is cancelled, KeyboardInterrupt when
    the container is preempted: both BaseExceptions) stops the whole group (SIGTERM, SIGKILL after
    `grace` s: training spawns its own workers) and is raised again."""
    import contextlib
    import os
    import subprocess

    with open(log, "ab") as out:
        p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                             env=None if env is None else dict(env), start_new_session=True)
        try:
            return p.wait()
        except BaseException:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, sig)
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)  # what the leader left behind
            raise


__all__ = ["ATTEMPTS", "attempt", "done_before", "restarted", "run_group"]
