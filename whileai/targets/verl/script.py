"""run.sh in the shape of verl's own example scripts, and how it is started on one node or several.

One verl command, one Hydra override a line (`key=value \\`, `+key=value` for a key the composed
config lacks), as examples/grpo_trainer/*.sh do, so a verl user can diff the two. Past one node,
verl's multinode recipe (docs/start/multinode.rst): a Ray cluster (`ray start --head`, then
`ray start --address=...` on every other node), then `ray job submit ... -- bash "$PWD/run.sh"`
(main_ppo joins the running cluster: main_ppo.py:57-74), or one sbatch script that does all of it.
No Ray `working_dir`: with one, the driver and every worker run in Ray's per-node copy of the folder,
so outputs/, data/ and the logs would never land in the run folder (and a previous run's outputs
would be uploaded). The job runs run.sh in place instead, by its absolute path (Ray's job supervisor
runs the entrypoint with no cwd of its own: ray/dashboard/modules/job/job_supervisor.py:182), so the
folder must sit on a filesystem every node sees. The environment variables verl's example runtime_env
sets, main_ppo sets itself when it joins the cluster (trainer/constants_ppo.py:84-101, passed to
ray.init at main_ppo.py:62-77).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from whileai.spec.run import RunSpec
from whileai.targets.verl import knobs
from whileai.targets.verl.pin import TARGET
from whileai.version import __version__

SLURM = "slurm.sh"
HERE = "$PWD"  # run.sh's folder: a value under it is written by in_folder
_SAFE = re.compile(r"[A-Za-z0-9_./+\-$]+")  # a Hydra value left unquoted
_TYPED = re.compile(r"(?i)[+-]?(\d[\d_]*(\.\d*)?(e[+-]?\d+)?|\.\d+|inf|nan|true|false|null)")


def hydra(value: Any) -> str:
    """A value as Hydra's override grammar reads it back as the same value and type."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_item(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{_item(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if _SAFE.fullmatch(text) and not _TYPED.fullmatch(text):
        return text
    return quoted(text, "'")


def quoted(text: str, quote: str) -> str:
    """`text` as one quoted string of Hydra's grammar (hydra-core 1.3: grammar/OverrideLexer.g4:82-84
    QUOTED_VALUE, read back by core/override_parser/overrides_visitor.py:311-358
    _unescape_quoted_string): a backslash escapes only a quote or another backslash that comes before
    a quote or the closing quote, so only those runs of backslashes are doubled (`a\\b` is written
    as is, `it's` as `'it\\'s'`, a trailing `x\\` as `'x\\\\'`)."""
    return quote + re.sub(rf"(\\*)({quote}|\Z)",
                          lambda m: m[1] * 2 + ("\\" + quote if m[2] else ""), text) + quote


def _item(value: Any) -> str:
    return quoted(value, '"') if isinstance(value, str) else hydra(value)


def word(key: str, value: Any, added: bool = False) -> str:
    """One override as a shell word: `key=value`, quoted for the shell where needed; a path in
    the run folder as `key="\"$PWD/x\""` (`in_folder`)."""
    if isinstance(value, str) and value.startswith(HERE + "/"):
        return f"{'+' if added else ''}{key}={in_folder(value)}"
    text = hydra(value)
    if not _SAFE.fullmatch(text):
        text = f'"{text}"' if not re.search(r'[$`"\\!]', text) else shlex.quote(text)
    return f"{'+' if added else ''}{key}={text}"


def in_folder(value: str) -> str:
    """A `$PWD/...` path as one shell word that bash expands (run.sh cds to its folder first) and
    Hydra reads as one double-quoted string, whatever the folder's name holds: spaces, `'`, `,`,
    `=`, brackets (Hydra's override grammar splits or refuses each of those unquoted). Only a `"`
    in the folder's own name is left to Hydra unescaped (bash cannot escape an expansion's
    result without a substitution this file's reader, runsh.py, does not read)."""
    rest = value.removeprefix(HERE).replace('"', '\\"')  # Hydra's escape inside "..."
    rest = re.sub(r'([\\"`$])', r"\\\1", rest)  # then bash's inside "..."
    return f'"\\"{HERE}{rest}\\""'


def command(launcher: str, overrides: Iterable[str], tail: str = "") -> str:
    lines = [f"{launcher} \\", *(f"    {o} \\" for o in overrides)]
    lines[-1] = lines[-1].removesuffix(" \\") + tail
    return "\n".join(lines)


def run_sh(run: RunSpec, what: str, blocks: Sequence[str], env: Mapping[str, str]) -> str:
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    return (f"#!/usr/bin/env bash\n# written by whileai {__version__} for {TARGET}: {what}\n"
            "# Run it from anywhere: it works in its own folder (see README.md).\n"
            "set -xeuo pipefail\n"
            'cd "$(dirname "$0")"\n' + (f"\n{exports}" if exports else "") + "\n"
            + "\n\n".join(blocks) + "\n")


def commands(run: RunSpec, out: str | None) -> list[str]:
    """The run lines: `bash run.sh` on one node; past one node verl's Ray recipe."""
    where = f"cd {shlex.quote(out)} && " if out else ""
    if knobs.nodes(run) == 1:
        return [f"{where}bash run.sh"]
    n, per = knobs.all_nodes(run), knobs.gpus_per_node(run)  # an OPD teacher's own node included
    return [
        f"ray start --head --dashboard-host=0.0.0.0 --num-gpus={per}  # on the head node",
        f"ray start --address=$HEAD_IP:6379 --num-gpus={per}  # on " + (
        "the other node" if n == 2 else f"each of the other {n - 1} nodes"),
        f'{where}ray job submit --address=http://$HEAD_IP:8265 -- bash "$PWD/run.sh"  # once the '
        f"{n} nodes have joined, in this folder on a filesystem they all see (or: sbatch {SLURM})",
    ]


def slurm(run: RunSpec) -> str:
    """verl's SLURM recipe (docs/start/multinode.rst): Ray's head on the first node, a worker on
    each other, then run.sh on the head."""
    s, n, per = run.slurm, knobs.all_nodes(run), knobs.gpus_per_node(run)  # with an OPD teacher's node
    opts = {"job-name": (s.job_name if s else None) or f"{run.method.type}-{run.taskset.split('/')[-1]}",
            "nodes": n, "ntasks-per-node": 1, "gpus-per-node": per, "exclusive": None}
    if s is not None:
        opts |= {k: v for k, v in (("partition", s.partition), ("account", s.account),
                                   ("time", s.time), ("nodelist", s.nodelist),
                                   ("exclude", s.exclude), ("chdir", s.project_dir)) if v}
    head = "".join(f"#SBATCH --{k}{'' if v is None else f'={v}'}\n" for k, v in opts.items())
    pre = f"{s.pre_run_command}\n" if s and s.pre_run_command else ""
    return (f"#!/usr/bin/env bash\n# written by whileai {__version__} for {TARGET}: verl's SLURM "
            f"recipe (docs/start/multinode.rst). Run: sbatch {SLURM}\n{head}set -euo pipefail\n{pre}"
            'nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))\n'
            'head=${nodes[0]}\n'
            'head_ip=$(srun --nodes=1 --ntasks=1 -w "$head" hostname --ip-address)\n'
            f'srun --nodes=1 --ntasks=1 -w "$head" ray start --head --node-ip-address="$head_ip" '
            f'--port=6379 --num-gpus={per} --block &\nsleep 10\n'
            'for node in "${nodes[@]:1}"; do\n'
            f'  srun --nodes=1 --ntasks=1 -w "$node" ray start --address="$head_ip:6379" '
            f'--num-gpus={per} --block &\n  sleep 5\ndone\n'
            'RAY_ADDRESS="$head_ip:6379" srun --overlap --nodes=1 --ntasks=1 -w "$head" bash run.sh\n')


def overrides_of(doc: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The document as Hydra's dotted keys, in order (lists and empty tables are values)."""
    for key, value in doc.items():
        if isinstance(value, dict) and value:
            for sub, v in overrides_of(value):
                yield f"{key}.{sub}", v
        else:
            yield key, value


def environment(run: RunSpec) -> dict[str, str]:
    m = run.monitor
    if m is None:
        return {}
    env = {"WANDB_ENTITY": m.entity, "WANDB_RUN_GROUP": m.group,
           "WANDB_TAGS": ",".join(m.tags) if m.tags else None}
    return {k: v for k, v in env.items() if v}
