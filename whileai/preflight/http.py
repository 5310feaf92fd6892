"""A small HTTP client with a hard deadline (standard library only).

Every request runs in a daemon worker thread that the caller joins until the deadline; a
server that accepts the connection and never answers, or trickles its answer a byte at a time,
cannot hold the caller past it: on the deadline the socket is shut down (which wakes the
worker) and the request is reported as `no answer` or `too slow`, naming what had arrived. DNS
look-ups run in the worker too, so they are bounded the same way.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

LIMIT = 4 << 20  # bytes of an answer read at most: a probe's answers are small


class HttpFailure(Exception):
    """A request that got no complete HTTP answer: `kind` is refused, timeout, slow or network."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Answer:
    status: int
    body: bytes
    seconds: float

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.body.decode("utf-8"))

    def list_of(self, key: str, kind: type[T]) -> list[T] | None:
        """The JSON object's `key` when it is a list of `kind` (GET /v1/models' data, of dicts;
        POST /tokenize's tokens, of ints); None for anything else."""
        try:
            data = self.json()
        except ValueError:
            return None
        items = data.get(key) if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(x, kind) for x in items):
            return None
        return items

    def start(self) -> str:
        """The body's first 40 characters, quoted, for a message."""
        text = self.body[:40].decode("utf-8", "replace")
        return f"{text!r}" if text else "an empty body"


@dataclass
class _State:
    phase: str = "connecting"  # connecting -> waiting (request sent) -> body (headers read)
    got: int = 0
    sock: socket.socket | None = None
    answer: Answer | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


def request(method: str, url: str, *, deadline: float, body: Any = None,
            headers: dict[str, str] | None = None) -> Answer:
    """One request that ends by `deadline` (time.monotonic()), answered or not."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpFailure("network", f"{url} is not an http(s) URL")
    state = _State()
    worker = threading.Thread(target=_run, args=(state, method, parts, body, dict(headers or {}),
                                                 deadline), daemon=True)
    start = time.monotonic()
    worker.start()
    state.done.wait(max(0.0, deadline - start))
    if not state.done.is_set():
        _shut(state.sock)
        raise _timed_out(state, parts.netloc, time.monotonic() - start)
    if isinstance(state.error, (socket.timeout, TimeoutError)):  # the socket's own deadline won
        raise _timed_out(state, parts.netloc, time.monotonic() - start)
    if state.error is not None:
        raise _failure(state.error, parts.netloc)
    assert state.answer is not None
    return state.answer


def _timed_out(state: _State, where: str, waited: float) -> HttpFailure:
    """The deadline passed: what the server had done by then names the failure."""
    if state.phase == "connecting":
        return HttpFailure("timeout", f"no connection to {where} within {waited:.1f} s")
    if state.phase == "waiting":
        return HttpFailure("timeout", f"accepted the connection but sent no answer within "
                           f"{waited:.1f} s")
    return HttpFailure("slow", f"the answer was still arriving after {waited:.1f} s "
                       f"({state.got} bytes of it): far too slow")


def _run(state: _State, method: str, parts: urllib.parse.SplitResult, body: Any,
         headers: dict[str, str], deadline: float) -> None:
    start = time.monotonic()
    try:
        wait = max(0.01, deadline - start)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "", parts.port, timeout=wait)
        try:
            conn.connect()
            state.sock = conn.sock
            if time.monotonic() >= deadline:  # shut down while connecting: nothing to wake
                _shut(state.sock)
            data = None if body is None else json.dumps(body).encode()
            if data is not None:
                headers.setdefault("Content-Type", "application/json")
            path = parts.path or "/"
            conn.request(method, path + (f"?{parts.query}" if parts.query else ""), body=data,
                         headers=headers)
            state.phase = "waiting"
            resp = conn.getresponse()
            state.phase = "body"
            chunks: list[bytes] = []
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                state.got += len(chunk)
                if state.got > LIMIT:
                    raise HttpFailure("network", f"an answer longer than {LIMIT >> 20} MiB")
            state.answer = Answer(resp.status, b"".join(chunks), time.monotonic() - start)
        finally:
            conn.close()
    except BaseException as e:  # reported to the caller, never raised in the thread
        state.error = e
    finally:
        state.done.set()


def _shut(sock: socket.socket | None) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _failure(e: BaseException, where: str) -> HttpFailure:
    if isinstance(e, HttpFailure):
        return e
    if isinstance(e, ConnectionRefusedError):
        return HttpFailure("refused", f"connection refused at {where}: nothing is listening there")
    if isinstance(e, socket.gaierror):
        return HttpFailure("network", f"the host of {where} does not resolve ({e.strerror or e})")
    if isinstance(e, http.client.HTTPException):
        return HttpFailure("network", f"{where} did not answer in HTTP ({type(e).__name__})")
    if isinstance(e, OSError):
        return HttpFailure("network", f"{where}: {e.strerror or type(e).__name__}")
    return HttpFailure("network", f"{where}: {type(e).__name__}")


__all__ = ["Answer", "HttpFailure", "request"]
