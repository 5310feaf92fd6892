"""The stages of verl's rehearsal: one per verl command of a run folder (SFT: the generation
server, then sft_trainer), each with the node it gets (knobs.node_gpus, or what slurm.sh asks
SLURM for), from a compiled spec or a folder on disk."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled

NAME = "verl"  # the target's name, as its Compiled records say it


@dataclass(frozen=True)
class VerlStage:
    """One verl command of a run folder, as the rehearsal runs it."""

    name: str  # "opd", "sft: main_generation_server"
    job: str  # "main_ppo", "main_generation_server", "sft_trainer"
    line: int  # the command's line in run.sh
    gpus: int  # the GPUs a node has (Ray's logical GPUs); 0: the command's trainer.n_gpus_per_node
    nodes: int  # 0: the command's trainer.nnodes
    why: str  # where `gpus` comes from
    script: str = "run.sh"  # run.sh's path inside the folder
    files: dict[str, str] = field(default_factory=dict)  # a compiled folder's files, written first
    source: str = ""  # a run folder on disk (rehearsed in place), when `files` is empty


def from_compiled(c: Compiled) -> list[VerlStage]:
    """A compiled run (one run, or each stage of a two-stage run) -> one stage per verl command."""
    from whileai.targets.verl.runsh import parse

    parts = list(c.stages) or [c]
    out: list[VerlStage] = []
    for part in parts:
        script = next((n for n in part.files if Path(n).name == "run.sh"), None)
        if script is None:
            continue
        files = dict(part.files)
        gpus, nodes, why = sbatch(files.get("slurm.sh", "")) or node_of(part.run)
        name = part.run.method.type if len(parts) == 1 else (part.folder or part.run.method.type)
        cmds = parse(files[script], {"PWD": "."})
        for cmd in cmds:
            label = name if len(cmds) == 1 else f"{name}: {cmd.kind}"
            out.append(VerlStage(label, cmd.kind, cmd.line, gpus, nodes, why, script,
                                 files))
    return out


def node_of(run: RunSpec) -> tuple[int, int, str]:
    """The node the run will get, as the compiler places the pools on it (knobs.node_gpus): the
    spec's gpus_per_node, and its nodes."""
    from whileai.targets.verl import knobs

    if knobs.nodes(run) > 1:
        return run.gpus_per_node, knobs.nodes(run), "the spec's gpus_per_node and nodes"
    return knobs.node_gpus(run), 1, "one node of the spec's gpus_per_node"


def sbatch(text: str) -> tuple[int, int, str] | None:
    """The nodes a slurm.sh asks for (`#SBATCH --nodes=N`, `--gpus-per-node=G`): what the cluster
    gives the run, whatever the spec says; None without both."""
    found = dict(re.findall(r"^#SBATCH\s+--(nodes|gpus-per-node)[= ](\d+)\s*$", text, re.M))
    if "nodes" not in found or "gpus-per-node" not in found:
        return None
    return int(found["gpus-per-node"]), int(found["nodes"]), "slurm.sh's #SBATCH --nodes and --gpus-per-node"


def from_folder(path: Path) -> list[VerlStage]:
    """A run folder (or its run.sh) on disk: one stage per verl command; the node is the command's
    own trainer.n_gpus_per_node x trainer.nnodes (read by verl's Python)."""
    from whileai.errors import SpecError
    from whileai.targets.verl.runsh import read

    script = path / "run.sh" if path.is_dir() else path
    if not script.is_file():
        raise SpecError("config", str(path), "a run spec, a verl run folder or its run.sh")
    folder = script.resolve().parent
    cmds = read(script, {**os.environ, "PWD": str(folder)})
    if not cmds:
        raise SpecError("config", str(script), "a run.sh with a verl command (python3 -m verl.trainer...)")
    name = folder.name
    slurm = folder / "slurm.sh"
    gpus, nodes, why = (sbatch(slurm.read_text()) if slurm.is_file() else None) or (
        0, 0, "the command's trainer.n_gpus_per_node x trainer.nnodes")
    return [VerlStage(name if len(cmds) == 1 else f"{name}: {c.kind}", c.kind, c.line, gpus, nodes, why,
                      script.name, {}, str(folder)) for c in cmds]
