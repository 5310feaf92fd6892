"""The prime-rl environment a rehearsal runs in: found, never built by whileai.

A rehearsal runs prime-rl's own `rl`, orchestrator and env servers, so it needs a Python 3.12
with prime-rl at the pin installed the way prime-rl documents (`uv sync` in its checkout).
whileai does not build that environment: it finds it, adds only its own pieces (the import-only
`flash_attn` stand-in), and checks that every import the launcher, orchestrator, env servers and
the trainer stand-in need resolves on this CPU, naming what is missing.

    python = find_python(flag)            # --python, $WHILEAI_REHEARSE_PYTHON, ./.venv of a checkout
    lines, ok = setup(Path("prime-rl"))   # --setup DIR: the checkout or the environment itself
    lines, ok = setup(Path("prime-rl"), tasksets={"gsm8k": "gsm8k"})  # and a spec's tasksets

`--setup` also says which prime-rl and verifiers commits the environment holds (the git checkout
each is imported from) against the pin (prime-rl 559b447, its verifiers submodule a60a606), and,
given a spec, whether each taskset it trains or evaluates on imports: verifiers' example
environments are opt-in workspace members of prime-rl, which a plain `uv sync` does not install.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from whileai.errors import SpecError
from whileai.targets.prime_rl.pin import COMMIT, HARNESS_DAY

ENV_VAR = "WHILEAI_REHEARSE_PYTHON"
# what the launcher, the orchestrator, the env servers and the trainer stand-in import
MODULES = (
    "prime_rl.entrypoints.rl",
    "prime_rl.orchestrator.orchestrator",
    "prime_rl.entrypoints.env_server",
    "prime_rl.configs.trainer",
    "prime_rl.trainer.rl.data",
    "prime_rl.transports.rollouts",
    # imported inside prime_rl/utils/client.py:484 prefill_logprobs, at a teacher's first call:
    # vllm without its dependencies passes every module-level import and fails here
    "vllm.entrypoints.scale_out.token_in_token_out.protocol",
    "verifiers.v1",
    "renderers",
    "tokenizers",
    "transformers",
    "torch",
    "zmq",
)
COMMANDS = ("rl", "orchestrator", "env-server", "uv")  # on the environment's bin/, by bare name
FLASH = "flash_attn"
PINS = {"prime_rl": COMMIT,  # whileai.targets.prime_rl.pin
        "verifiers": "a60a606ecc4d309247edf9ff92c3eabca362781f"}  # deps/verifiers at that commit
FILES = ("__init__.py", "flash_attn_interface.py", "bert_padding.py")
# The pinned commit's day (whileai.targets.prime_rl.pin.HARNESS_DAY): verifiers runs every harness
# as a PEP 723 uv script (verifiers/v1/runtimes/base.py:237-290, `uv sync --script ... --no-config`)
# whose dependencies are unpinned (harnesses/null/program.py: openai, httpx), so uv resolves the
# newest releases on the day of the run unless UV_EXCLUDE_NEWER holds them to a date. whileai's
# compiled files set it in [orchestrator.env_vars] (rl hands it to the orchestrator and its env
# servers); exported before `uv run rl` it would also reach uv itself, which then re-locks prime-rl.
EXCLUDE_NEWER = HARNESS_DAY


def harness_line(environ: dict[str, str] | None = None, held: str | None = None) -> str:
    """Whether the harness scripts' dependencies are held to the pin's day (UV_EXCLUDE_NEWER):
    `held`, the value every file of the spec sets in [orchestrator.env_vars] (held_day), else
    the shell's."""
    if held:
        return (f"ok: the spec's files set UV_EXCLUDE_NEWER = {held} in [orchestrator.env_vars]: the "
                "harness scripts' dependencies resolve as of that day, in the rehearsal and the run")
    value = (os.environ if environ is None else environ).get("UV_EXCLUDE_NEWER")
    if value:
        return f"ok: UV_EXCLUDE_NEWER={value}: the harness scripts' dependencies resolve as of that day"
    return ("warning: UV_EXCLUDE_NEWER is unset here: verifiers' harness (a uv script with unpinned openai "
            "and httpx) resolves them to today's releases (openai 3.63 on httpx2 failed every rollout "
            "at the pin with `TypeError: Invalid timeout ... got <class 'httpx.Timeout'>`, measured "
            "2026-12-05). whileai's compiled files hold them to the pin's day ([orchestrator.env_vars] "
            f"UV_EXCLUDE_NEWER = \"{EXCLUDE_NEWER}\"); for a hand-written TOML set that table, or "
            f"export UV_EXCLUDE_NEWER={EXCLUDE_NEWER} for the rehearsal only (before `uv run rl` it "
            "makes uv re-lock prime-rl)")


def _python_in(folder: Path) -> Path | None:
    for cand in (folder / "bin" / "python", folder / ".venv" / "bin" / "python"):
        if cand.exists():
            return cand
    return None


def find_python(flag: str | None = None, *, cwd: Path | None = None) -> Path:
    """The rehearsal environment's Python: --python (a python, a venv or a prime-rl checkout),
    else $WHILEAI_REHEARSE_PYTHON, else ./.venv of a prime-rl checkout here."""
    for where, value in (("--python", flag), (ENV_VAR, os.environ.get(ENV_VAR))):
        if not value:
            continue
        p = Path(value).expanduser()
        found = p if p.is_file() else _python_in(p)
        if found is None:
            raise SpecError(
                where,
                value,
                "a Python 3.12 with prime-rl installed, its venv folder, or a "
                "prime-rl checkout with .venv (uv sync there)",
            )
        return found
    here = cwd or Path.cwd()
    if (here / "src" / "prime_rl").is_dir() and (found := _python_in(here)) is not None:
        return found
    raise SpecError(
        "--python",
        None,
        f"a prime-rl environment: pass --python PATH or set {ENV_VAR} "
        "(a prime-rl checkout after `uv sync`, then `whileai rehearse --setup DIR` once)",
    )


def bin_dir(python: Path) -> Path:
    """The environment's bin/ (where `rl`, `orchestrator`, `env-server` and `uv` live); the
    interpreter is not resolved (a venv's python is a link to the base one)."""
    return python.parent


def runnable(python: Path, where: str = "--python") -> Path:
    """`python` if its environment can start a rehearsal, checked before any folder or model is
    made, cheapest first: the commands the launcher starts by name on its bin/, then a Python
    3.12. Else one line (SpecError) naming what is missing and `--setup`, which checks the rest."""
    setup_line = "`whileai rehearse --setup DIR` checks and prepares one"
    lacking = [c for c in COMMANDS if not (bin_dir(python) / c).exists()]
    if lacking:
        raise SpecError(where, str(python), "a Python with prime-rl installed (a prime-rl checkout after "
                        f"`uv sync`, or its venv); {setup_line}",
                        hint=f"{bin_dir(python)} has no {', '.join(lacking)}")
    version = str(probe(python, ("sys",), timeout=60.0)["version"])
    if not version.startswith("3.12"):
        raise SpecError(where, str(python),
                        f"a Python 3.12 environment (prime-rl requires ~=3.12); {setup_line}",
                        hint=f"found Python {version}")
    return python


PROBE = r"""
import importlib, json, sys, sysconfig
out = {"version": sys.version.split()[0], "site": sysconfig.get_paths()["purelib"], "missing": {},
       "files": {}}
for name in sys.argv[1:]:
    try:
        m = importlib.import_module(name)
        out["files"][name] = getattr(m, "__file__", None) or next(iter(getattr(m, "__path__", [])), None)
    except BaseException as e:  # noqa: BLE001
        out["missing"][name] = f"{type(e).__name__}: {e}"[:300]
print(json.dumps(out))
"""


def probe(python: Path, modules: tuple[str, ...] = MODULES, timeout: float = 300.0) -> dict[str, object]:
    """Import each module in the environment's Python, on the CPU; what failed and why."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    try:
        r = subprocess.run(
            [str(python), "-c", PROBE, *modules], capture_output=True, text=True, timeout=timeout, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SpecError("--python", str(python), "a Python that starts", hint=str(e)) from None
    if r.returncode != 0 or not r.stdout.strip():
        raise SpecError(
            "--python",
            str(python),
            "a Python that starts",
            hint=(r.stderr.strip().splitlines() or ["no output"])[-1],
        )
    found: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return found


def install_flash_stub(site: Path) -> list[str]:
    """Write the import-only flash_attn stand-in (with dist-info) into site-packages, unless a
    real flash_attn is there. Returns what it wrote."""
    pkg = site / FLASH
    if pkg.exists() and not (pkg / "WHILEAI_STANDIN").exists():
        return []
    from whileai.files.atomic import atomic_write as write_text
    from whileai.targets.prime_rl.rehearse.standins import flash_attn_stub

    text = Path(flash_attn_stub.__file__).read_text()
    pkg.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        write_text(pkg / name, text)
    write_text(pkg / "WHILEAI_STANDIN", "written by whileai rehearse --setup: import-only\n")
    info = site / "flash_attn-2.8.3.dist-info"
    info.mkdir(exist_ok=True)
    write_text(
        info / "METADATA",
        "Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.8.3\n"
        "Summary: whileai rehearse's import-only stand-in (no kernels)\n",
    )
    write_text(info / "INSTALLER", "whileai\n")
    write_text(info / "top_level.txt", f"{FLASH}\n")  # transformers maps the module to it
    write_text(info / "RECORD", "".join(f"{FLASH}/{n},,\n" for n in FILES))
    return [str(pkg), str(info)]


def commits(files: dict[str, str | None]) -> list[str]:
    """What prime-rl and verifiers the environment imports, against the pin: the commit of the
    git checkout each module's file is in (an editable install), else that it is unknown."""
    lines = []
    for name, pin in PINS.items():
        where = files.get(name)
        head = None
        if where:
            # a namespace package (prime_rl has no __init__.py) gives its folder
            folder = Path(where) if Path(where).is_dir() else Path(where).parent
            r = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"],
                               capture_output=True, text=True, timeout=30)
            head = r.stdout.strip() if r.returncode == 0 else None
        if head is None:
            lines.append(f"warning: {name}: no git checkout behind {where or 'it'}: its commit is "
                         f"unknown; rehearsals are for {pin[:7]}")
        elif head != pin:
            lines.append(f"warning: {name} is at {head[:7]}, not the pin {pin[:7]}: a rehearsal "
                         "checks the run against this other release, not the one whileai writes for")
        else:
            lines.append(f"ok: {name} at the pin {pin[:7]}")
    return lines


def held_day(texts: list[str]) -> str | None:
    """The UV_EXCLUDE_NEWER every one of these prime-rl TOMLs sets in [orchestrator.env_vars]
    (whileai's compiled files do), or None."""
    from whileai.spec.load import loads_toml

    days = {str(((loads_toml(t, where="the compiled file").get("orchestrator") or {}).get("env_vars")
                 or {}).get("UV_EXCLUDE_NEWER") or "") for t in texts}
    return (days.pop() or None) if len(days) == 1 else None


def taskset_modules(texts: list[str]) -> dict[str, str]:
    """The tasksets prime-rl TOMLs train and evaluate on: module name -> taskset id."""
    from whileai.catalogs.targets import plugin_key
    from whileai.spec.load import loads_toml

    out: dict[str, str] = {}
    for text in texts:
        o = loads_toml(text, where="the compiled file").get("orchestrator") or {}
        for split in ("train", "eval"):
            srcs = (o.get(split) or {}).get("source") or []
            for s in srcs if isinstance(srcs, list) else [srcs]:
                tid = ((s.get("env") or {}).get("taskset") or {}).get("id") if isinstance(s, dict) else None
                if isinstance(tid, str):
                    out[plugin_key(tid).replace("-", "_")] = tid
    return out


def setup(target: Path, *, python_flag: str | None = None, tasksets: dict[str, str] | None = None,
          held: str | None = None) -> tuple[list[str], bool]:
    """`--setup DIR`: find the environment in DIR (a prime-rl checkout's .venv or the venv
    itself), add whileai's own pieces, check every import and command (and each of `tasksets`,
    module -> taskset id, a spec needs), say its prime-rl and verifiers commits. Lines to print,
    and whether the environment can rehearse."""
    if python_flag is None and not (target.is_file() or _python_in(target)):
        raise SpecError("--setup", str(target), "a prime-rl checkout with .venv (after `uv sync` there), its "
                        "venv folder, or its python")
    python = find_python(python_flag or str(target))
    lines = [f"environment: {python}"]
    first = probe(python, ("sys",))
    if not str(first["version"]).startswith("3.12"):
        raise SpecError(
            "--setup",
            str(target),
            "a Python 3.12 environment (prime-rl requires ~=3.12)",
            hint=f"found Python {first['version']}",
        )
    site = Path(str(first["site"]))
    wrote = install_flash_stub(site)
    lines += [f"wrote {w}" for w in wrote] or ["flash_attn: present (left as it is)"]
    report = probe(python, (*MODULES, *PINS, *(tasksets or {})))  # PINS: the packages, for their checkouts
    missing = dict(report["missing"])  # type: ignore[call-overload]
    lines += commits(dict(report["files"]))  # type: ignore[call-overload]
    lines.append(harness_line(held=held))
    for module, tid in (tasksets or {}).items():
        if module in missing:
            missing[f"taskset {tid}"] = (
                f"{missing.pop(module)}: verifiers' example environments are opt-in workspace "
                "members: `uv sync --all-packages` in the prime-rl checkout, or `uv pip install "
                f"--python {python} -e deps/verifiers/environments/{module}` there")
    for cmd in COMMANDS:
        if not (bin_dir(python) / cmd).exists():
            missing[f"command {cmd}"] = f"not in {bin_dir(python)} (the launcher starts it by name; " + (
                "verifiers runs its harness as a uv script: `pip install uv` there)"
                if cmd == "uv"
                else "install prime-rl into this environment)"
            )
    for name, why in missing.items():
        lines.append(f"missing: {name}: {why}")
    if not missing:
        n = len(tasksets or {})
        lines.append(
            f"ok: {len(MODULES)} imports, {n} taskset{'' if n == 1 else 's'} and {len(COMMANDS)} "
            "commands resolve on the CPU; "
            f"rehearse with --python {python} or {ENV_VAR}={python}"
        )
    return lines, not missing

