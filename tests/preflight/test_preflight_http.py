"""whileai.preflight.http: a request ends by its deadline and names what the server had done,
whichever side notices the deadline first (the caller's wait, or the socket's own timeout)."""

from __future__ import annotations

import threading
import time

import pytest
from fake_openai import Silent, refused_url

from whileai.preflight import http


class _LateWait(threading.Event):
    """An event whose timed wait overruns: the worker's socket timeout always fires first."""

    def wait(self, timeout: float | None = None) -> bool:
        return super().wait(None if timeout is None else timeout + 5.0)


@pytest.mark.parametrize("late", [False, True], ids=["caller-first", "socket-first"])
def test_a_silent_server_is_named_whichever_side_times_out(late: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if late:
        monkeypatch.setattr(http._State, "__init__", _with_late_event(http._State.__init__))
    with Silent() as server:
        start = time.monotonic()
        with pytest.raises(http.HttpFailure) as e:
            http.request("GET", server.url + "/models", deadline=start + 0.5)
    assert e.value.kind == "timeout" and str(e.value).startswith("accepted the connection but sent no answer")
    assert time.monotonic() - start < 5.0  # the socket's timeout ends the worker, not the late wait


def test_refused_is_refused() -> None:
    with pytest.raises(http.HttpFailure) as e:
        http.request("GET", refused_url() + "/models", deadline=time.monotonic() + 1.0)
    assert e.value.kind == "refused"


def _with_late_event(init):  # type: ignore[no-untyped-def]
    def late_init(self, *a, **k):  # type: ignore[no-untyped-def]
        init(self, *a, **k)
        self.done = _LateWait()
    return late_init
