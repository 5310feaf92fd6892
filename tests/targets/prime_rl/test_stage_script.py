"""The two-stage script runs as written: bash runs it with `uv` and `curl` stand-ins on PATH that
record their calls (argv, order) and behave like servers (curl answers after N tries, or never);
every file it names exists; it waits for each teacher before `uv run rl`, gives up after a bounded
wait with one clear line, and stops the servers it started on exit, error and Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

import whileai as wai
from whileai.errors import SpecError
from whileai.spec.load import load_spec

COLDSTART = """taskset = "gsm8k"
model = "Qwen/Qwen3-1.7B"
lora = false
[method]
type = "sft"
teacher = "vllm:Qwen/Qwen3-32B@http://localhost:8001/v1"
[then.method]
type = "opd"
teacher = "vllm:Qwen/Qwen3-32B@http://localhost:{port}/v1"
"""

# `uv`: records its argv (and whether each `@ file` exists); `uv run inference` stays up like a
# server until TERM; `uv run rl` optionally hangs ($HANG_RL) so a test can interrupt it
UV = r"""#!/usr/bin/env bash
log="$CALLS"
at=""; prev=""
for a in "$@"; do [ "$prev" = "@" ] && at="$a"; prev="$a"; done
exists=""
[ -n "$at" ] && { [ -f "$at" ] && exists=" [exists]" || exists=" [MISSING]"; }
echo "uv $* (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-})$exists" >> "$log"
case "$2" in
  inference) trap 'echo "stopped uv $*" >> "$log"; exit 0' TERM
             echo $$ >> "$SERVERS"
             while :; do sleep 0.05; done ;;
  rl) [ -n "${HANG_RL:-}" ] && { echo $$ > "$HANG_RL"; while :; do sleep 0.05; done; }; exit 0 ;;
  *) exit 0 ;;
esac
"""

# `curl`: refused (exit 7, unrecorded) while no stand-in server is up, as a real port would be: the
# server is started in the background, so without this the order of its log line and the first
# curl's would be a race; once one is up, fails until it has been called $READY_AFTER times
CURL = r"""#!/usr/bin/env bash
up=""
for pid in $(cat "$SERVERS" 2>/dev/null); do kill -0 "$pid" 2>/dev/null && up=1; done
[ -n "$up" ] || exit 7
n=$(( $(cat "$CURL_COUNT" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$CURL_COUNT"
echo "curl $*" >> "$CALLS"
[ "$n" -ge "${READY_AFTER:-1}" ] && exit 0
exit 7
"""


def _write(tmp: Path, port: int = 8001) -> tuple[Path, wai.Compiled]:
    spec = tmp / "coldstart.toml"
    spec.write_text(COLDSTART.format(port=port))
    out = tmp / "out"
    c = wai.compile_all([load_spec(spec)], "prime-rl", names=["coldstart"], out=out)[0]
    return out, c


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    bin_ = tmp / "bin"
    bin_.mkdir(exist_ok=True)
    for name, text in (("uv", UV), ("curl", CURL)):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "CALLS": str(tmp / "calls"),
            "CURL_COUNT": str(tmp / "count"), "SERVERS": str(tmp / "servers"),
            "WHILEAI_TEACHER_POLL_S": "0.05", **extra}


def _calls(tmp: Path) -> list[str]:
    return (tmp / "calls").read_text().splitlines()


@pytest.fixture(autouse=True)
def _no_stand_in_left(tmp_path: Path) -> Iterator[None]:
    """Whatever a test asserts, no stand-in server outlives it (a failed assert would leak one)."""
    yield
    servers, hung = tmp_path / "servers", tmp_path / "rl.pid"
    pids = _alive(tmp_path) if servers.exists() else []
    for pid in pids + ([int(hung.read_text())] if hung.exists() else []):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _alive(tmp: Path) -> list[int]:
    alive = []
    for pid in map(int, (tmp / "servers").read_text().split()):
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except ProcessLookupError:
            pass
    return alive


def test_the_script_names_only_files_it_writes_and_runs_in_order(tmp_path: Path) -> None:
    out, c = _write(tmp_path)
    script = c.files["coldstart.sh"]
    named = set(re.findall(r"[\w./-]+\.toml", script))
    assert named == {"coldstart.teacher.toml", "coldstart-1-sft.toml", "coldstart-2-opd.toml"}
    assert all((out / n).is_file() for n in named)
    # one server for both stages, sized for the longer one (stage 2: 2048 + 8192)
    teacher = tomllib.loads((out / "coldstart.teacher.toml").read_text())
    two = tomllib.loads((out / "coldstart-2-opd.toml").read_text())
    assert teacher["vllm"]["max_model_len"] == two["seq_len"] + 1 == 10241  # stage 2 scores
    done = subprocess.run(["bash", "coldstart.sh"], cwd=out, env=_env(tmp_path, READY_AFTER="3"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = _calls(tmp_path)
    kinds = [line.split()[0] + (" " + line.split()[2] if line.startswith("uv run") else "")
             for line in calls]
    assert kinds == ["uv inference", "curl", "curl", "curl", "uv rl", "uv python", "curl", "uv rl",
                     "stopped"]
    assert calls[0] == ("uv run inference @ coldstart.teacher.toml (CUDA_VISIBLE_DEVICES=2,3) "
                        "[exists]")
    assert calls[1].endswith(" http://localhost:8001/health")
    assert calls[4] == "uv run rl @ coldstart-1-sft.toml (CUDA_VISIBLE_DEVICES=) [exists]"
    assert calls[7] == "uv run rl @ coldstart-2-opd.toml (CUDA_VISIBLE_DEVICES=) [exists]"
    assert not _alive(tmp_path)


def test_a_teacher_that_never_answers_stops_the_run_with_one_line(tmp_path: Path) -> None:
    out, _ = _write(tmp_path)
    start = time.monotonic()
    done = subprocess.run(["bash", "coldstart.sh"], cwd=out, capture_output=True, text=True,
                          env=_env(tmp_path, READY_AFTER="1000000", WHILEAI_TEACHER_WAIT_S="1"),
                          timeout=60)
    assert done.returncode == 1 and time.monotonic() - start < 30
    line = ("whileai: the teacher Qwen/Qwen3-32B did not answer at http://localhost:8001/health "
            "within 1s (WHILEAI_TEACHER_WAIT_S): not starting rl; stopping the servers this script "
            "started")
    assert line in done.stderr.splitlines()
    calls = _calls(tmp_path)
    assert not any(c.startswith("uv run rl") for c in calls) and calls[-1].startswith("stopped")
    assert not _alive(tmp_path)


def test_ctrl_c_stops_the_servers_it_started(tmp_path: Path) -> None:
    out, _ = _write(tmp_path)
    hang = tmp_path / "rl.pid"
    # SIGINT as a terminal gives it, even when pytest itself runs in the background (where the
    # shell starts it with SIGINT ignored, and bash cannot trap a signal ignored on entry)
    proc = subprocess.Popen(["bash", "coldstart.sh"], cwd=out, start_new_session=True,
                            env=_env(tmp_path, HANG_RL=str(hang)), stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not hang.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hang.exists() and _alive(tmp_path)  # stage 1 runs; its teacher is up
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the foreground group
    assert proc.wait(timeout=30) == 130
    time.sleep(0.2)
    assert not _alive(tmp_path) and _calls(tmp_path)[-1].startswith("stopped uv run inference")


def test_different_teachers_get_their_own_servers_one_stage_each(tmp_path: Path) -> None:
    spec = tmp_path / "pair.toml"
    spec.write_text(COLDSTART.replace("Qwen3-32B@http://localhost:{port}", "Qwen3-14B@http://localhost:8002"))
    out = tmp_path / "out"
    c = wai.compile_all([load_spec(spec)], "prime-rl", names=["pair"], out=out)[0]
    assert {"pair-1-sft.teacher.toml", "pair-2-opd.teacher.toml"} <= set(c.files)
    done = subprocess.run(["bash", "pair.sh"], cwd=out, env=_env(tmp_path), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = [x for x in _calls(tmp_path) if not x.startswith("curl")]
    assert [" ".join(x.split()[:5]) for x in calls] == [
        "uv run inference @ pair-1-sft.teacher.toml", "uv run rl @ pair-1-sft.toml",
        "stopped uv run inference @",  # stage 1's teacher: its GPUs are free for stage 2's
        "uv run python -c import", "uv run inference @ pair-2-opd.teacher.toml",
        "uv run rl @ pair-2-opd.toml", "stopped uv run inference @"]
    assert all("[MISSING]" not in x for x in calls)


def test_two_models_cannot_share_one_port(tmp_path: Path) -> None:
    spec = tmp_path / "clash.toml"
    spec.write_text(COLDSTART.replace("Qwen3-32B@http://localhost:{port}", "Qwen3-14B@http://localhost:8001"))
    with pytest.raises(SpecError) as e:
        wai.compile_all([load_spec(spec)], "prime-rl", names=["clash"])
    assert e.value.field == "then.method.teacher.url" and "stage 1's teacher Qwen/Qwen3-32B" in str(e.value)
