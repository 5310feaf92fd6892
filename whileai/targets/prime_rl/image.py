"""prime-rl's Modal image: its checkout at the pin, with the submodules its uv sources and workspace
need fetched over HTTPS, then `uv sync --locked` with the flash-attention extras the arms' GPUs
need and the arms' taskset packages. Pure but for `build` (modal imported there).

    steps(["H100:2", "A100-80GB:2"], ["reverse-text"])   # the build commands, in order
    build(gpus, packages)                                # (modal.Image, its label)

What prime-rl's own files at the pin say (tests/fixtures/prime-rl/image-facts.json, recorded by
scripts/gen_prime_rl_image_facts.py; tests/launch/test_images.py holds these steps to it):
- `[tool.uv.sources]` installs verifiers, renderers and prime-pydantic-config from deps/ paths,
  and the uv workspace's members include `deps/prime-envs/environments/*/*`; uv.lock lists those
  members, so `uv sync --locked` refuses while deps/prime-envs is empty. prime-rl's own CI inits
  exactly these four submodules after rewriting `git@github.com:` to HTTPS (three of them are SSH
  URLs, and an image build has no key): .github/workflows/cpu_tests.yaml:18-21.
- The trainer's `attn = "auto"` picks flash-attention 4 on SM100, 3 on SM90 (H100, H200), else 2
  (`resolve_auto_attn`, src/prime_rl/trainer/model.py:1293-1311), and raises when FA3 is picked and
  flash_attn_3 is missing (:1321-1324); each is an optional extra (`flash-attn-cute`,
  `flash-attn-3`, `flash-attn`). A GPU fallback list gets every extra its types need.
- Taskset packages are opt-in workspace members (README: `uv sync --package prime-rl --package
  <env>`); Dockerfile.cuda syncs `--locked --no-dev` with `--all-packages`. Without named packages
  (a hand-run `modal deploy`) the image takes every member, as Dockerfile.cuda does.
- `uv run --frozen --no-dev` in the container (whileai.targets.prime_rl.launch) then neither
  re-resolves (the lock's rolling `exclude-newer = "7 days"`) nor installs the dev group.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from whileai.errors import SpecError
from whileai.targets.prime_rl.pin import COMMIT

REPO = "https://github.com/PrimeIntellect-ai/prime-rl.git"
PRIME_RL_DIR = "/opt/prime-rl"
SUBMODULES = ("deps/verifiers", "deps/renderers", "deps/prime-envs", "deps/pydantic-config")
HTTPS = 'git config --global url."https://github.com/".insteadOf git@github.com:'
UV = "uv>=0.11.1"  # [tool.uv] required-version at the pin
# whileai's own, for `import whileai` in the container (the train job's metrics record)
WHILEAI_DEPS = ("pydantic>=2.6,<3", "tomli-w>=1.0", "typer>=0.12", "rich>=13")
PACKAGES_ENV = "WHILEAI_PRIME_RL_PACKAGES"  # the arms' taskset packages, comma-separated
ATTN_ENV = "WHILEAI_PRIME_RL_ATTN"  # the arms' trainer.model.attn values, comma-separated
# CUDA compute capability of Modal's GPU types (NVIDIA's published figures)
GPU_SM = {"T4": (7, 5), "L4": (8, 9), "A10": (8, 6), "A10G": (8, 6), "L40S": (8, 9), "A100": (8, 0),
          "A100-40GB": (8, 0), "A100-80GB": (8, 0), "H100": (9, 0), "H100!": (9, 0), "H200": (9, 0),
          "B200": (10, 0), "RTX-PRO-6000": (12, 0)}
# trainer.model.attn -> the optional extra at the pin that installs it
ATTN_EXTRA = {"flash_attention_2": "flash-attn", "flash_attention_3": "flash-attn-3",
              "flash_attention_4": "flash-attn-cute"}


def auto_attn(sm: tuple[int, int]) -> str:
    """What prime-rl's `resolve_auto_attn` picks for `attn = "auto"` on a GPU of this capability."""
    if sm == (10, 0):
        return "flash_attention_4"
    return "flash_attention_3" if sm[0] == 9 else "flash_attention_2"


def gpu_type(choice: str) -> str:
    """'H100:2' -> 'H100' (Modal's `gpu=` form)."""
    return choice.partition(":")[0].strip()


def attns(gpus: Iterable[str], configured: Iterable[str] = ("auto",)) -> list[str]:
    """The attention implementations the trainer may run: each configured value, `auto` as each
    GPU type of the fallback list resolves it."""
    out: list[str] = []
    for a in configured:
        if a != "auto":
            out.append(a)
            continue
        for g in gpus:
            if gpu_type(g).upper() not in GPU_SM:
                raise SpecError("WHILEAI_MODAL_GPUS", g, "Modal GPU types whose flash-attention prime-rl "
                                f"knows: {', '.join(GPU_SM)} (optionally :N)")
            out.append(auto_attn(GPU_SM[gpu_type(g).upper()]))
    return sorted(set(out))


def extras(gpus: Iterable[str], configured: Iterable[str] = ("auto",)) -> list[str]:
    bad = sorted(set(configured) - set(ATTN_EXTRA) - {"auto"})
    if bad:
        raise SpecError("trainer.model.attn", bad[0], f"one of auto, {', '.join(ATTN_EXTRA)}")
    return sorted({ATTN_EXTRA[a] for a in attns(gpus, configured)})


def sync_line(extra: Iterable[str], packages: Iterable[str] | None) -> str:
    """`uv sync --locked --no-dev` with the extras, and the taskset packages (None: every one)."""
    pkgs = ["--all-packages"] if packages is None else [
        f"--package {shlex.quote(p)}" for p in ["prime-rl", *sorted(set(packages) - {"prime-rl"})]]
    return " ".join(["uv sync --locked --no-dev", *pkgs, *(f"--extra {e}" for e in extra)])


def steps(gpus: Iterable[str], packages: Iterable[str] | None = None,
          configured: Iterable[str] = ("auto",)) -> list[str]:
    """The build's shell commands after the apt and pip layers, in order."""
    d = PRIME_RL_DIR
    return [
        HTTPS,
        f"git clone {REPO} {d} && git -C {d} checkout {COMMIT}",
        f"git -C {d} submodule update --init --recursive -- {' '.join(SUBMODULES)}",
        f"cd {d} && {sync_line(extras(gpus, configured), packages)}",
    ]


def label(gpus: Iterable[str], packages: Iterable[str] | None = None,
          configured: Iterable[str] = ("auto",)) -> str:
    pk = "every taskset package" if packages is None else ", ".join(sorted(packages)) or "no taskset package"
    return (f"debian_slim py3.12 + prime-rl@{COMMIT[:12]} (uv sync --locked, extras "
            f"{', '.join(extras(gpus, configured))}; {pk})")


def from_env(environ: Mapping[str, str] | None = None) -> tuple[list[str] | None, list[str]]:
    """The packages (None: unset, every one) and attn values the deploy was given."""
    env = os.environ if environ is None else environ
    raw = env.get(PACKAGES_ENV)
    packages = None if raw is None else [p for p in raw.split(",") if p]
    return packages, [a for a in env.get(ATTN_ENV, "auto").split(",") if a] or ["auto"]


def build(gpus: list[str]) -> tuple[Any, str]:
    """The modal.Image (modal imported here) for these GPU choices and the deploy's packages, and
    its label; both carry the packages so a container's re-import defines the same image."""
    import modal

    packages, configured = from_env()
    carried = {ATTN_ENV: ",".join(configured)}
    if packages is not None:
        carried[PACKAGES_ENV] = ",".join(packages)
    image = (modal.Image.debian_slim(python_version="3.12")
             .apt_install("git", "curl", "build-essential")
             .pip_install(UV, *WHILEAI_DEPS)
             .run_commands(*steps(gpus, packages, configured))
             .env(carried))
    return image, label(gpus, packages, configured)


def deploy_env(docs: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """What the arms' compiled TOMLs need of the image: their taskset packages and attn values."""
    from whileai.catalogs import tasksets as catalog
    from whileai.catalogs.targets import plugin_key

    packages, configured = set(), set()
    for doc in docs:
        attn = ((doc.get("trainer") or {}).get("model") or {}).get("attn", "auto")
        configured.add(str(attn))
        orch = doc.get("orchestrator") or {}
        for src in (x for k in ("train", "eval") for x in (orch.get(k) or {}).get("source") or []):
            tid = ((src.get("env") or {}).get("taskset") or {}).get("id")
            if not isinstance(tid, str):
                continue
            entry = catalog.entry(tid)
            name = entry["package"] if entry else plugin_key(tid)
            if name != "verifiers" and (entry or name in catalog.data().get("not_loadable", {})):
                packages.add(name)  # a pinned workspace member (verifiers' own tasksets need none)
    return {PACKAGES_ENV: ",".join(sorted(packages)), ATTN_ENV: ",".join(sorted(configured or {"auto"}))}


__all__ = ["ATTN_EXTRA", "GPU_SM", "PRIME_RL_DIR", "SUBMODULES", "attns", "auto_attn", "build", "deploy_env",
           "extras", "from_env", "label", "steps", "sync_line"]
