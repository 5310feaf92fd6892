"""ModalExecutor against fake modal objects: every outcome of FunctionCall.get(timeout=0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai.launch import EXIT_DONE, EXIT_INFRA, ArmSpec, InfraError, collect, launch, plan
from whileai.launch.manifest import ArmRecord

modal = pytest.importorskip("modal", reason="the modal extra (pip install -e '.[modal]')")
mx = pytest.importorskip("modal.exception", reason="the modal extra (pip install -e '.[modal]')")

from whileai.launch.modal_app import ModalExecutor  # noqa: E402  (imports modal)

OK = {"status": "ok", "series": {"eval_reward": [[10, 0.6]]}, "per_task": {"a": 0.6},
      "returncode": 0, "seconds": 12.0, "gpu": "NVIDIA H100 x2"}


class FakeCall:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    def get(self, timeout: float | None = None) -> Any:
        assert timeout == 0
        if isinstance(outcome := self.outcome, BaseException):
            raise outcome
        return outcome


class FakeVolume:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def listdir(self, path: str) -> list[Any]:
        from modal.volume import FileEntry, FileEntryType

        return [FileEntry(path=k, type=FileEntryType.FILE, mtime=0, size=len(v))
                for k, v in self.files.items() if k.startswith(path + "/")]

    def read_file(self, path: str) -> Any:
        if isinstance(self.files, Exception):
            raise self.files
        if path not in self.files:
            raise FileNotFoundError(path)
        data = self.files[path]
        return iter([data[:5], data[5:]])


def arm(tmp_path: Path) -> ArmRecord:
    m = plan({"opd": ArmSpec(name="opd", method="opd", files={"rl.toml": "x=1\n"}, main="rl.toml")},
             "tg", tmp_path)
    a = m.arms["opd"]
    a.handle, a.state, a.backend = "fc-123", "pending", "modal"
    return a


def poll_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, outcome: Any,
              volume: Any = None) -> Any:
    seen: list[str] = []

    def from_id(cid: str) -> FakeCall:
        seen.append(cid)
        return FakeCall(outcome)

    monkeypatch.setattr(modal.FunctionCall, "from_id", staticmethod(from_id))
    monkeypatch.setattr(modal.Volume, "from_name", staticmethod(lambda *a, **k: FakeVolume(volume or {})))
    out = ModalExecutor().poll(arm(tmp_path))
    assert seen == ["fc-123"]
    return out


@pytest.mark.parametrize(
    ("outcome", "state", "reason"),
    [
        (TimeoutError(), "pending", None),
        (OK, "done", None),
        ({"status": "error", "error": "rl exited with code 1"}, "failed", "rl exited with code 1"),
        (mx.FunctionTimeoutError("past 43200 s"), "failed", "ran past its timeout"),
        (mx.RemoteError("terminated"), "failed", "the container ended without a result"),
        (mx.InternalFailure("worker lost"), "failed", "gave the input up after its own retries"),
        (ValueError("bad shape"), "failed", "raised ValueError: bad shape"),
        (mx.ExecutionError("boom"), "failed", "ExecutionError"),
        ("not a record", "failed", "unreadable result"),
    ],
)
def test_outcomes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, outcome: Any, state: str,
                  reason: str | None) -> None:
    out = poll_with(monkeypatch, tmp_path, outcome)
    assert out.state == state
    if reason:
        assert reason in (out.error or "")
    if state == "done":
        assert out.metrics.per_task == {"a": 0.6} and out.metrics.gpu == "NVIDIA H100 x2"


@pytest.mark.parametrize("exc", [mx.AuthError("Token missing"), mx.ConnectionError("unreachable"),
                                 ConnectionError("reset"), mx.ClientClosed("closed")])
def test_infra_errors_raise(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exc: Exception) -> None:
    with pytest.raises(InfraError):
        poll_with(monkeypatch, tmp_path, exc)


def test_expired_output_reads_the_volume(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    vol = {"tg-opd/metrics.json": json.dumps(OK).encode()}
    out = poll_with(monkeypatch, tmp_path, mx.OutputExpiredError("expired"), vol)
    assert out.state == "done" and out.metrics.series["eval_reward"] == [(10, 0.6)]
    missing = poll_with(monkeypatch, tmp_path, mx.OutputExpiredError("expired"), {})
    assert missing.state == "failed" and "not on the volume" in (missing.error or "")
    with pytest.raises(InfraError):
        poll_with(monkeypatch, tmp_path, mx.OutputExpiredError("x"), mx.AuthError("no token"))


def test_spawn_and_collect_through_fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    payloads: list[dict[str, Any]] = []

    class FakeFn:
        def spawn(self, job: dict[str, Any]) -> Any:
            payloads.append(job)
            return type("Call", (), {"object_id": f"fc-{job['arm']}"})()

    monkeypatch.setattr(modal.Function, "from_name", staticmethod(lambda app, fn: FakeFn()))
    outcomes = {"fc-grpo": OK, "fc-opd": mx.RemoteError("OOM")}
    monkeypatch.setattr(modal.FunctionCall, "from_id",
                        staticmethod(lambda cid: FakeCall(outcomes[cid])))
    m = plan({n: ArmSpec(name=n, method=n, files={"c.toml": n}, main="c.toml",
                         teacher="T" if n == "opd" else None, teacher_port=8001)
              for n in ("grpo", "opd")}, "tg", tmp_path)
    launch(m, ModalExecutor(), log=lambda _: None)
    assert [p["run_id"] for p in payloads] == ["tg-grpo", "tg-opd"]
    assert payloads[1]["teacher"] == "T" and payloads[1]["files"] == {"c.toml": "opd"}
    assert collect(m, ModalExecutor(), log=lambda _: None) == EXIT_DONE
    assert m.arms["grpo"].state == "done" and m.arms["opd"].state == "failed"
    assert "without a result" in (m.arms["opd"].error or "")


def test_real_client_without_token_is_infra_not_failure(tmp_path: Path) -> None:
    """No fakes: the installed client without a token raises AuthError at once."""
    m = plan({"grpo": ArmSpec(name="grpo", method="grpo")}, "tg", tmp_path)
    with pytest.raises(InfraError):
        launch(m, ModalExecutor(), log=lambda _: None)
    a = m.arms["grpo"]
    a.handle, a.state, a.backend = "fc-doesnotexist", "pending", "modal"
    assert collect(m, ModalExecutor(), log=lambda _: None) == EXIT_INFRA
    assert m.arms["grpo"].state == "pending" and m.arms["grpo"].error is None


def test_app_definition() -> None:
    from whileai.launch import modal_module
    from whileai.targets.prime_rl.pin import COMMIT as PRIME_RL_COMMIT

    modal_app = modal_module("prime-rl")
    assert modal_app.GPUS == ["H100:2", "H200:2", "A100-80GB:2"]
    assert modal_app.app.name == "whileai"
    assert isinstance(modal_app.train, modal.Function)
    assert isinstance(modal_app.validate, modal.Function)
    assert PRIME_RL_COMMIT[:12] in modal_app.IMAGE_LABEL


# modal's server errors (its gRPC statuses: modal/_grpc_client.py:27-44) and its own client timeout:
# Modal did not answer this once; the call may still run
UNANSWERED = [mx.ServiceError("UNAVAILABLE"), mx.InternalError("INTERNAL"),
              mx.ResourceExhaustedError("throttled"), mx.NotFoundError("no such call"),
              mx.PermissionDeniedError("denied"), mx.UnimplementedError("x"), mx.DataLossError("x"),
              mx.TimeoutError("client deadline")]


@pytest.mark.parametrize("exc", UNANSWERED, ids=lambda e: type(e).__name__)
def test_a_server_error_leaves_the_arm_pending(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               exc: Exception) -> None:
    out = poll_with(monkeypatch, tmp_path, exc)
    assert out.state == "pending" and type(exc).__name__ in (out.note or "")


def calls_of(monkeypatch: pytest.MonkeyPatch, outcomes: dict[str, Any]) -> list[str]:
    spawned: list[str] = []

    class FakeFn:
        def spawn(self, job: dict[str, Any]) -> Any:
            spawned.append(job["arm"])
            return type("Call", (), {"object_id": f"fc-new-{job['arm']}"})()

    monkeypatch.setattr(modal.Function, "from_name", staticmethod(lambda app, fn: FakeFn()))
    monkeypatch.setattr(modal.FunctionCall, "from_id", staticmethod(lambda cid: FakeCall(outcomes[cid])))
    return spawned


def test_collect_goes_on_past_a_server_error_and_asks_again(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    from whileai.launch import EXIT_RUNNING

    m = plan({n: ArmSpec(name=n, method=n) for n in ("grpo", "opd")}, "tg", tmp_path)
    for n, a in m.arms.items():
        a.handle, a.state, a.backend = f"fc-{n}", "pending", "modal"
    outcomes: dict[str, Any] = {"fc-grpo": mx.ServiceError("UNAVAILABLE"), "fc-opd": OK}
    calls_of(monkeypatch, outcomes)
    lines: list[str] = []
    assert collect(m, ModalExecutor(), log=lines.append) == EXIT_RUNNING
    assert (m.arms["grpo"].state, m.arms["opd"].state) == ("pending", "done")
    assert any("grpo: pending (Modal did not answer (ServiceError" in x for x in lines)
    outcomes["fc-grpo"] = OK  # the next collect asks again
    assert collect(m, ModalExecutor(), log=lambda _: None) == EXIT_DONE
    assert m.arms["grpo"].state == "done"


@pytest.mark.parametrize("still", [TimeoutError(), mx.ServiceError("UNAVAILABLE")],
                         ids=["running", "unanswered"])
def test_relaunch_failed_never_starts_a_second_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    still: Exception) -> None:
    """An arm marked failed while its call still runs (or Modal cannot say) is pending again."""
    m = plan({"opd": ArmSpec(name="opd", method="opd")}, "tg", tmp_path)
    a = m.arms["opd"]
    a.handle, a.state, a.backend, a.error = "fc-old", "failed", "modal", "marked by an older whileai"
    spawned = calls_of(monkeypatch, {"fc-old": still})
    launch(m, ModalExecutor(), relaunch_failed=True, log=lambda _: None)
    assert spawned == [] and (a.state, a.handle) == ("pending", "fc-old")


def test_relaunch_failed_spawns_an_ended_call_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    m = plan({"opd": ArmSpec(name="opd", method="opd")}, "tg", tmp_path)
    a = m.arms["opd"]
    a.handle, a.state, a.backend = "fc-old", "failed", "modal"
    spawned = calls_of(monkeypatch, {"fc-old": mx.RemoteError("OOM")})
    launch(m, ModalExecutor(), relaunch_failed=True, log=lambda _: None)
    assert spawned == ["opd"] and (a.state, a.handle, a.attempts) == ("pending", "fc-new-opd", 1)


def test_a_failure_carries_the_log_tail_from_the_volume(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    log = "\n".join(f"line {i}" for i in range(100)) + "\nCUDA out of memory\n"
    out = poll_with(monkeypatch, tmp_path, mx.RemoteError("terminated"), {"tg-opd/rl.log": log.encode()})
    assert out.state == "failed" and out.error is not None
    assert out.error.endswith("CUDA out of memory") and "line 75" in out.error and "line 5\n" not in out.error
    assert "modal volume get whileai-runs tg-opd/rl.log" in out.error


def test_a_restarted_arm_is_pending_and_said_restarted(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """The arm's folder on the volume counts its attempts (whileai.targets.container.attempt)."""
    out = poll_with(monkeypatch, tmp_path, TimeoutError(), {"tg-opd/attempts": b"d1\nd1\n"})
    assert out.state == "pending" and (out.note or "").startswith("restarted: attempt 2")
    assert "fail" not in (out.note or "")
    first = poll_with(monkeypatch, tmp_path, TimeoutError(), {"tg-opd/attempts": b"d1\n"})
    assert first.state == "pending" and first.note is None


@pytest.mark.parametrize("exc", UNANSWERED[:3], ids=lambda e: type(e).__name__)
def test_a_spawn_modal_did_not_answer_leaves_the_arm_planned(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path, exc: Exception) -> None:
    class Fn:
        def spawn(self, job: dict[str, Any]) -> Any:
            raise exc

    monkeypatch.setattr(modal.Function, "from_name", staticmethod(lambda app, fn: Fn()))
    m = plan({"grpo": ArmSpec(name="grpo", method="grpo")}, "tg", tmp_path)
    with pytest.raises(InfraError, match=type(exc).__name__):
        launch(m, ModalExecutor(), log=lambda _: None)
    assert m.arms["grpo"].state == "planned" and m.arms["grpo"].attempts == 0
