"""The verl recipe: its arm folders, verl's own check of them, and verl's logs read back.

The logs here are written in the shapes verl 0.9.1's own code writes (utils/tracking.py
FileLogger: `{"step", "data"}` lines; trainer_base.py `_write_generations`: `<step>.jsonl` with
input, output, gts, score, step), by stand-in scripts where the GPU run would be.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai.launch import load_manifest
from whileai.targets.verl.launch import train_verl_job
from whileai.targets.verl.metrics import parse_val_dump, parse_verl_jsonl, task_id
from whileai.targets.verl.runsh import parse

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "04-train" / "verl" / "run.py"
VERL_PYTHON = os.environ.get("WHILEAI_VERL_PYTHON")


def run(*args: str, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_TOKEN")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([python, str(RECIPE), *args], capture_output=True, text=True, env=env,
                          timeout=300)


def overrides(path: Path) -> dict[str, str]:
    [cmd] = [c for c in parse(path.read_text(), {"PWD": str(path.parent)}) if c.kind == "main_ppo"]
    return {k: v[1:-1] if v[:1] == v[-1:] == '"' else v  # a run-folder path: Hydra-quoted
            for k, v in (o.lstrip("+").split("=", 1) for o in cmd.overrides)}


def test_dry_run_writes_the_arms_verl_runs_with_what_the_recipe_reads_back(tmp_path: Path) -> None:
    p = run("--dry-run", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "bundled arm opsd.toml skipped" in p.stdout and "#6827" in p.stdout
    m = load_manifest(tmp_path / "verl")
    assert sorted(m.arms) == ["grpo", "opd", "sft"] and m.meta["target"] == "verl"
    assert m.meta["comparisons"] == [["opd", "grpo"], ["sft", "grpo"], ["opd", "sft"]]
    for name in ("grpo", "opd"):
        o = overrides(tmp_path / "verl" / name / "run.sh")
        assert o["trainer.logger"] == '["console","file"]'
        assert o["trainer.validation_data_dir"] == str(tmp_path / "verl" / name / "outputs" / "val")
    assert "overrides.trainer.logger -> trainer.logger = ['console', 'file']" in p.stdout
    sft = tmp_path / "verl" / "sft"
    assert 'trainer.logger=\'["console","file"]\'' in (sft / "run.sh").read_text()
    assert "verl.model_merger merge --backend fsdp" in (sft / "eval.sh").read_text()
    o = overrides(sft / "eval" / "run.sh")  # the SFT arm's model, scored like the RL arms
    assert o["trainer.val_only"] == "True" and o["actor_rollout_ref.model.path"].endswith(
        "sft/eval/../outputs/merged")
    assert o["actor_rollout_ref.model.lora_adapter_path"].endswith("outputs/merged/lora_adapter")
    grpo = tmp_path / "verl" / "grpo"
    assert (sft / "eval" / "data" / "test.jsonl").read_bytes() == (grpo / "data" / "test.jsonl").read_bytes()
    assert (sft / "eval" / "reward.py").read_text() == (grpo / "reward.py").read_text()


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    p = run("--arms", "grpo,opsd", "--dry-run", "--out", str(tmp_path))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "#6827" in p.stderr
    p = run("--collect", "--out", str(tmp_path / "runs"), "--tag", "never")
    assert p.returncode == 2 and p.stderr.startswith("error: --tag") and not (tmp_path / "runs").exists()


@pytest.mark.skipif(importlib.util.find_spec("verl") is not None, reason="verl is importable here")
def test_validate_without_verl_says_not_checked_never_rejected(tmp_path: Path) -> None:
    p = run("--validate", "--out", str(tmp_path), "--arms", "grpo")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "not checked (verl is not importable here: pip install 'whileai[verl]')" in p.stderr
    assert "REJECTED" not in p.stdout + p.stderr  # a file never checked is not refused
    assert "/work/" not in p.stdout + p.stderr  # no path of the machine that built whileai


def test_no_message_names_a_path_of_the_machine_that_built_whileai() -> None:
    named = [str(f.relative_to(ROOT)) for f in (ROOT / "whileai").rglob("*.py")
             if "/work/" in f.read_text(encoding="utf-8")]
    assert named == []


@pytest.mark.skipif(not VERL_PYTHON, reason="WHILEAI_VERL_PYTHON names no Python with verl 0.9.1")
def test_validate_runs_verls_own_check_on_every_script(tmp_path: Path) -> None:
    p = run("--validate", "--out", str(tmp_path), python=str(VERL_PYTHON))
    assert p.stdout.count("verl 0.9.1 accepts it") == 5  # grpo, opd, sft's 2 jobs, sft's eval
    # and every arm rehearsed (whileai rehearse -t verl): its pools placed by verl's own code
    assert [x.split(":")[0] for x in p.stdout.splitlines() if ": rehearsal: " in x] == ["grpo", "opd", "sft"]
    assert p.stdout.count("    pools: ok") >= 3, p.stdout
    steps = ROOT / "whileai" / "targets" / "verl" / "rehearse"
    built = all((steps / f"{s}.py").is_file() for s in ("data", "reward", "loss"))
    assert p.returncode == (0 if built else 1), p.stdout + p.stderr


def test_launch_without_modal_or_token_is_one_line(tmp_path: Path) -> None:
    p = run("--out", str(tmp_path), "--arms", "grpo")
    if importlib.util.find_spec("modal") is None:
        assert p.returncode == 2 and "'.[modal]'" in p.stderr, p.stderr
    else:
        assert p.returncode == 4 and "Modal not reachable" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def line(step: int, **data: float) -> str:
    return json.dumps({"step": step, "data": data})


def test_file_logger_lines_become_series() -> None:
    lines = [line(0, **{"val-core/reverse-text/reward/mean@1": 0.2}),
             line(1, **{"critic/score/mean": 0.3, "actor/pg_loss": 0.1, "actor/entropy": 1.5,
                        "actor/distillation/loss": 0.4}),
             "{broken",
             line(2, **{"val-core/a/reward/mean@1": 0.4, "val-core/openai/gsm8k/acc/mean@4": 0.6,
                        "val-aux/a/reward/std@1": 9.0}),
             json.dumps({"step": 2, "data": "no"})]
    s = parse_verl_jsonl(lines)
    assert s["eval_reward"] == [(0, 0.2), (2, 0.5)]  # two data sources: their mean; no val-aux
    assert s["train_reward"] == [(1, 0.3)] and s["teacher_kl"] == [(1, 0.4)]
    # OPD: the distillation loss is the loss trained on (actor/pg_loss is a zeroed task loss)
    assert s["train_loss"] == [(1, 0.4)] and s["entropy"] == [(1, 1.5)]
    assert parse_verl_jsonl([line(1, **{"actor/pg_loss": 0.1})])["train_loss"] == [(1, 0.1)]  # GRPO
    sft = parse_verl_jsonl([line(1, **{"train/loss": 2.0}), line(2, **{"val/loss": 1.0})])
    assert sft == {"train_loss": [(1, 2.0)], "val_loss": [(2, 1.0)]}


def dump(folder: Path, step: int, rows: list[tuple[str, str, float]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{step}.jsonl").write_text("".join(json.dumps(
        {"input": i, "output": "x", "gts": g, "score": s, "step": step}) + "\n" for i, g, s in rows))


def test_the_last_validation_dump_gives_per_task_scores(tmp_path: Path) -> None:
    dump(tmp_path, 0, [("p1", "a", 0.0)])
    dump(tmp_path, 100, [("p1", "a", 1.0), ("p1", "a", 0.5), ("p2", "b", 0.25)])
    step, per_task = parse_val_dump(tmp_path)
    assert step == 100 and per_task == {task_id("p1", "a"): 0.75, task_id("p2", "b"): 0.25}
    assert task_id("p1", "a") != task_id("p1", "b") and parse_val_dump(tmp_path / "none") == (None, {})


RUN_SH = """set -e
echo '{"step": 0, "data": {"val-core/rt/reward/mean@1": 0.1}}' > "$VERL_FILE_LOGGER_PATH"
echo '{"step": 2, "data": {"critic/score/mean": 0.3, "val-core/rt/reward/mean@1": 0.4}}' \\
  >> "$VERL_FILE_LOGGER_PATH"
mkdir -p outputs/val
echo '{"input": "p1", "gts": "a", "score": 0.4, "step": 2}' > outputs/val/2.jsonl
"""


def job(files: dict[str, str]) -> dict[str, object]:
    return {"run_id": "t-grpo", "arm": "grpo", "files": files, "main": "run.sh"}


def test_a_verl_arm_runs_its_script_and_reports_verls_logs(tmp_path: Path) -> None:
    rec = train_verl_job(job({"run.sh": RUN_SH, "data/x.jsonl": "{}\n"}), tmp_path / "vol",
                         tmp_path / "work", gpu="NVIDIA H100 x2")
    assert rec["status"] == "ok", rec
    assert rec["series"]["eval_reward"] == [[0, 0.1], [2, 0.4]]
    assert rec["per_task"] == {task_id("p1", "a"): 0.4} and rec["usage"]["gpu_seconds"] >= 0
    assert json.loads((tmp_path / "vol" / "metrics.json").read_text())["status"] == "ok"
    again = train_verl_job(job({"run.sh": RUN_SH, "data/x.jsonl": "{}\n"}), tmp_path / "vol",
                           tmp_path / "work2")
    assert again == rec  # a restarted container returns the finished record
    other = train_verl_job(job({"run.sh": "exit 9"}), tmp_path / "vol", tmp_path / "work")
    assert other["error"] == "run.sh exited with code 9"  # another spec's record is not its own


def test_a_failed_or_silent_run_is_an_error_record(tmp_path: Path) -> None:
    rec = train_verl_job(job({"run.sh": "echo boom; exit 3"}), tmp_path / "a", tmp_path / "w")
    assert rec["status"] == "error" and "run.sh" in rec["error"] and "boom" in rec["log_tail"]
    rec = train_verl_job(job({"run.sh": "true"}), tmp_path / "b", tmp_path / "w2")
    assert rec["status"] == "error" and "no holdout scores" in rec["error"]


def test_the_sft_arm_is_scored_by_its_eval_step_at_its_last_step(tmp_path: Path) -> None:
    train = 'echo \'{"step": 5, "data": {"train/loss": 1.0}}\' > "$VERL_FILE_LOGGER_PATH"\n'
    evaluate = RUN_SH.replace("outputs/val", "eval/outputs/val")
    rec = train_verl_job(job({"run.sh": train, "eval.sh": evaluate}), tmp_path / "v", tmp_path / "w")
    assert rec["status"] == "ok", rec
    assert rec["series"]["eval_reward"] == [[5, 0.4]] and rec["series"]["train_loss"] == [[5, 1.0]]
    assert rec["per_task"] == {task_id("p1", "a"): 0.4}


def test_a_full_weight_sft_arm_is_scored_without_an_adapter() -> None:
    from whileai.spec.load import load_spec, replace_run
    from whileai.targets.verl.compile import compile as verl
    from whileai.targets.verl.eval import eval_files

    c = verl(replace_run(load_spec(ROOT / "examples" / "sft.toml"), lora=False))
    files = eval_files(c, "sft@2")
    [cmd] = parse(files["eval/run.sh"], {"PWD": "/a/eval"})
    o = dict(x.lstrip("+").split("=", 1) for x in cmd.overrides)
    assert "actor_rollout_ref.model.lora_adapter_path" not in o
    assert o.get("actor_rollout_ref.model.lora_rank", "0") == "0"
    assert o["actor_rollout_ref.model.path"] == '"/a/eval/../outputs/merged"'
    assert o["trainer.experiment_name"] == "sft-2-eval" and o["trainer.val_only"] == "True"


def test_the_modal_app_for_verl_is_its_own() -> None:
    modal = pytest.importorskip("modal")
    from whileai.launch import modal_module

    modal_verl = modal_module("verl")
    try:
        assert modal_verl.APP_NAME == "whileai-verl" and modal_verl.ModalExecutor().app_name == "whileai-verl"
        assert "verl[vllm]==0.9.1" in modal_verl.IMAGE_LABEL and "flash-attn==2.8.3" in modal_verl.IMAGE_LABEL
        assert isinstance(modal_verl.validate, modal.Function)  # verl's own check, CPU container
    finally:
        modal_module("prime-rl")  # the module as every other test imports it


def test_an_own_data_sft_arm_without_a_reward_is_scored_with_the_baselines(tmp_path: Path) -> None:
    """SFT needs no reward to train; its eval uses the baseline's, the one the pairs compare."""
    mine = ROOT / "tests" / "data" / "arms"
    sft = tmp_path / "sft.toml"
    sft.write_text(f'taskset = "backwards"\nmodel = "acme/student-1b"\ndata = "{mine / "tasks.jsonl"}"\n'
                   'steps = 20\nprompts = 32\nlora = false\n[method]\ntype = "sft"\n'
                   'teacher = "vllm:acme/teacher-8b@http://gpu-box:8001/v1"\nmax_tokens = 512\n')
    p = run(str(mine / "baseline.toml"), str(sft), "--dry-run", "--out", str(tmp_path / "runs"))
    assert p.returncode == 0, p.stderr
    arms = tmp_path / "runs" / "verl"
    assert (arms / "sft" / "eval" / "reward.py").read_text() == (arms / "baseline" / "reward.py").read_text()
    assert (arms / "sft" / "eval" / "similarity.py").is_file()
    o = overrides(arms / "sft" / "eval" / "run.sh")
    assert "actor_rollout_ref.model.lora_adapter_path" not in o


# a stand-in for verl's auto resume: the latest checkpoint's step from its tracker file
# (verl/trainer/ppo/ray_trainer.py:1052-1070), a checkpoint at step 1, then a long step 2
RESUMING = """set -e
start=$(cat outputs/latest_checkpointed_iteration.txt 2>/dev/null || echo 0)
echo "resumed at $start" >> resumes.txt
mkdir -p outputs/global_step_1 && echo 1 > outputs/latest_checkpointed_iteration.txt
if [ "$start" = 0 ] && [ ! -e hung.txt ]; then touch hung.txt; sleep 60; fi
""" + RUN_SH


def test_a_preempted_verl_arm_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    import signal

    mx = pytest.importorskip("modal.exception", reason="the modal extra")
    folder = tmp_path / "runs" / "t-grpo"  # the arm's folder on the volume: it works there
    old = signal.getsignal(signal.SIGALRM)
    try:
        mx.simulate_preemption(2)  # modal's own stand-in: SIGINT as a KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            train_verl_job(job({"run.sh": RESUMING}), folder, tmp_path / "runs")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert not (folder / "metrics.json").exists()  # not a failure
    rec = train_verl_job(job({"run.sh": RESUMING}), folder, tmp_path / "runs")  # the restart
    assert rec["status"] == "ok", rec
    assert (folder / "resumes.txt").read_text().split("\n")[:2] == ["resumed at 0", "resumed at 1"]
    assert "attempt 2 in this folder: restarted" in (folder / "run.log").read_text()
    # a re-planned arm (other files) in the same folder does not resume another spec's checkpoint
    (folder / "metrics.json").unlink()
    train_verl_job(job({"run.sh": RESUMING.replace("set -e", "set -eu")}), folder, tmp_path / "runs")
    assert (folder / "resumes.txt").read_text().split("\n")[2] == "resumed at 0"


def test_verls_cpu_container_check_is_verls_own(tmp_path: Path) -> None:
    """What the verl app's `validate` runs in its CPU container (verl installed there): verl's
    own check of the arm's run.sh, a rejected key named; run here with a Python that has verl."""
    from tests.helpers import verl_python

    python = verl_python()
    from whileai.api import compile
    from whileai.spec.load import load_spec

    c = compile(load_spec(ROOT / "examples" / "grpo.toml"), "verl")
    bad = dict(c.files) | {"run.sh": c.files["run.sh"].replace(
        "trainer.save_freq=", "trainer.no_such_key=1 \\\n    trainer.save_freq=")}
    code = ("import json, sys; from pathlib import Path; from whileai.targets.verl.launch import "
            "validate_job; print(json.dumps([validate_job(j, Path(sys.argv[2])) "
            "for j in json.loads(Path(sys.argv[1]).read_text())]))")
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"run_id": f"t-{k}", "arm": k, "files": f, "main": "run.sh"}
                                for k, f in (("ok", dict(c.files)), ("bad", bad))]))
    p = subprocess.run([python, "-c", code, str(jobs), str(tmp_path)], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr[-3000:]
    ok, rejected = json.loads(p.stdout.strip().splitlines()[-1])
    assert ok["ok"] and ok["returncode"] == 0, ok["output"]
    assert not rejected["ok"] and "no_such_key" in rejected["output"]
