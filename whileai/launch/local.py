"""The local executor: each arm runs its argv in its own folder, detached.

State comes only from files (pids get reused and zombies linger): a run is done when
`metrics.json` exists, crashed when `exit_code` exists without it, pending otherwise.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from whileai.launch.executor import Outcome
from whileai.launch.manifest import ArmRecord
from whileai.launch.runner import CHILD_METRICS, EXIT_CODE, LOG, METRICS, PID
from whileai.targets.run import describe_returncode, read_metrics, tail


class LocalExecutor:
    """Runs arms as subprocesses on this machine; a later process can collect them."""

    name = "local"

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env or {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(self, arm: ArmRecord) -> str:
        if not arm.spec.argv:
            raise ValueError(f"arm {arm.spec.name!r} has no argv to run locally")
        run_dir = Path(arm.dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        for stale in (METRICS, CHILD_METRICS, EXIT_CODE, PID):
            (run_dir / stale).unlink(missing_ok=True)
        with open(run_dir / LOG, "ab") as log:
            log.write(f"--- attempt {arm.attempts + 1}: {arm.spec.argv!r}\n".encode())
        cmd = [sys.executable, "-m", "whileai.launch.runner", "wrap", str(run_dir), "--",
               *arm.spec.argv]
        # Ctrl-C held back until the run is registered: stop() ends every run it knows, so a
        # KeyboardInterrupt between the start and the record would leave that one detached
        with _HeldSigint():
            self._procs[str(run_dir)] = subprocess.Popen(
                cmd, cwd=run_dir, env=dict(os.environ) | self.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
        return str(run_dir)

    def poll(self, arm: ArmRecord) -> Outcome:
        run_dir = Path(arm.handle or arm.dir)
        proc = self._procs.get(str(run_dir))
        if proc is not None:
            proc.poll()  # reap our own child; the state below never depends on it
        if (run_dir / METRICS).exists():
            return Outcome.from_metrics(read_metrics(run_dir / METRICS))
        code_file = run_dir / EXIT_CODE
        if code_file.exists():
            text = code_file.read_text().strip()
            try:
                reason = describe_returncode(int(text))
            except ValueError:
                reason = f"unreadable exit code {text!r}"
            log = tail(run_dir / LOG, 10)
            return Outcome("failed", None, f"{reason} without writing metrics"
                           + (f"; log tail:\n{log}" if log else ""))
        return Outcome("pending")

    def stop(self, grace: float = 5.0) -> list[str]:
        """Stop every run this object spawned that still runs (its wrapper and everything under
        it: each run is its own process group), SIGTERM then SIGKILL; their folders."""
        import signal
        import time

        live = {d: p for d, p in self._procs.items() if p.poll() is None}
        for p in live.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGTERM)
        end = time.monotonic() + grace
        for p in live.values():
            try:
                p.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for p in live.values():  # the training child may outlive its wrapper by a moment
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
        return list(live)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the runs this object spawned (tests and small local sweeps)."""
        for proc in self._procs.values():
            proc.wait(timeout)


class _HeldSigint:
    """Ctrl-C noted, not raised, while a run starts and is registered; raised as soon as it is
    (a handler of Python's, not a signal mask, which the started process would inherit)."""

    def __enter__(self) -> None:
        import signal
        import threading

        self.came = False
        self.held = threading.current_thread() is threading.main_thread()
        if self.held:
            self.before = signal.signal(signal.SIGINT, self._note)

    def _note(self, signum: int, frame: object) -> None:
        self.came = True

    def __exit__(self, *exc: object) -> None:
        import signal

        if self.held:
            signal.signal(signal.SIGINT, self.before)
        if self.came:
            raise KeyboardInterrupt
