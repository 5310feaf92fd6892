"""Facts of this machine a run depends on, each a check or a `skip` with the reason (preflight
also runs on a laptop before a SLURM submit or a Modal launch):

- GPUs visible (`nvidia-smi -L`, narrowed by CUDA_VISIBLE_DEVICES) against the GPUs the
  layout puts on one node;
- free disk under output_dir against an estimate of what the run writes (`disk_estimate`);
- the models in a local folder or the Hugging Face cache (nothing downloaded);
- models the run loads in-process (TRL's student and teacher) fit in one device's memory;
- the framework's own checkout (`--checkout PATH`), when the run starts from one, at the pinned
  commit (whileai.targets.base.Checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from whileai.cost import sizes
from whileai.preflight.report import Check, fail, ok, skip
from whileai.targets.base import Checkout
from whileai.vocab.files import hub_cache

GB = 1e9
ADAM_BYTES = 12  # per trained parameter: fp32 master copy + Adam's two fp32 moments
LORA_SHARE = 0.01  # LoRA adapters of rank ~32: about 1% of the base parameters (whileai's bound)
EXPORT_BYTES = 16  # per rollout token written for the trainer: id, log-prob, mask, position


def amount(n_bytes: float) -> str:
    """Bytes for a message: GB, or MB below a tenth of one (tiny models)."""
    return f"{n_bytes / GB:.1f} GB" if n_bytes >= 0.1 * GB else f"{n_bytes / 1e6:.1f} MB"


class Estimate(NamedTuple):
    bytes: float
    parts: str


def disk_estimate(params_b: float | None, *, lora: bool, checkpoints: int, copies: int,
                  tokens_per_step: int, steps_kept: int,
                  copies_are: str = "weight copies") -> Estimate | None:
    """An upper bound: checkpoints x (bf16 weights + Adam state of the trained parameters) + copies x
    (bf16 weights, or the adapter) + kept steps x tokens per step x EXPORT_BYTES. copies_are: what
    the target calls its copies (whileai.targets.base.Machine); a part that is none is left out."""
    if params_b is None:
        return None
    n = params_b * 1e9
    trained = n * (LORA_SHARE if lora else 1.0)
    ckpt = checkpoints * (2 * n + ADAM_BYTES * trained)  # an upper bound: base weights included
    cast = copies * 2 * trained
    tokens = steps_kept * tokens_per_step * EXPORT_BYTES
    parts = [f"{checkpoints} checkpoint(s) {amount(ckpt)}"]
    parts += [f"{copies} {copies_are} {amount(cast)}"] if copies else []
    parts += [f"rollouts of {steps_kept} step(s) {amount(tokens)}"] if steps_kept else []
    return Estimate(ckpt + cast + tokens, ", ".join(parts))


LOGIN = "on the login node"  # a run on several nodes: preflight runs where it is submitted
ELSEWHERE = "on a machine that only submits the run (--elsewhere)"


def submitted(nodes: int, elsewhere: bool) -> str | None:
    """Where preflight runs when this machine is not the one the run trains on (each machine
    check then says "checked here, <that>" or "not checked here, <that>"), or None when it is."""
    if nodes > 1:
        return f"{LOGIN} (the run trains on its {nodes} nodes)"
    return ELSEWHERE if elsewhere else None


def gpus(need: int, what: str, deadline: float, *, cpu: bool = False, away: str | None = None) -> Check:
    """The GPUs this machine shows against the run's `need`. away: why this machine is not the
    one the run trains on (`submitted`): then they are not checked here. Otherwise a run that
    needs GPUs on a machine with none is not ready: a FAIL."""
    name = "machine: GPUs"
    if cpu:
        return skip(name, "a CPU run (--cpu): no GPU needed")
    if need == 0:
        return skip(name, f"the run needs no GPU {what}")
    if away is not None:
        return skip(name, f"not checked here, {away}: the run needs {need} GPU(s) {what}")
    smi = shutil.which("nvidia-smi")
    fix = ("run preflight on the machine that trains it, or pass --elsewhere when this machine only "
           "submits it")
    if smi is None:
        return fail(name, f"no nvidia-smi here, and the run needs {need} GPU(s) {what}: {fix}")
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True,
                             timeout=max(0.5, deadline - time.monotonic()))
    except (subprocess.TimeoutExpired, OSError) as e:
        return fail(name, f"nvidia-smi -L did not answer ({type(e).__name__}): the driver is stuck")
    found = [ln for ln in out.stdout.splitlines() if ln.startswith("GPU ")]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v for v in visible.split(",") if v.strip() not in ("", "-1")]
        count, how = min(len(ids), len(found)), f"{len(found)} present, CUDA_VISIBLE_DEVICES={visible!r}"
    else:
        count, how = len(found), "nvidia-smi -L"
    if out.returncode != 0 and not found:
        return fail(name, f"nvidia-smi found no GPU (exit {out.returncode}): the run needs {need} "
                    f"{what}: {fix}")
    if count < need:
        return fail(name, f"{count} GPU(s) visible ({how}), the run needs {need} {what}")
    return ok(name, f"{count} GPU(s) visible ({how}); the run needs {need} {what}")


def disk(output_dir: str, est: Estimate | None, why: str, away: str | None = None) -> Check:
    """Free space under output_dir against `est`. away (`submitted`): this machine is not the one
    the run trains on, said first: the space is what this machine sees of the folder (on several
    nodes, the shared folder every node writes)."""
    name = "machine: disk"
    where = Path(output_dir).expanduser().absolute()
    probe = where
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError as e:
        return fail(name, f"{probe}: {e.strerror}")
    said = f"checked here, {away}: " if away else ""
    if away and probe != where:  # the run's folder is not here: whatever is, may not be what it writes to
        need = f"; the run writes about {amount(est.bytes)} ({est.parts})" if est else ""
        return skip(name, f"not checked here, {away}: {where} is not on this machine (its nearest "
                    f"folder here, {probe}, may be another filesystem){need}")
    if est is None:
        return skip(name, f"{said}{amount(free)} free under {where}; no estimate: {why}")
    text = (f"{said}{amount(free)} free under {where}, the run writes about {amount(est.bytes)} "
            f"({est.parts})")
    return ok(name, text) if free >= est.bytes else fail(name, text + ": free space or move output_dir")


class Found(NamedTuple):
    where: Path | None
    bytes: int  # weight files found (0: none)


def find_model(name: str) -> Found:
    """A local folder with config.json, or a cached hub snapshot of `name` (nothing downloaded)."""
    path = Path(name).expanduser()
    if (path / "config.json").is_file():
        return Found(path, _weights(path))
    if name.count("/") != 1 or path.exists():
        return Found(None, 0)
    snaps = hub_cache() / ("models--" + name.replace("/", "--")) / "snapshots"
    hits = sorted((s for s in snaps.iterdir() if (s / "config.json").is_file()),
                  key=lambda s: s.stat().st_mtime, reverse=True) if snaps.is_dir() else []
    return Found(hits[0], _weights(hits[0])) if hits else Found(None, 0)


def _weights(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir()
               if f.suffix in (".safetensors", ".bin", ".pt") and f.is_file())


def model(role: str, name: str, *, required: bool) -> Check:
    """required: the run loads it from this machine with downloads off (a model it loads
    in-process, whileai.targets.probe.Loads)."""
    n = f"machine: {role} model"
    found = find_model(name)
    if found.where is not None:
        size = f"{amount(found.bytes)} of weights" if found.bytes else "no weight files"
        where = "" if str(found.where) == name else f"{found.where}, "
        return ok(n, f"{name} is here ({where}{size})")
    local = name.startswith((".", "/", "~")) or name.count("/") != 1
    if local:
        return fail(n, f"{name} is no model folder (no config.json there)")
    what = f"{name} is not in the HF cache at {hub_cache()}"
    if required:
        return fail(n, f"{what} and downloads are off (HF_HUB_OFFLINE): huggingface-cli download "
                    f"{name} first")
    return skip(n, f"{what}: the run downloads it at start")


def memory(student: str, teacher: str | None, deadline: float, *, cpu: bool) -> Check:
    """A run that loads the student (and an OPD teacher) in one process (TRL's): their bf16
    weights plus KV / activation headroom must fit the device."""
    n = "machine: memory"
    need, parts = 0.0, []
    for role, name in (("student", student), ("teacher", teacher)):
        if name is None:
            continue
        found = find_model(name)
        size = sizes.params(name)
        if found.bytes:
            gb, how = found.bytes / GB, "its weight files"
        elif size is not None:
            gb, how = sizes.weights_gb(size.total_b), size.source
        else:
            return skip(n, f"{role} {name}'s size is unknown (not here, no size in its name)")
        need += gb * (1 + sizes.KV_HEADROOM)
        parts.append(f"{role} {amount(gb * GB)} ({how})")
    have, where = _device_memory(deadline, cpu)
    if have is None:
        return skip(n, f"{where}: needs {amount(need * GB)} ({', '.join(parts)}, + "
                    f"{sizes.KV_HEADROOM:.0%})")
    text = (f"{' + '.join(parts)} + {sizes.KV_HEADROOM:.0%} headroom = {amount(need * GB)} in one "
            f"process; {amount(have * GB)} on {where}")
    return ok(n, text) if need <= have else fail(n, text + ": a smaller teacher, or a larger device")


def _device_memory(deadline: float, cpu: bool) -> tuple[float | None, str]:
    smi = shutil.which("nvidia-smi")
    if not cpu and smi is not None:
        try:
            out = subprocess.run([smi, "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True,
                                 timeout=max(0.5, deadline - time.monotonic()))
            mib = [float(x) for x in out.stdout.split() if x.replace(".", "").isdigit()]
            if mib:
                return min(mib) * (1 << 20) / GB, "the smallest GPU here"
        except (subprocess.TimeoutExpired, OSError, ValueError):
            pass
    if not cpu:
        return None, "no GPU visible here"
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB, "this machine's RAM"
    except (ValueError, OSError, AttributeError):
        return None, "this machine's memory is unknown"


def checkout(path: str | None, src: Checkout, deadline: float) -> Check:
    n = f"machine: {src.name} checkout"
    commit = src.commit
    if path is None:
        return skip(n, f"no --checkout PATH given (the run needs {src.name} at {commit[:7]})")
    p = Path(path).expanduser()
    fix = (f"git -C {p} fetch origin && git -C {p} checkout {commit} && (cd {p} && {src.sync})")
    clone = f"git clone {src.repo} {p} && git -C {p} checkout {commit}"
    if not p.is_dir():
        return fail(n, f"{p} is not a folder: {clone}")
    try:
        out = subprocess.run(["git", "-C", str(p), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=max(0.5, deadline - time.monotonic()))
    except (subprocess.TimeoutExpired, OSError) as e:
        return fail(n, f"git rev-parse did not run in {p} ({type(e).__name__})")
    head = out.stdout.strip()
    if out.returncode != 0 or not head:
        return fail(n, f"{p} is not a git checkout: {clone}")
    if head != commit:
        return fail(n, f"{p} is at {head[:7]}, the configs are for {commit[:7]}: {fix}")
    try:
        dirty = subprocess.run(["git", "-C", str(p), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True,
                               timeout=max(0.5, deadline - time.monotonic())).stdout.strip()
    except (subprocess.TimeoutExpired, OSError):
        dirty = ""
    if dirty:
        return fail(n, f"{p} is at {commit[:7]} with local changes to tracked files: "
                    f"git -C {p} stash (or commit them elsewhere)")
    return ok(n, f"{p} is at the pinned commit {commit[:7]}")


__all__ = ["ELSEWHERE", "LOGIN", "Estimate", "checkout", "disk", "disk_estimate", "find_model", "gpus",
           "memory", "model", "submitted"]
