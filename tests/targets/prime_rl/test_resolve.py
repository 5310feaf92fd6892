"""The offline resolve step copies shared fields down and names where each value came from."""

from __future__ import annotations

import tomllib
from helpers import seed_run

from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.resolve import resolve


def test_shared_fields_fill_each_process_and_defaults_are_named() -> None:
    doc = tomllib.loads(prime_rl.compile(seed_run("opd")).text)
    out, rows = resolve(doc)
    got = {r.path: (r.value, r.origin) for r in rows}
    assert got["trainer.model.name"] == ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "shared model.name")
    assert got["trainer.model.seq_len"] == (10240, "shared seq_len")
    assert got["orchestrator.batch_size"] == (256, "set")
    assert got["inference.server.port"] == (8000, "default")
    assert out["trainer"]["max_steps"] == 100 and doc["trainer"].get("max_steps") is None


def test_output_dir_is_the_run_directory_for_trainer_and_orchestrator_only() -> None:
    """prime-rl 559b447 configs/rl.py:389: the sub-configs' output_dir is output_dir / run.name
    (inference keeps its own); the shared table of validation.py copies no output_dir."""
    doc = tomllib.loads(prime_rl.compile(seed_run("grpo", output_dir="/shared/runs")).text)
    doc["run"] = {"name": "r1"}
    out, rows = resolve(doc)
    got = {r.path: (r.value, r.origin) for r in rows}
    assert got["trainer.output_dir"] == ("/shared/runs/r1", "output_dir / run.name")
    assert got["orchestrator.output_dir"] == ("/shared/runs/r1", "output_dir / run.name")
    assert got["inference.output_dir"] == ("outputs", "default")
    del doc["run"]
    assert resolve(doc)[0]["trainer"]["output_dir"] == "/shared/runs/<run name>"
