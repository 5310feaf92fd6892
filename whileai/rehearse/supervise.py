"""Processes a rehearsal starts, bounded: each in a session (process group) of its own, all
stopped by the deadline whatever hangs (SIGTERM to the group, then SIGKILL), and on Ctrl-C.

    with Supervisor(deadline=time.monotonic() + 600) as sup:
        sup.start("teacher-8001", argv, env=env, log=where / "teacher-8001.log")
        rc = sup.run("launcher", argv, env=env, log=where / "run.log")  # None: the deadline came first

Standard library only.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType


class Supervisor:
    def __init__(self, deadline: float, grace: float = 10.0) -> None:
        self.deadline, self.grace = deadline, grace
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def start(
        self, name: str, argv: list[str], *, env: dict[str, str], log: Path, cwd: Path | None = None
    ) -> subprocess.Popen[bytes]:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as f:
            p = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd,
                stdout=f,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.procs[name] = p
        return p

    def run(
        self,
        name: str,
        argv: list[str],
        *,
        env: dict[str, str],
        log: Path,
        cwd: Path | None = None,
        poll: float = 0.5,
    ) -> int | None:
        """Start and wait until it exits (its code) or the deadline (None; it is then stopped)."""
        p = self.start(name, argv, env=env, log=log, cwd=cwd)
        while p.poll() is None:
            if self.left() <= 0:
                self.stop(name)
                return None
            time.sleep(min(poll, max(0.05, self.left())))
        self.stop(name)  # its children, if any outlived it
        return p.returncode

    def stop(self, name: str) -> None:
        p = self.procs.get(name)
        if p is None:
            return
        _signal_group(p.pid, signal.SIGTERM)
        end = time.monotonic() + self.grace
        while p.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        _signal_group(p.pid, signal.SIGKILL)  # the group: children that ignored SIGTERM too
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def stop_all(self) -> None:
        for name in reversed(list(self.procs)):
            self.stop(name)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)  # the session's group id is the leader's pid
    except (ProcessLookupError, PermissionError):
        pass


def wait_port(port: int, until: float, host: str = "127.0.0.1") -> bool:
    """True once something accepts connections on the port, False at `until` (monotonic)."""
    while time.monotonic() < until:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def busy(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a port is taken (a server the rehearsal would collide with)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


class RehearsalInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) ended a rehearsal after every process it started was stopped;
    `folder`: the folder it left (a --keep folder, or a temporary one it could not remove), or
    None when it removed its temporary folder."""

    def __init__(self, folder: str | None) -> None:
        super().__init__(folder)
        self.folder = folder

    def line(self) -> str:
        where = f"its folder is kept at {self.folder}" if self.folder else "its temporary folder was removed"
        return f"interrupted: every process the rehearsal started was stopped; {where}"
