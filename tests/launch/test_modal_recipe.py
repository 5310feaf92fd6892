"""The recipe's Modal paths in-process, the network stood in for (no Modal account here): where
--validate runs and that it says so, the deploy's output and its build errors, Ctrl-C cancelling
this tag's calls alone, and --collect asking the app and volume the manifest keeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from whileai.cli.recipe import main
from whileai.launch import load_manifest
from whileai.launch.token import modal_token

modal = pytest.importorskip("modal", reason="the modal extra (pip install -e '.[modal]')")
mx = pytest.importorskip("modal.exception", reason="the modal extra")

ROOT = Path(__file__).resolve().parents[2]
FAKE_ID = "ak-not-a-real-token"  # a stand-in: nothing here reaches Modal


def modal_app(monkeypatch: pytest.MonkeyPatch, target: str) -> Any:
    from whileai.launch import modal_module

    monkeypatch.setenv("WHILEAI_MODAL_TARGET", target)  # restored after the test
    return modal_module(target)


# --validate: where it runs, and the line that says so


def modal_reads_a_token(env: dict[str, str]) -> bool:
    """modal's own config (modal/config.py) in a fresh process with `env`: is a token_id set?"""
    code = "from modal.config import config; print(bool(config.get('token_id')))"
    base = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}
    p = subprocess.run([sys.executable, "-c", code], env=base | env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip() == "True"


@pytest.mark.parametrize(("toml", "env"), [
    (None, {}),
    (None, {"MODAL_TOKEN_ID": FAKE_ID}),
    ('[default]\ntoken_id = "ak-x"\ntoken_secret = "as-x"\n', {}),
    ('[me]\nactive = true\n[default]\ntoken_id = "ak-x"\n', {}),
    ('[me]\nactive = true\n[default]\ntoken_id = "ak-x"\n', {"MODAL_PROFILE": "default"}),
    ('[me]\ntoken_id = "ak-x"\nactive = true\n', {}),
    ('[me]\ntoken_id = "ak-x"\n', {}),
])
def test_a_token_is_found_where_modal_finds_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                toml: str | None, env: dict[str, str]) -> None:
    home = Path(os.environ["HOME"])
    if toml is not None:
        (home / ".modal.toml").write_text(toml)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    found = modal_token()
    assert (found is not None) == modal_reads_a_token(env)
    assert found is None or "ak-" not in found  # where it is, never its value


def validate(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
             target: str, *extra: str) -> tuple[int, str, list[str]]:
    app = modal_app(monkeypatch, target)
    asked: list[str] = []

    def validate_arms(m: Any) -> dict[str, dict[str, Any]]:  # the ephemeral app run, stood in for
        asked.extend(m.arms)
        return {n: {"ok": True, "output": ""} for n in m.arms}

    monkeypatch.setattr(app, "validate_arms", validate_arms)
    code = main(target, None, ["--validate", "--arms", "grpo,opd", "--out", str(tmp_path), *extra])
    return code, capsys.readouterr().out, asked


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_validate_runs_on_a_modal_cpu_container_where_a_token_is(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        target: str) -> None:
    monkeypatch.setenv("MODAL_TOKEN_ID", FAKE_ID)
    code, out, asked = validate(monkeypatch, capsys, tmp_path, target)
    assert code == 0, out
    assert sorted(asked) == ["grpo", "opd"]
    assert "--validate: " + target + "'s own dry run in a Modal CPU container (a Modal token: " \
        "MODAL_TOKEN_ID)" in out and FAKE_ID not in out
    assert f"opd: ok ({target}'s own check on Modal)" in out


def test_validate_stays_offline_without_a_token_and_says_so(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, asked = validate(monkeypatch, capsys, tmp_path, "prime-rl")
    assert code == 0 and asked == []
    assert "--validate: offline, here (no Modal token:" in out


def test_trl_validate_says_it_is_offline() -> None:
    from whileai.launch.recipe import validate_where
    from whileai.targets import registry

    t = registry.get("trl")
    assert t.launcher is not None
    from whileai.cli.recipe import recipe_parser

    a = recipe_parser(t, t.launcher, None).parse_args(["--validate"])
    on_modal, line = validate_where(t, t.launcher, a)
    assert not on_modal and line.startswith("offline, here (trl: its arms run on this machine)")


# the launch: the deploy's output and build errors, the manifest's names, Ctrl-C


class StandInApp:
    """The modal.App's deploy, stood in for; records whether modal's output was on."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error, self.output = error, None

    def deploy(self) -> None:
        from modal.output import OutputManager

        self.output = type(OutputManager.get()).__name__
        if self.error is not None:
            raise self.error


def test_deploy_shows_its_output_and_a_build_error_is_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    app = modal_app(monkeypatch, "prime-rl")
    failing = StandInApp(mx.ImageBuildError("Image build for im-123 failed with the exception:\n"
                                            "No module named 'torch'", "im-123"))
    monkeypatch.setattr(app, "app", failing)
    code = main("prime-rl", None, ["--arms", "grpo", "--out", str(tmp_path), "--no-preflight"])
    err = capsys.readouterr().err
    assert code == 1 and failing.output == "RichOutputManager"
    [line] = err.strip().splitlines()
    assert app.IMAGE_LABEL in line and "modal image logs im-123" in line and "torch" in line
    assert "Traceback" not in err


def test_ctrl_c_cancels_this_tags_calls_and_the_manifest_keeps_the_names(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    app = modal_app(monkeypatch, "prime-rl")
    monkeypatch.setattr(app, "app", StandInApp())
    cancelled: list[str] = []

    class Call:
        def __init__(self, cid: str) -> None:
            self.object_id = cid

        def cancel(self) -> None:
            cancelled.append(self.object_id)

    class Fn:
        def spawn(self, job: dict[str, Any]) -> Call:
            if job["arm"] == "opd":
                raise KeyboardInterrupt  # Ctrl-C while the second arm is spawned
            return Call(f"fc-{job['arm']}")

    monkeypatch.setattr(modal.Function, "from_name", staticmethod(lambda app, fn: Fn()))
    monkeypatch.setattr(modal.FunctionCall, "from_id", staticmethod(Call))
    monkeypatch.setattr(modal.App, "stop", lambda *a, **k: pytest.fail("the app was stopped"),
                        raising=False)
    code = main("prime-rl", None, ["--arms", "grpo,opd", "--out", str(tmp_path), "--no-preflight"])
    err = capsys.readouterr().err
    assert code == 130 and cancelled == ["fc-grpo"]
    assert "stopped arm(s) grpo" in err and "app stop" not in err
    m = load_manifest(tmp_path / "rt")
    assert {n: a.state for n, a in m.arms.items()} == {"grpo": "planned", "opd": "planned"}
    assert m.meta["modal"] == {"app": app.APP_NAME, "volume": app.VOLUME_NAME, "image": app.IMAGE_LABEL}


def test_collect_asks_the_app_and_volume_the_manifest_keeps(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main("prime-rl", None, ["--dry-run", "--arms", "grpo", "--out", str(tmp_path)])
    path = tmp_path / "rt" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["meta"]["modal"] = {"app": "app-then", "volume": "vol-then", "image": "img"}
    doc["arms"]["grpo"] |= {"state": "pending", "backend": "modal", "handle": "fc-grpo"}
    path.write_text(json.dumps(doc))
    monkeypatch.setenv("WHILEAI_MODAL_VOLUME", "vol-now")  # another environment at collect time
    app = modal_app(monkeypatch, "prime-rl")
    read: list[str] = []

    class Volume:
        def read_file(self, p: str) -> list[bytes]:
            return [json.dumps({"status": "error", "error": "rl exited with code 1"}).encode()]

    class Call:
        def get(self, timeout: float) -> Any:
            raise mx.OutputExpiredError()

    monkeypatch.setattr(modal.FunctionCall, "from_id", staticmethod(lambda cid: Call()))
    monkeypatch.setattr(modal.Volume, "from_name",
                        staticmethod(lambda name, **k: read.append(name) or Volume()))
    assert app.ModalExecutor.of(load_manifest(path)).app_name == "app-then"
    main("prime-rl", None, ["--collect", "--out", str(tmp_path)])
    assert read == ["vol-then"]
    assert load_manifest(path).arms["grpo"].state == "failed"


def test_the_container_serves_the_teacher_with_compiles_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One plan per fact: the arm's job carries the teacher plan's serve line (its context length
    included), and the container runs that line from prime-rl's checkout."""
    from whileai.api import compile
    from whileai.spec.load import load_spec
    from whileai.targets.prime_rl.launch import PRIME_RL_DIR, teacher_argv

    app = modal_app(monkeypatch, "prime-rl")
    assert main("prime-rl", None, ["--dry-run", "--arms", "grpo,opd", "--out", str(tmp_path)]) == 0
    [planned] = compile(load_spec(ROOT / "examples" / "opd.toml"), "prime-rl").teachers
    job = app.job_payload(load_manifest(tmp_path / "rt").arms["opd"])
    assert job["teacher_serve"] == planned.serve and "--vllm.max-model-len" in planned.serve
    argv, env = teacher_argv(job["teacher_serve"])
    assert argv[:7] == ["uv", "run", "--frozen", "--no-dev", "--project", PRIME_RL_DIR, "inference"]
    assert argv[argv.index("--vllm.max-model-len") + 1] == str(planned.max_model_len)
    assert env == {"CUDA_VISIBLE_DEVICES": "0"}


def test_a_re_plan_keeps_where_the_arms_were_launched(tmp_path: Path) -> None:
    from whileai.launch import ArmSpec, plan

    m = plan({"grpo": ArmSpec(name="grpo", method="grpo")}, "tg", tmp_path)
    m.meta["modal"] = {"app": "app-then", "volume": "vol-then", "image": "img"}
    m.save()
    again = plan({"grpo": ArmSpec(name="grpo", method="grpo")}, "tg", tmp_path)  # e.g. --dry-run
    assert load_manifest(tmp_path).meta["modal"] == again.meta["modal"] == m.meta["modal"]
