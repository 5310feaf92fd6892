"""Where a run's GPUs are: one node or several, trainer and inference nodes, SLURM.

The spec fields live on RunSpec (whileai.spec.run) and the SLURM table here (`Slurm`); `check(run)`
holds the rules between them (it reads the layout fields only, as `Placement` names them, so this
module needs nothing of run.py) (one SpecError naming the field), and `Layout` is the split every
target, the report and the cost estimate read:

    lay = layout(run)   # Layout(nodes=4, gpus_per_node=8, gpus=32, trainer_nodes=2, ...)
"""


import re
from typing import NamedTuple, Protocol

from pydantic import ValidationInfo, field_validator

from whileai.errors import SpecError
from whileai.spec.base import _Spec, src
from whileai.words import counted

DEFAULT_GPUS = 2  # prime-rl's default single_node layout: 1 inference + 1 trainer GPU
DEFAULT_GPUS_PER_NODE = 8  # prime-rl's deployment default gpus_per_node (an HGX node)
_SLURM = "prime-rl SlurmConfig default"
# what each SLURM value may be (it lands on an #SBATCH line), and how to say so
_FORMS: dict[str, tuple[str, str]] = {
    "job_name": (r"[A-Za-z0-9][A-Za-z0-9_.+\-]*", "letters, digits, '_', '.', '+', '-'"),
    "partition": (r"[A-Za-z0-9_.\-]+(,[A-Za-z0-9_.\-]+)*", "partition names joined by ','"),
    "account": (r"[A-Za-z0-9_.\-]+", "an account name (letters, digits, '_', '.', '-')"),
    "time": (r"(?i:(\d+-)?\d+(:\d{1,2}){0,2}|unlimited|infinite)",
             "SLURM's time forms: 'MM', 'MM:SS', 'HH:MM:SS', 'D-HH', 'D-HH:MM:SS' or 'UNLIMITED'"),
    "nodelist": (r"[A-Za-z0-9_.\-\[\],]+", "a SLURM host list such as 'gpu[01-04],gpu07'"),
    "exclude": (r"[A-Za-z0-9_.\-\[\],]+", "a SLURM host list such as 'gpu[01-04],gpu07'"),
}


class Slurm(_Spec):
    """SLURM submission (prime-rl's [slurm] table): `uv run rl @ file.toml` writes an sbatch
    script from prime-rl's template and submits it."""

    job_name: str | None = src("SLURM job name (#SBATCH --job-name). Unset: '<method>-<taskset>'.",
                               "whileai", default=None, max_length=128)
    partition: str | None = src(
        "SLURM partition(s) (#SBATCH --partition), comma-separated. Unset: prime-rl writes its "
        "own default, 'cluster', which your cluster may not have.", _SLURM, default=None,
        max_length=256)
    account: str | None = src("SLURM account to charge (#SBATCH --account). Unset: none.", _SLURM,
                              default=None, max_length=128)
    time: str | None = src(
        "Wall-time limit (#SBATCH --time), SLURM's forms: 'MM', 'HH:MM:SS', 'D-HH:MM:SS'. "
        "Unset: the partition's limit.", _SLURM, default=None, max_length=32)
    nodelist: str | None = src("Nodes to run on (#SBATCH --nodelist), a SLURM host list.", _SLURM,
                               default=None, max_length=4096)
    exclude: str | None = src("Nodes to avoid (#SBATCH --exclude), a SLURM host list.", _SLURM,
                              default=None, max_length=4096)
    template_path: str | None = src(
        "Your own Jinja2 sbatch template. Unset: prime-rl's bundled single-node or multi-node "
        "RL template.", _SLURM, default=None, min_length=1, max_length=4096)
    project_dir: str | None = src(
        "The prime-rl checkout the job runs in (sources .env, activates .venv, runs uv sync); "
        "it must be on a filesystem every node sees. Unset: the directory you submit from.",
        _SLURM + " ('.')", default=None, min_length=1, max_length=4096)
    pre_run_command: str | None = src(
        "One shell line run on the head node before the job starts (e.g. a cleanup).", _SLURM,
        default=None, min_length=1, max_length=4096)
    cleanup_grace_period: int | None = src(
        "Seconds a failed multi-node job waits before teardown, so checkpoints can flush.",
        _SLURM + " (3600)", default=None, ge=0, le=7 * 24 * 3600)
    shared_fs: bool | None = src(
        "Whether the checkout and its venv are on a filesystem every node sees (one `uv sync`); "
        "false: `uv sync` runs on every node.", _SLURM + " (true)", default=None)

    @field_validator(*_FORMS)
    @classmethod
    def _form(cls, v: str | None, info: ValidationInfo) -> str | None:
        pattern, allowed = _FORMS[str(info.field_name)]
        if v is not None and not re.fullmatch(pattern, v):
            raise ValueError(f"expected {allowed}")
        return v

    @field_validator("template_path", "project_dir")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("expected a path")
        return v


class Layout(NamedTuple):
    nodes: int
    gpus_per_node: int
    gpus: int  # the run's GPUs: trainer + inference (an OPD teacher is served apart)
    trainer_gpus: int
    inference_gpus: int
    trainer_nodes: int  # multi-node only (0 on one node)
    inference_nodes: int  # multi-node: all inference nodes (replicas x nodes per replica)
    replicas: int
    nodes_per_replica: int

    @property
    def multi(self) -> bool:
        return self.nodes > 1

    def text(self) -> str:
        if not self.multi:
            return (f"{self.gpus} GPUs ({counted(self.inference_gpus, 'inference GPUs')}, "
                    f"{counted(self.trainer_gpus, 'trainer GPUs')})")
        infer = (f"{counted(self.inference_nodes, 'inference nodes')} "
                 f"({counted(self.replicas, 'replicas')} of {counted(self.nodes_per_replica, 'nodes')})"
                 if self.inference_nodes else "no inference (fake data)")
        return (f"{self.gpus} GPUs on {self.nodes} nodes x {self.gpus_per_node} "
                f"({counted(self.trainer_nodes, 'trainer nodes')}, {infer})")


class Placement(Protocol):
    """The layout fields of a run spec (whileai.spec.run.RunSpec has them): all `layout` and
    `check` read."""

    @property
    def nodes(self) -> int | None: ...
    @property
    def gpus(self) -> int | None: ...
    @property
    def gpus_per_node(self) -> int: ...
    @property
    def inference_gpus(self) -> int | None: ...
    @property
    def inference_nodes(self) -> int | None: ...
    @property
    def inference_replicas(self) -> int | None: ...
    @property
    def nodes_per_fsdp_group(self) -> int | None: ...
    @property
    def inference_tp(self) -> int | None: ...


def layout(run: Placement) -> Layout:
    nodes, per = run.nodes or 1, run.gpus_per_node
    if nodes == 1:
        gpus = run.gpus or DEFAULT_GPUS
        infer = run.inference_gpus if run.inference_gpus is not None else max(1, gpus // 2)
        return Layout(1, per, gpus, gpus - infer, infer, 0, 0, 0, 0)
    infer_nodes = run.inference_nodes if run.inference_nodes is not None else max(1, nodes // 2)
    replicas = run.inference_replicas or infer_nodes
    return Layout(nodes, per, nodes * per, (nodes - infer_nodes) * per, infer_nodes * per,
                  nodes - infer_nodes, infer_nodes, replicas if infer_nodes else 0,
                  infer_nodes // replicas if infer_nodes else 0)


def check(run: Placement) -> None:
    """The rules between the layout fields; raises one SpecError naming the field."""
    nodes, per = run.nodes or 1, run.gpus_per_node
    if nodes == 1:
        gpus = run.gpus or DEFAULT_GPUS
        if gpus > per:
            need = -(-gpus // per)
            raise SpecError("gpus", gpus, f"at most gpus_per_node ({per}) on one node: {gpus} GPUs "
                            f"take {need} nodes; set nodes = {need}"
                            + (f" (multi-node runs take whole nodes: {need * per} GPUs)"
                               if gpus % per else ""))
        if run.inference_gpus is not None and run.inference_gpus >= gpus:
            raise SpecError("inference_gpus", run.inference_gpus,
                            f"fewer than the run's {gpus} GPUs: at least one must train")
        for field in ("inference_nodes", "inference_replicas", "nodes_per_fsdp_group"):
            if getattr(run, field) is not None:
                raise SpecError(field, getattr(run, field), "only with nodes > 1 (one node splits "
                                "GPUs with inference_gpus)")
        infer = layout(run).inference_gpus
        if run.inference_tp is not None and infer % run.inference_tp:
            raise SpecError("inference_tp", run.inference_tp, f"a divisor of the {infer} inference "
                            "GPUs (prime-rl fills them with tensor-parallel groups of this size)")
        return
    if run.gpus is not None and run.gpus != nodes * per:
        raise SpecError("gpus", run.gpus, f"nodes x gpus_per_node = {nodes * per}, or unset: "
                        f"multi-node runs take whole nodes")
    if run.inference_gpus is not None:
        raise SpecError("inference_gpus", run.inference_gpus, "unset on several nodes: split them "
                        "with inference_nodes (whole nodes)")
    lay = layout(run)
    if lay.inference_nodes >= nodes:
        raise SpecError("inference_nodes", lay.inference_nodes,
                        f"fewer than nodes ({nodes}): at least one node must train")
    if run.inference_replicas is not None:
        if lay.inference_nodes == 0:
            raise SpecError("inference_replicas", run.inference_replicas,
                            "unset when inference_nodes = 0 (no inference runs)")
        if lay.inference_nodes % run.inference_replicas:
            raise SpecError("inference_replicas", run.inference_replicas,
                            f"a divisor of the {lay.inference_nodes} inference nodes (each replica "
                            "takes the same number of whole nodes)")
    group = run.nodes_per_fsdp_group
    if group is not None and lay.trainer_nodes % group:
        raise SpecError("nodes_per_fsdp_group", group, f"a divisor of the {lay.trainer_nodes} "
                        "trainer nodes (prime-rl replicates the trainer across equal FSDP islands)")
    tp = run.inference_tp
    if tp is not None and (tp > per or per % tp):
        raise SpecError("inference_tp", tp, f"a divisor of gpus_per_node ({per}): prime-rl's "
                        "multi-node template runs gpus_per_node / inference_tp engines per node, "
                        "each within the node")


__all__ = ["DEFAULT_GPUS", "DEFAULT_GPUS_PER_NODE", "Layout", "Placement", "Slurm", "check", "layout"]
