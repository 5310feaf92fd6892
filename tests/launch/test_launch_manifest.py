"""Manifest, plan and the launch/collect state machine, with an in-memory backend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.launch import (
    EXIT_DONE,
    EXIT_INFRA,
    EXIT_RUNNING,
    ArmRecord,
    ArmSpec,
    InfraError,
    Metrics,
    Outcome,
    arm_from_compiled,
    collect,
    launch,
    load_manifest,
    plan,
)
from whileai.spec.run import GRPO, OPD, Endpoint, RunSpec
from whileai.targets.compiled import Compiled, Read


class FakeBackend:
    name = "fake"

    def __init__(self) -> None:
        self.spawned: list[str] = []
        self.outcomes: dict[str, Outcome | Exception] = {}

    def spawn(self, arm: ArmRecord) -> str:
        self.spawned.append(arm.spec.name)
        return f"h-{arm.spec.name}-{arm.attempts + 1}"

    def poll(self, arm: ArmRecord) -> Outcome:
        o = self.outcomes.get(arm.spec.name, Outcome("pending"))
        if isinstance(o, Exception):
            raise o
        return o


def specs() -> dict[str, ArmSpec]:
    return {n: ArmSpec(name=n, method=n.split("@")[0], files={"cfg.toml": f"# {n}\n"},
                       main="cfg.toml", argv=["true"]) for n in ("grpo", "opd", "opsd")}


def test_plan_writes_files_and_manifest(tmp_path: Path) -> None:
    m = plan(specs(), "t1", tmp_path / "run", meta={"holdout": "reverse-text:test"})
    assert (tmp_path / "run" / "opd" / "cfg.toml").read_text() == "# opd\n"
    again = load_manifest(tmp_path / "run")
    assert again == m and again.meta["holdout"] == "reverse-text:test"
    assert {a.state for a in again.arms.values()} == {"planned"}
    assert not list((tmp_path / "run").glob(".*tmp"))  # atomic writes leave no temp files


def test_group_from_repeat_name() -> None:
    assert ArmSpec(name="grpo@2", method="grpo").group == "grpo"
    assert ArmSpec(name="opd", method="opd").group == "opd"


def test_arm_from_compiled_keeps_report() -> None:
    run = RunSpec(taskset="reverse-text", model="S",
                  method=OPD(Endpoint(url="http://localhost:8001/v1", model="T")))
    c = Compiled(target="prime-rl", pin="x", run=run, files={"rl.toml": "a=1\n"},
                 main="rl.toml", reads=(Read(field="steps", path="max_steps", value=100, note=""),),
                 ignores=(), fixed=(),
                 warnings=(), commands=("uv run inference --server.port 8001 &  # teacher",
                                        "uv run rl @ rl.toml"))
    s = arm_from_compiled("opd", c)
    assert (s.method, s.teacher, s.teacher_port, s.student) == ("opd", "T", 8001, "S")
    assert s.argv == ["uv", "run", "rl", "@", "rl.toml"]
    assert s.reads[0]["path"] == "max_steps" and s.files == {"rl.toml": "a=1\n"}
    g = Compiled(target="prime-rl", pin="x", run=RunSpec(taskset="reverse-text", model="S",
                 method=GRPO()), files={"g.toml": ""}, main="g.toml", reads=(), ignores=(),
                 fixed=(), warnings=(), commands=())
    assert arm_from_compiled("grpo", g).teacher is None


def test_launch_is_idempotent_and_relaunches_failed(tmp_path: Path) -> None:
    m = plan(specs(), "t", tmp_path)
    b = FakeBackend()
    launch(m, b)
    assert b.spawned == ["grpo", "opd", "opsd"]
    launch(load_manifest(tmp_path), b)  # a re-run in a new process skips pending arms
    assert b.spawned == ["grpo", "opd", "opsd"]
    b.outcomes = {"grpo": Outcome("done", Metrics()), "opd": Outcome("failed", None, "boom")}
    m = load_manifest(tmp_path)
    assert collect(m, b, log=lambda _: None) == EXIT_RUNNING
    m = load_manifest(tmp_path)
    assert (m.arms["grpo"].state, m.arms["opd"].state, m.arms["opd"].error) == ("done", "failed", "boom")
    launch(m, b)
    assert b.spawned == ["grpo", "opd", "opsd"]  # failed arms stay failed without the flag
    launch(m, b, relaunch_failed=True)
    assert b.spawned[-1] == "opd" and m.arms["opd"].attempts == 2
    assert load_manifest(tmp_path).arms["opd"].state == "pending"
    b.outcomes |= {"opd": Outcome("done", Metrics()), "opsd": Outcome("done", Metrics())}
    assert collect(m, b, log=lambda _: None) == EXIT_DONE


def test_infra_error_aborts_collect_without_marking(tmp_path: Path) -> None:
    m = plan(specs(), "t", tmp_path)
    b = FakeBackend()
    launch(m, b)
    b.outcomes = {"grpo": InfraError("AuthError: token missing"),
                  "opd": Outcome("done", Metrics())}
    assert collect(m, b, log=lambda _: None) == EXIT_INFRA
    states = {n: a.state for n, a in load_manifest(tmp_path).arms.items()}
    assert states == {"grpo": "pending", "opd": "pending", "opsd": "pending"}


def test_spawn_error_leaves_arm_planned(tmp_path: Path) -> None:
    class Broken(FakeBackend):
        def spawn(self, arm: ArmRecord) -> str:
            if arm.spec.name == "opd":
                raise InfraError("no network")
            return super().spawn(arm)

    m = plan(specs(), "t", tmp_path)
    with pytest.raises(InfraError):
        launch(m, Broken())
    states = {n: a.state for n, a in load_manifest(tmp_path).arms.items()}
    assert states == {"grpo": "pending", "opd": "planned", "opsd": "planned"}


def test_replan_keeps_state_of_unchanged_arms(tmp_path: Path) -> None:
    m = plan(specs(), "t", tmp_path)
    launch(m, FakeBackend())
    changed = specs()
    changed["opsd"] = changed["opsd"].model_copy(update={"files": {"cfg.toml": "# new\n"}})
    m2 = plan(changed, "t", tmp_path)
    assert m2.arms["grpo"].state == "pending" and m2.arms["opsd"].state == "planned"


def test_import_does_not_load_modal_or_numerics() -> None:
    code = ("import sys, whileai, whileai.launch, whileai.results; "
            "print(json.dumps(sorted(m for m in ('modal', 'numpy', 'scipy', 'matplotlib') "
            "if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == []
