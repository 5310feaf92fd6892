"""Every key of an old prime-rl file ends in one named outcome, meanings are kept by writing
the old behaviour out, and `whileai migrate` writes only what the pin's checks accept
(issue 28); v0.3.0/v0.4.0 files and the aliases of v0.6.0/v0.7.0 (schemas/prime-rl-*.keys.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import tomllib
from helpers import ROOT
from test_migrate import flat

from whileai.targets.prime_rl.migrate.core import migrate

# prime-rl v0.3.0 configs/ci/integration/rl/resume.toml, as it was
V03_RESUME = """inference_gpu_ids = [0]
trainer_gpu_ids = [1]

max_steps = 25
seq_len = 2048

[ckpt]
resume_step = 20

[model]
name = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"

[trainer.optim]
lr = 3e-6

[orchestrator]
batch_size = 128
rollouts_per_example = 16

[orchestrator.sampling]
max_tokens = 128

[[orchestrator.env]]
id = "reverse-text"

[inference]
"""


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai", "migrate", *map(str, args)], capture_output=True,
                          text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "1000"})


def test_a_v03_file_keeps_its_group_cap_checkpoints_and_resume() -> None:
    m = migrate(V03_RESUME)
    assert m.release == "v0.3.0" and m.also == ("v0.4.0",)
    doc = tomllib.loads(m.text)
    assert doc["orchestrator"]["group_size"] == 16
    assert doc["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 128
    assert doc["ckpt"] == {} and doc["resume"] == {"step": 20}
    assert doc["weight_broadcast"] == {"type": "filesystem"}  # v0.3.0's default, the pin's is NCCL
    assert doc["run"] == {"dir": "."}  # a resume reads the folder the old run wrote
    assert doc["orchestrator"]["renderer"] == {"name": "prime-qwen3"}  # compile's choice
    moved = {c.old: c for c in m.changes}
    assert moved["orchestrator.rollouts_per_example"].new == "orchestrator.group_size"
    assert "v0.5.0 -> v0.6.0" in moved["orchestrator.rollouts_per_example"].release
    assert m.decisions == []


def test_every_key_of_the_old_file_is_named() -> None:
    m = migrate(V03_RESUME)
    old = {".".join(map(str, k)) for k, _ in flat(tomllib.loads(V03_RESUME))}
    named = set(m.kept) | {c.old.split(" = ")[0].replace("[0]", ".0") for c in m.changes}
    assert old <= named, old - named


def test_an_alias_of_its_own_release_is_renamed_and_a_typo_is_named() -> None:
    m = migrate('[orchestrator]\nrollouts_per_example = 8\nbatch_sise = 4\n[trainer]\n', release="v0.7.0")
    assert tomllib.loads(m.text)["orchestrator"]["group_size"] == 8
    unknown = [c for c in m.changes if c.kind == "unknown"]
    assert [c.old for c in unknown] == ["orchestrator.batch_sise"]
    assert "did you mean orchestrator.batch_size?" in unknown[0].why


def test_a_teachers_server_never_lands_on_the_students() -> None:
    steps = json.loads((ROOT / "schemas" / "prime-rl-renames.json").read_text())["steps"]
    rules = [r for s in steps for r in s["rules"] if r["old"].startswith("teacher_inference.") and "new" in r]
    assert all(r["new"].startswith("teacher_inference.") for r in rules), rules
    assert not any(r["old"].startswith("teacher") and "new" in r and "teacher" not in r["new"]
                   for s in steps for r in s["rules"])


def test_a_file_both_v06_and_v07_know_is_labelled_with_both(tmp_path: Path) -> None:
    """issue 30 point 11: a v0.6.0 file whose keys later releases also know was labelled with
    the newest of them; it names them all and migrates from the oldest."""
    src = tmp_path / "old.toml"
    src.write_text('max_steps = 3\n[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\n'
                   'batch_size = 8\ngroup_size = 4\n')
    done = run(src)
    said = "looks written for prime-rl v0.6.0 (or v0.7.0, v0.8.0, 559b447: they know all its keys"
    assert said in done.stdout


def test_a_spec_an_empty_file_and_another_programs_file_exit_2(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('taskset = "gsm8k"\nmethod = "grpo"\n')
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    other = tmp_path / "pyproject.toml"
    other.write_text("[tool.black]\nline-length = 100\n")
    for path, says in ((spec, "this is a whileai spec: compile it"), (empty, "this file is empty"),
                       (other, "the file of another program")):
        done = run(path)
        assert done.returncode == 2 and says in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_drop_or_a_refused_result_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "old.toml"
    src.write_text(V03_RESUME.replace("batch_size = 128", 'batch_size = 128\ntrajectory_strategy = "x"'))
    out = tmp_path / "new.toml"
    done = run(src, "-o", out)
    assert done.returncode == 1 and "trajectory_strategy is dropped" in done.stderr and not out.exists()
    done = run(src, "-o", out, "--allow-drops")
    assert done.returncode == 0 and out.exists(), done.stderr
    src.write_text(V03_RESUME.replace('id = "reverse-text"', 'id = "reverse-text"\nbogus_field = 1'))
    out.unlink()
    done = run(src, "-o", out, "--allow-drops")
    assert done.returncode == 1 and "is unknown" in done.stderr and not out.exists()
    done = run(src, "-o", out, "--allow-drops", "--force")
    assert done.returncode == 0 and out.exists()


def test_gpu_ids_become_counts_and_a_fixed_cap_stays_fixed() -> None:
    m = migrate(V03_RESUME)
    assert tomllib.loads(m.text)["deployment"] == {"num_infer_gpus": 1, "num_train_gpus": 1}
    v08 = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 64\n'
                  'group_size = 8\noversampling_factor = 1.5\n[inference]\n', release="v0.8.0")
    doc = tomllib.loads(v08.text)
    assert doc["orchestrator"]["concurrency"] == {"max_inflight": 96, "min_inflight": 96}
    assert any(c.kind == "converted" and c.old.startswith("orchestrator.oversampling_factor")
               for c in v08.changes)
    assert "weight_broadcast" not in doc  # v0.8.0 picked NCCL as the pin does


def test_an_env_id_the_pin_lacks_is_refused_with_the_nearest_tasksets() -> None:
    m = migrate(V03_RESUME.replace('id = "reverse-text"', 'id = "aime2024"'))
    [d] = [c for c in m.decisions if "aime2024" in c.old]
    assert "no taskset of the pin's catalogue; nearest: aime24" in d.why


def test_a_table_emptied_down_the_chain_is_pruned() -> None:
    m = migrate(V03_RESUME.replace("[orchestrator.sampling]", '[orchestrator.model.lora]\nname = "r8"\n\n'
                                   "[orchestrator.sampling]"))
    doc = tomllib.loads(m.text)
    assert "student" not in doc["orchestrator"] and doc["orchestrator"]["model"] == {"lora": {"name": "r8"}}


def test_ratios_keep_their_meaning_or_need_a_decision() -> None:
    env = '[[orchestrator.env]]\nid = "reverse-text"\n'
    two = V03_RESUME.replace(env, env + '[[orchestrator.env]]\nid = "gsm8k"\n')
    m = migrate(two)
    [d] = [c for c in m.decisions if c.old == "orchestrator.train.source"]
    assert "in proportion to their rows; the pin weighs each source 1.0" in d.why
    v05 = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
                  '[orchestrator.buffer]\nenv_ratios = [0.25, 0.75]\n[[orchestrator.env]]\nid = "gsm8k"\n'
                  '[[orchestrator.env]]\nid = "reverse-text"\n', release="v0.5.0")
    sources = tomllib.loads(v05.text)["orchestrator"]["train"]["source"]
    assert [s["ratio"] for s in sources] == [0.25, 0.75]
    assert not [c for c in v05.decisions if c.old == "orchestrator.train.source"]


def test_a_meaning_the_other_releases_of_the_window_did_not_share_is_said() -> None:
    m = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
                'group_size = 2\n[inference]\n')
    assert m.release == "v0.6.0" and "v0.7.0" in m.also
    [wb] = [c for c in m.changes if c.new.startswith("weight_broadcast.type")]
    assert "(not what a v0.7.0 file did: --from v0.7.0 if it is one)" in wb.why


def test_a_v05_teacher_server_is_dropped_with_its_reason() -> None:
    m = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
                '[teacher_inference.server]\nport = 8001\n[inference]\n', release="v0.5.0")
    [d] = [c for c in m.decisions if c.old == "teacher_inference.server.port"]
    assert d.kind == "dropped" and "#2629" in d.why
    assert "port" not in tomllib.loads(m.text).get("inference", {}).get("router", {})


def test_check_on_an_old_file_names_each_keys_move(tmp_path: Path) -> None:
    old = tmp_path / "old.toml"
    old.write_text(V03_RESUME + '\n[wandb]\nproject = "p"\n')
    done = subprocess.run([sys.executable, "-m", "whileai", "check", str(old)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "wandb: unknown key; moved to monitors.wandb in v0.8.0 -> 559b447 -> run `whileai migrate" \
        in done.stderr
    assert "inference_gpu_ids: unknown key; converted to deployment.num_infer_gpus = 1 in v0.4.0 -> v0.5.0" \
        in done.stderr


def test_a_process_table_emptied_by_a_drop_stays_and_teacher_tau_needs_a_decision() -> None:
    m = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer.loss]\nteacher_tau = 0.5\n[orchestrator]\n'
                'batch_size = 8\n[inference]\n', release="v0.5.0")
    assert "trainer" in tomllib.loads(m.text)  # [trainer] is required: an rl file without it is refused
    [d] = [c for c in m.decisions if c.old == "trainer.loss.teacher_tau"]
    assert d.kind == "decision" and "opd" in d.why


def test_the_chain_is_what_the_generator_makes_from_the_catalogues() -> None:
    """schemas/prime-rl-renames.json is regenerated from the committed catalogues (v0.3.0 to the
    pin, with aliases) and scripts/prime_rl_renames.toml; the generator imports no prime-rl."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_prime_rl_renames.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    v06 = json.loads((ROOT / "schemas" / "prime-rl-v0.6.0.keys.json").read_text())["entries"]["rl"]
    assert v06["orchestrator.rollouts_per_example"] == {"kind": "int", "alias_of": "orchestrator.group_size"}
    assert v06["orchestrator.group_size"]["at"] == "prime_rl/configs/orchestrator.py:602"
    v03 = json.loads((ROOT / "schemas" / "prime-rl-v0.3.0.keys.json").read_text())["entries"]["rl"]
    assert v03["orchestrator.rollouts_per_example"]["default"] == 1 and "inference_gpu_ids" in v03


def test_the_prime_monitor_moves_to_the_orchestrators_monitors() -> None:
    m = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
                '[orchestrator.prime_monitor]\n[inference]\n', release="v0.8.0")
    assert tomllib.loads(m.text)["orchestrator"]["monitors"] == {"prime": {}}
    assert not m.decisions


def test_vllm_pass_through_arguments_join_the_vllm_table() -> None:
    m = migrate('[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n[inference]\n'
                '[inference.model]\nmax_model_len = 4096\n'
                '[inference.vllm_extra]\nlanguage_model_only = true\n', release="v0.8.0")
    vllm = tomllib.loads(m.text)["inference"]["vllm"]
    assert vllm == {"max_model_len": 4096, "language_model_only": True}
    assert not m.decisions


def test_a_v06_env_timeout_is_the_pins_episode_timeout_and_one_without_a_place_is_dropped() -> None:
    head = '[model]\nname = "Qwen/Qwen3-0.6B"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
    m = migrate(head + '[[orchestrator.train.env]]\nid = "reverse-text"\ntimeout = 600\n', release="v0.6.0")
    source = tomllib.loads(m.text)["orchestrator"]["train"]["source"][0]
    assert source["env"]["timeout"] == {"episode": 600}
    v07 = migrate(head + '[[orchestrator.train.env]]\nid = "reverse-text"\ntimeout = { scoring = 30 }\n',
                  release="v0.7.0")
    assert [c.old for c in v07.decisions] == ["orchestrator.train.env[0].timeout.scoring"]


# prime-rl v0.6.0 configs/elastic/rl.toml, as it was (its comments left out)
V06_ELASTIC = """max_steps = 200
seq_len = 2048

[ckpt]

[model]
name = "Qwen/Qwen3-4B-Instruct-2507"

[wandb]
project = "alphabet-sort"
name = "alphabet-sort-elastic"

[trainer.model.lora]
rank = 32
alpha = 64

[trainer.optim]
lr = 1e-5

[orchestrator]
batch_size = 512
group_size = 8

[orchestrator.train.sampling]
max_completion_tokens = 768

[orchestrator.client.elastic]
hostname = "localhost"
port = 8000
sync_interval = 5.0

[[orchestrator.train.env]]
id = "alphabet-sort"
name = "alphabet-sort"
args = { min_turns = 3, max_turns = 5, power_per_turn = false }
"""


def test_a_key_its_release_took_through_a_before_validator_is_not_unknown() -> None:
    """v0.6.0 re-nested [orchestrator.client] under the student's client in a before-validator
    (configs/orchestrator.py:629-688, fold_student_shortcuts), not a field alias: migrate called
    its own release's file unknown. Now it is renamed first, citing the validator, and carried
    on: to the pin, which removed the elastic pool (a drop, one line each, the old key named)."""
    m = migrate(V06_ELASTIC)
    assert m.release == "v0.6.0" and not [c for c in m.changes if c.kind == "unknown"]
    elastic = [c for c in m.changes if c.old.startswith("orchestrator.client.elastic.")]
    assert sorted(c.old.rsplit(".", 1)[1] for c in elastic) == ["hostname", "port", "sync_interval"]
    assert all(c.kind == "dropped" and "before-validator" in c.why and "orchestrator.py:629-688" in c.why
               and "orchestrator.student.client" in c.why for c in elastic), elastic
    # a key the same validator folds and a later release keeps: renamed, then carried to the pin
    m = migrate('[model]\nname = "m"\n[trainer]\n[orchestrator]\nbatch_size = 8\n'
                "[orchestrator.client]\ntimeout = 60\n", release="v0.6.0")
    assert [c.kind for c in m.changes if c.old == "orchestrator.client.timeout"] == ["moved"]
    assert tomllib.loads(m.text)["orchestrator"]["model"]["client"]["timeout"] == 60


def test_one_old_key_is_one_line(tmp_path: Path) -> None:
    """Each key of the old file is named on exactly one line of the whole output: a key carried
    through several releases is one `moved`/`converted`/`dropped` line (old -> final), and a
    drop or an unknown key is its error line alone (not also a report line, nor the pin's
    refusal of the same key)."""
    src = tmp_path / "old.toml"
    src.write_text(V06_ELASTIC.replace("batch_size = 512", "batch_size = 512\nbatch_sise = 4"))
    done = run(src)
    assert done.returncode == 1
    lines = (done.stdout + done.stderr).splitlines()
    for key in ("orchestrator.client.elastic.port", "orchestrator.batch_sise", "orchestrator.train.env[0].id",
                "orchestrator.train.env[0].args"):
        said = [line for line in lines if key in line.split(" (")[0]]
        assert len(said) == 1, (key, said)
    assert any(line.startswith("error: ") and "orchestrator.batch_sise is unknown" in line for line in lines)
    assert not any("the pin would refuse" in line and "batch_sise" in line for line in lines)
    (line,) = [x for x in lines if "orchestrator.train.env[0].args" in x.split(" (")[0]]
    assert "orchestrator.train.source[0].env.taskset.min_turns" in line
    assert "orchestrator.train.source[0].env.taskset.task.power_per_turn" in line


def test_the_migrated_file_keeps_its_blank_lines_between_tables() -> None:
    text = migrate(V03_RESUME).text
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("[") and i]
    assert heads and all(lines[i - 1] == "" for i in heads), text
    compact = V03_RESUME.replace("\n\n", "\n")  # a file written without them keeps that too
    lines = migrate(compact).text.splitlines()
    assert any(lines[i - 1] != "" for i, line in enumerate(lines) if line.startswith("[") and i)


def test_an_output_in_a_missing_folder_is_refused_and_no_folder_is_made(tmp_path: Path) -> None:
    src = tmp_path / "old.toml"
    src.write_text(V03_RESUME)
    for out, missing in ((tmp_path / "no" / "dir" / "x.toml", tmp_path / "no" / "dir"),
                         (tmp_path / "no" / "dir", tmp_path / "no")):
        done = run(src, "-o", out, "--force", "--allow-drops")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("error: -o: ") and f"no folder {missing}" in done.stderr
        assert done.stdout == "" and not (tmp_path / "no").exists()
    done = run(src, "-o", tmp_path / "new", "--force", "--allow-drops")  # a new folder in one that exists
    assert done.returncode == 0 and (tmp_path / "new" / "old.toml").is_file(), done.stderr
