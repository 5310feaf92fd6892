"""verl's rehearsal as the target's `rehearsal` hook (whileai.targets.hooks.Rehearsal).

    stages = REHEARSAL.read(Path("examples/opd.toml"), serve=None, sets=None, compile=...)  # or a run folder
    result = REHEARSAL.rehearse(stages, python=None, steps=2, timeout=600, keep=None, say=print)

One stage per verl command of a run folder (SFT: the generation server, then sft_trainer), each
run by verl's own Python as `python -m whileai.targets.verl.rehearse.inside ...` in a process
group of its own under one deadline; its JSON lines (context.StepRecord) become the stage's verdict.
Light: the target module imports it; each method imports the work it does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whileai.rehearse.supervise import Supervisor
    from whileai.rehearse.verdict import Result, Verdict
    from whileai.spec.run import RunSpec
    from whileai.targets.compiled import Compiled
    from whileai.targets.hooks import Rehearsal

NAME = "verl"
ENV = "WHILEAI_VERL_PYTHON"
MODULE = "whileai.targets.verl.rehearse.inside"
NEEDS = ("verl", "ray", "hydra", "omegaconf", "torch", "transformers", "datasets", "cachetools",
         "aiohttp", "pandas", "pyarrow")
SETUP = """python3.11 -m venv VENV && . VENV/bin/activate
pip install torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu
pip install --no-deps verl==0.9.1
pip install hydra-core omegaconf numpy "tensordict>=0.10,<0.11" ray cachetools aiohttp \\
    "transformers>=5.5.3,<5.11,!=5.6.0" codetiming datasets pillow pyarrow pandas \\
    torchdata peft uvicorn fastapi
pip install pydantic tomlkit      # whileai's own pieces the rehearsal imports there
export WHILEAI_VERL_PYTHON=VENV/bin/python"""


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


class VerlRehearsal:
    """verl 0.9.1's own code for each stage of a run folder on a CPU, stand-ins where a GPU is
    needed (targets/verl/rehearse/, docs/rehearse.md)."""

    def read(self, config: Path, *, serve: list[str] | None, sets: list[str] | None,
             compile: Callable[[], Compiled]) -> list[Any]:
        from whileai.errors import SpecError

        if serve:
            raise SpecError("--serve", serve[0], "nothing for verl (run.sh serves its own teachers)")
        if config.is_dir() or config.suffix == ".sh":
            if sets:
                raise SpecError("--set", sets[0], "nothing with a verl run folder (edit run.sh)")
            return from_folder(config)
        return self.stages(compile())

    def stages(self, compiled: Compiled) -> list[Any]:
        from whileai.errors import SpecError

        if compiled.target != NAME:
            raise SpecError("--target", compiled.target, f"{NAME} (a verl rehearsal runs verl's run folders)")
        return from_compiled(compiled)

    def setup(self, folder: Path, *, python: str | None, stages: list[Any] | None) -> tuple[list[str], bool]:
        return setup(folder, python)

    def rehearse(self, stages: list[Any], *, python: str | None, steps: int, timeout: float,
                 keep: Path | None, say: Callable[[str], None]) -> Result:
        from whileai.rehearse.session import checked

        checked(steps, timeout, keep, kept="verdict.json")
        return rehearse(stages, python=usable(find_python(python), python), timeout=timeout, keep=keep,
                        say=say)

    def lines(self, result: Result) -> list[str]:
        from whileai.rehearse.report import lines

        return [x for line in lines(result, step_line) for x in line.split("\n")]


# -- stages ------------------------------------------------------------------------------------


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
    spec's gpus_per_node (or gpus, where a one-node run asks for more), and its nodes."""
    from whileai.targets.verl import knobs

    if knobs.nodes(run) > 1:
        return run.gpus_per_node, knobs.nodes(run), "the spec's gpus_per_node and nodes"
    said = "gpus" if (run.gpus or 1) > run.gpus_per_node else "gpus_per_node"
    return knobs.node_gpus(run), 1, f"one node of the spec's {said}"


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


# -- verl's python -----------------------------------------------------------------------------


def find_python(flag: str | None) -> str:
    """--python (a python, or a venv / folder holding bin/python), else $WHILEAI_VERL_PYTHON, else
    this interpreter when it imports verl; else a SpecError with the setup command (exit 2)."""
    from whileai.errors import SpecError

    given = flag or os.environ.get(ENV)
    if given:
        p = Path(given)
        p = p / "bin" / "python" if p.is_dir() else p
        if not p.is_file():
            raise SpecError("--python" if flag else ENV, given, "verl's python (or its venv): "
                            "see `whileai rehearse --setup DIR -t verl`")
        return str(p)
    from whileai.targets.verl.check import available

    if available():
        return sys.executable
    raise SpecError("--python", None, f"verl's python: --python PATH or ${ENV}; this Python has no "
                    "verl (docs/rehearse.md, 'verl': the setup command)")


def usable(python: str, flag: str | None) -> str:
    """The python, when it has verl at the pin and every module the rehearsal needs (checked
    before any folder is made: a second or so); else a SpecError naming what it lacks (exit 2)."""
    from whileai.errors import SpecError
    from whileai.targets.verl.pin import VERSION

    got = probe(python)
    lacks = [m for m in got["missing"] if m != "verl"]
    if got["verl"] != VERSION or lacks:
        has = f"verl {got['verl']}" if got["verl"] else "no verl"
        raise SpecError("--python" if flag else ENV, python,
                        f"a Python with verl=={VERSION} and {', '.join(NEEDS[1:])} ({has}"
                        + (f"; lacks {', '.join(lacks)}" if lacks else "") + "): `whileai rehearse "
                        "--setup DIR -t verl` prints the commands that make one")
    return python


def probe(python: str) -> dict[str, Any]:
    """What verl's python has: verl's version and the modules the rehearsal needs that it lacks."""
    code = ("import importlib.util, json, sys\n"
            f"need = {list(NEEDS)!r}\n"
            "missing = [m for m in need if importlib.util.find_spec(m) is None]\n"
            "v = None\n"
            "if 'verl' not in missing:\n"
            "    import importlib.metadata as md\n"
            "    v = md.version('verl')\n"
            "print(json.dumps({'verl': v, 'missing': missing, 'python': sys.version.split()[0]}))\n")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": _root()})
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"verl": None, "missing": list(NEEDS), "python": None}


def setup(folder: Path, python: str | None) -> tuple[list[str], bool]:
    """`--setup DIR -t verl`: DIR is verl's environment (a venv, or its python); says what it has."""
    from whileai.targets.verl.pin import VERSION

    candidate = python or str(folder)
    p = Path(candidate)
    p = p / "bin" / "python" if p.is_dir() else p
    if not p.is_file():
        return [f"no python at {p}: make verl's environment there with", *SETUP.replace(
            "VENV", str(folder)).splitlines()], False
    got = probe(str(p))
    lines = [f"python: {p} (Python {got.get('python')})",
             f"verl: {got.get('verl') or 'not installed'} (the pin: {VERSION})"]
    ok = got.get("verl") == VERSION and not got.get("missing")
    if got.get("missing"):
        lines.append("missing: " + ", ".join(got["missing"]))
    if not ok:
        lines += ["set it up with:", *SETUP.replace("VENV", str(folder)).splitlines()]
    else:
        lines.append(f"ok: rehearse with --python {p} (or {ENV}={p})")
    return lines, ok


def _root() -> str:
    """The folder holding this whileai package: verl's python imports the rehearsal from it."""
    import whileai

    return str(Path(whileai.__file__).resolve().parent.parent)


# -- the rehearsal -----------------------------------------------------------------------------


def rehearse(stages: list[VerlStage], *, python: str, timeout: float, keep: Path | None,
             say: Callable[[str], None]) -> Result:
    from whileai.rehearse.session import held
    from whileai.rehearse.verdict import Result

    result = Result(stages=[s.name for s in stages], subs=[[] for _ in stages])

    def body(root: Path, sup: Supervisor) -> None:
        for i, stage in enumerate(stages):
            node = (f"{stage.nodes} x {stage.gpus}" if stage.nodes > 1 else str(stage.gpus)) if stage.gpus \
                else "trainer.n_gpus_per_node x trainer.nnodes"
            say(f"rehearsing {stage.name}: verl's {stage.job} on {node} logical GPU(s)")
            v = run_stage(stage, root / f"{i}-{_safe(stage.name)}", python, sup)
            result.verdicts.append(v)
            result.phases.add("steps", v.seconds)
            if not v.ok:
                break

    return held(result, keep=keep, timeout=timeout, body=body)


def run_stage(stage: VerlStage, where: Path, python: str, sup: Supervisor) -> Verdict:
    import time


    where.mkdir(parents=True, exist_ok=True)
    if stage.files:
        for name, text in stage.files.items():
            (where / "run" / name).parent.mkdir(parents=True, exist_ok=True)
            (where / "run" / name).write_text(text)
        folder = (where / "run" / stage.script).parent
    else:
        folder = Path(stage.source)
    argv = [python, "-m", MODULE, "--folder", str(folder), "--job", stage.job, "--line", str(stage.line),
            "--gpus", str(stage.gpus), "--nodes", str(stage.nodes), "--scratch", str(where / "scratch")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        x for x in (_root(), os.environ.get("PYTHONPATH", "")) if x), "PYTHONUNBUFFERED": "1",
        "RAY_USAGE_STATS_ENABLED": "0"}
    log = where / "inside.log"
    t0 = time.monotonic()
    rc = sup.run(stage.name, argv, env=env, log=log, cwd=folder)
    _drop_ray_temp(where / "scratch" / "ray-temp")
    return verdict(log, where.parent, rc, time.monotonic() - t0, stage.why, stage.gpus)


def verdict(log: Path, root: Path, rc: int | None, seconds: float, why: str = "", gpus: int = 0) -> Verdict:
    """A stage's verdict from inside.py's log: its StepRecord lines, the first failing step's cause."""
    from whileai.rehearse.verdict import Cause, Verdict, lines_of, relative
    from whileai.targets.verl.rehearse.context import StepRecord

    steps: list[tuple[int, StepRecord]] = []
    for i, text in enumerate(lines_of(log)):
        if text.startswith('{"name": '):
            try:
                steps.append((i + 1, StepRecord.from_json(text)))
            except (ValueError, TypeError):
                continue
    dicts = [_asdict(s) for _, s in steps]
    for d in dicts:
        d.setdefault("facts", {})
        if why and d["name"] == "pools":
            d["facts"].setdefault("node", f"{gpus or 'its own'} GPU(s): {why}")
    bad = next(((n, s) for n, s in steps if not s.ok), None)
    if rc is None:
        return Verdict(False, seconds, dicts, Cause(relative(log, root), len(lines_of(log)),
                       "the rehearsal's --timeout came first"), timed_out=True,
                       summary=f"failed: timed out after {seconds:.0f} s")
    if bad is not None:
        n, s = bad
        file, _, line = s.cause.rpartition(":")
        cause = (Cause(file, int(line), s.error) if file and line.isdigit()
                 else Cause(relative(log, root), n, s.error))
        return Verdict(False, seconds, dicts, cause, summary=f"failed: {s.name}: {s.error}")
    if rc != 0 or not steps:
        from whileai.rehearse.verdict import first_exception

        cause = first_exception(log, root) or Cause(relative(log, root), len(lines_of(log)),
                                                      f"verl's python exited {rc} before any step")
        return Verdict(False, seconds, dicts, cause, summary=f"failed: exit {rc}: {cause.text}")
    names = ", ".join(s.name for _, s in steps)
    return Verdict(True, seconds, dicts, summary=f"ok: {names} in {seconds:.0f} s")


def step_line(s: dict[str, Any]) -> str:
    """One step: its verdict and facts, then what ran for real and what stood in (one a line)."""
    head = f"    {s['name']}: {'ok' if s['ok'] else 'failed'} ({s.get('seconds', 0):.1f} s)"
    if not s["ok"] and s.get("error"):
        head += f": {s['error']}" + (f" ({s['cause']})" if s.get("cause") else "")
    facts = "; ".join(f"{k} {_fact(v)}" for k, v in (s.get("facts") or {}).items())
    out = [head + (f"; {facts}" if facts else "")]
    out += [f"      ran: {x}" for x in s.get("ran") or []]
    out += [f"      stood in: {x}" for x in s.get("stood_in") or []]
    return "\n".join(out)


def _fact(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (dict, list)) else str(v)


def _asdict(s: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(s)


def _drop_ray_temp(record: Path) -> None:
    """Ray's short session folder outside the stage's (pools.py), left by a stage that was killed."""
    import shutil
    import tempfile

    try:
        temp = Path(record.read_text().strip())
    except OSError:
        return
    if temp.parent == Path(tempfile.gettempdir()) and temp.name.startswith("wr-ray-"):
        shutil.rmtree(temp, ignore_errors=True)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "stage"


REHEARSAL: Rehearsal = VerlRehearsal()
