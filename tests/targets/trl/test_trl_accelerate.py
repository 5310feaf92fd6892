"""Multi-GPU and multi-node TRL: accelerate.yaml loads with accelerate's own config loader, and
each printed command parses the way `trl <cmd>` and `accelerate launch` parse it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from helpers import needs
from trl_helpers import seed_run

import whileai as wai

pytestmark = pytest.mark.trl


def written(tmp_path: Path, arm: str, **fields: object) -> tuple[wai.Compiled, Path]:
    c = wai.compile(seed_run(arm, **fields), "trl", out=tmp_path / arm)
    return c, tmp_path / arm


@pytest.mark.parametrize(("arm", "fields", "kind", "procs", "machines"), [
    ("grpo", {"gpus": 4}, "FSDP", 4, 1),
    ("opd", {"gpus": 8}, "DEEPSPEED", 8, 1),
    ("opsd", {"nodes": 2}, "FSDP", 16, 2),
    ("opd", {"nodes": 4, "gpus_per_node": 4}, "DEEPSPEED", 16, 4),
    ("sft", {"gpus": 4}, "FSDP", 4, 1),
])
def test_accelerate_config_loads_with_accelerates_loader(tmp_path: Path, arm: str, fields: dict,
                                                         kind: str, procs: int, machines: int) -> None:
    needs("trl", "accelerate")
    from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file

    _, out = written(tmp_path, arm, **fields)
    cfg = load_config_from_file(str(out / "accelerate.yaml"))
    assert isinstance(cfg, ClusterConfig)
    assert (cfg.distributed_type.value, cfg.num_processes, cfg.num_machines) == (kind, procs, machines)
    assert cfg.mixed_precision == "bf16" and cfg.machine_rank == 0
    if kind == "FSDP":
        assert cfg.fsdp_config["fsdp_version"] == 2
    else:
        assert cfg.deepspeed_config["zero_stage"] == 3
    if machines > 1:
        assert cfg.main_process_port == 29500


def _launch_args(command: str) -> tuple[object, list[str]]:
    """What `accelerate launch` receives for a printed command (as trl's CLI builds it), run
    from the run directory as the command's `cd` does."""
    from accelerate.commands.launch import launch_command_parser

    argv = shlex.split(command.split("&&", 1)[1])
    if argv[0] == "accelerate":
        return launch_command_parser().parse_args(argv[2:]), argv
    from trl.cli.accelerate_config import resolve_accelerate_config_argument
    from trl.scripts import distillation, grpo, sft

    module = {"grpo": grpo, "distillation": distillation, "sft": sft}[argv[1]]
    all_args = argv[2:] + ["--bf16", "false"]  # this machine has no GPU for the config's bf16
    *_, config_rest, cli_rest = module.make_parser().parse_args_and_config(
        all_args, return_remaining_strings=True, separate_remaining_strings=True)
    launch = resolve_accelerate_config_argument(config_rest + cli_rest)
    return launch_command_parser().parse_args(launch + ["script.py"]), argv


@pytest.mark.parametrize(("arm", "fields"), [("grpo", {"gpus": 2}), ("opd", {"nodes": 2}),
                                             ("opsd", {"nodes": 2}), ("sft", {"nodes": 2})])
def test_commands_reach_accelerate_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arm: str,
                                         fields: dict) -> None:
    needs("trl", "accelerate", "trl")
    c, out = written(tmp_path, arm, **fields)
    monkeypatch.chdir(out)
    line = c.commands[-1].replace('"$MACHINE_RANK"', "1").replace('"$MAIN_IP"', "10.0.0.1")
    parsed, argv = _launch_args(line)
    args: Any = parsed
    assert Path(args.config_file).name == "accelerate.yaml"
    if "nodes" in fields:
        assert c.commands[-2].startswith("# on each of the 2 machines")
        assert (args.machine_rank, args.main_process_ip) == (1, "10.0.0.1")
    if arm == "opsd":
        assert argv[-3:] == ["train.py", "--config", "config.yaml"]
    if arm == "sft":  # the teacher samples once, on the main machine, before any process trains
        assert c.commands[0].startswith(f"cd {out} && python sample.py ")
        assert "once, on the main" in c.commands[0]
        assert argv[:2] == ["trl", "sft"]
    assert "accelerate.yaml" in c.files["README.md"] and "accelerate.yaml" in c.files
