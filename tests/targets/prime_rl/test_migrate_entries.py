"""`whileai migrate` on the other entry points' files of prime-rl's history (sft, inference,
trainer; tests/fixtures/prime-rl/migrate-entries.json, by scripts/gen_migrate_fixture.py: every
such file of the pin's configs/ and examples/ at v0.6.0, v0.7.0 and v0.8.0, with the loader's
verdicts on the migrated files in migrate-entries-verdicts.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import tomllib
from helpers import ROOT
from test_migrate import digest, flat

from whileai.targets.prime_rl.check import check_document
from whileai.targets.prime_rl.migrate.core import entry_of, migrate

FIXTURES = ROOT / "tests" / "fixtures" / "prime-rl"
PAIRS = json.loads((FIXTURES / "migrate-entries.json").read_text())
VERDICTS = json.loads((FIXTURES / "migrate-entries-verdicts.json").read_text())
# a file of nothing but [slurm] is valid for rl and sft alike: rl on a tie, and the loader
# accepts the migrated file as the sft entry point all the same
AMBIGUOUS = {"configs/ci/slim_sft.toml"}


def test_fixture_covers_sft_inference_and_trainer_files_across_three_releases() -> None:
    assert {p["entry"] for p in PAIRS} == {"sft", "inference", "trainer"}
    assert {p["tag"] for p in PAIRS} == {"v0.6.0", "v0.7.0", "v0.8.0"}
    assert len(PAIRS) >= 38


def test_the_entry_point_is_detected_from_the_keys() -> None:
    wrong = {p["pin_path"] for p in PAIRS if entry_of(tomllib.loads(p["old_toml"])) != p["entry"]}
    assert wrong == AMBIGUOUS


def test_every_migrated_file_is_what_the_loader_accepted_and_keeps_the_pins_values() -> None:
    refused_before = 0
    for p in PAIRS:
        old = tomllib.loads(p["old_toml"])
        refused_before += bool(check_document(old, entry=p["entry"]))
        m = migrate(p["old_toml"], entry=None)
        v = VERDICTS[f"{p['tag']}:{p['pin_path']}"]
        assert digest(m.text) == v["migrated_doc_sha"], p["pin_path"]
        assert v["accepted"], (p["tag"], p["pin_path"], v["error"])
        new, pin = dict(flat(tomllib.loads(m.text))), dict(flat(tomllib.loads(p["pin_toml"])))
        old_values = {repr(x) for x in dict(flat(old)).values()}
        assert not [k for k, x in pin.items() if k in new and repr(x) in old_values and new[k] != x
                    and repr(new[k]) in old_values], (p["tag"], p["pin_path"])
    assert refused_before >= 18  # of 38 measured: the old files the pin refuses as they are


def test_an_inference_file_migrates_under_its_own_root(tmp_path: Path) -> None:
    src = tmp_path / "infer.toml"
    src.write_text('# for v0.8.0\n[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 2\n')
    done = subprocess.run([sys.executable, "-m", "whileai", "migrate", str(src)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "(inference entry point)" in done.stdout
    assert "moved: parallel.tp -> vllm.tensor_parallel_size" in done.stdout
    text = done.stdout.split("(migrated)\n", 1)[1]
    assert tomllib.loads(text) == {"vllm": {"model": "Qwen/Qwen3-0.6B", "tensor_parallel_size": 2}}
    assert text.startswith("# for v0.8.0")


def test_an_orchestrator_file_of_v07_passes_the_pins_orchestrator_schema() -> None:
    """No orchestrator file survives in prime-rl's history; this one (v0.7.0 keys) migrated
    was accepted by the real loader as `--entry orchestrator` (2026-12-02)."""
    m = migrate('batch_size = 64\nmax_inflight_rollouts = 64\n[model]\nname = "PrimeIntellect/'
                'Qwen3-0.6B-Reverse-Text-SFT"\n[renderer]\nname = "qwen3"\n[[train.env]]\n'
                'id = "reverse-text"\n[wandb]\nproject = "p"\n', entry=None)
    assert (m.entry, m.release) == ("orchestrator", "v0.7.0")
    doc = tomllib.loads(m.text)
    assert doc["concurrency"] == {"max_inflight": 64} and doc["monitors"] == {"wandb": {"project": "p"}}
    assert doc["train"]["source"][0]["env"]["taskset"] == {"id": "reverse-text"}
    assert check_document(doc, entry="orchestrator") == []
