"""verl's own check of a run.sh: each verl command's Hydra config composed and checked by verl 0.9.1.

What each command's process does before it touches a GPU, run here with verl's own code:

- `main_ppo`: Hydra composes `ppo_trainer` (or `--config-name`) from the installed verl's
  trainer/config with the command's overrides; `validate_config` runs as main_ppo.py:177 runs it
  (it builds the actor's and, for GAE, the critic's config dataclasses); the config resolves
  (main_ppo.py:144); then the worker dataclasses that need no weights are built as the workers
  build them: algorithm, rollout (engine_workers.py:651), distillation when enabled
  (trainer_base.py:360) and the reference policy when one is used (engine_workers.py:544-553).
  Not built: the model's (it reads the tokenizer from the hub) and the reward manager's
  (`RewardManagerConfig` cannot be built directly on 0.9.1: reward.py:52 calls a missing
  `__post_init__`).
- `main_generation_server`: `ppo_trainer` composed and resolved, then what its main() checks and
  reads before its servers start and after they finish (main_generation_server.py:126-186:
  temperature 0 needs n = 1, n >= 1, the rollout config, `data.output_path`).
- `sft_trainer`: `sft_trainer_engine` composed; the engine, optimizer, checkpoint and profiler
  dataclasses built and the profiler interval checked as `SFTTrainer._build_config` does
  (sft_trainer.py:138-157); the model's config is not built (it reads the hub).

verl is imported only inside `check_overrides`, so whileai imports none of it. Without verl the
faces say how to get it (`pip install 'whileai[verl]'`); they never report a run as checked.
`scripts/verl_check.py` runs the same functions in a Python that has verl.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whileai.targets.verl.novllm import without_vllm
from whileai.targets.verl.pin import VERSION as PIN
from whileai.targets.verl.runsh import Command, mentions_verl, parse

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled

SETUP = "pip install 'whileai[verl]'"  # docs/verl.md: "verl's own check"
NEEDS = (f"verl's own check needs verl=={PIN}: {SETUP} (or run scripts/verl_check.py with a "
         "Python that has it: see docs/verl.md)")
CONFIGS = {"main_ppo": "ppo_trainer", "main_generation_server": "ppo_trainer",
           "sft_trainer": "sft_trainer_engine"}


@dataclass(frozen=True)
class CommandVerdict:
    """verl's verdict on one command: accepted, or refused at `step` with verl's first line."""

    kind: str
    accepted: bool
    step: str  # the last step run: "compose", "validate_config", "resolve", "rollout", ...
    error: str  # "" when accepted; else the exception's type and its first line
    seconds: float  # composing and checking (verl's import not counted)
    line: int = 0  # where the command starts in its run.sh
    # the teachers verl resolved (distillation step): routing key -> model path; several: each keyed
    teachers: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def available() -> bool:
    """Whether this Python can import verl (the check runs in-process). A folder called verl on
    the path (tests/targets/verl under pytest) is a namespace package, not verl: no origin."""
    spec = importlib.util.find_spec("verl")
    return spec is not None and spec.origin not in (None, "namespace")


def installed_version() -> str:
    import verl

    return str(getattr(verl, "__version__", "unknown"))


def check_command(cmd: Command) -> CommandVerdict:
    """verl's own check of one parsed command of a run.sh."""
    if cmd.kind not in CONFIGS:
        return CommandVerdict(cmd.kind, False, "module", f"verl.{cmd.kind}: whileai checks "
                       f"{', '.join(CONFIGS)}", 0.0, cmd.line)
    path = cmd.option("--config-path")
    if path not in (None, "config"):
        return CommandVerdict(cmd.kind, False, "compose", f"--config-path={path}: only verl's own "
                       "trainer/config is checked", 0.0, cmd.line)
    name = cmd.option("--config-name")
    v = check_overrides(cmd.kind, cmd.overrides, name.removesuffix(".yaml") if name else None)
    return CommandVerdict(v.kind, v.accepted, v.step, v.error, v.seconds, cmd.line, v.teachers)


def check_overrides(kind: str, overrides: Sequence[str], config_name: str | None = None) -> CommandVerdict:
    """Compose `kind`'s config with `overrides` and run verl's own checks; needs verl."""
    steps = {"main_ppo": _main_ppo, "main_generation_server": _generation,
             "sft_trainer": _sft}[kind]
    done = ["compose"]
    start = time.perf_counter()
    teachers: dict[str, str] = {}
    with _quiet(), without_vllm():
        try:
            cfg = compose(kind, overrides, config_name)
            for step, run in steps(cfg):
                done.append(step)
                got = run()
                if step == "distillation":  # the entries verl keeps, by the key rows route on
                    teachers = {k: str(t.model_path) for k, t in got.teacher_models.items()}  # type: ignore[attr-defined]
        except Exception as e:  # verl's verdict, whatever it raises
            return CommandVerdict(kind, False, done[-1], _first_line(e), time.perf_counter() - start)
    return CommandVerdict(kind, True, done[-1], "", time.perf_counter() - start, teachers=teachers)


def compose(kind: str, overrides: Sequence[str], config_name: str | None = None) -> Any:
    """`kind`'s config composed by Hydra from the installed verl's trainer/config with `overrides`,
    as the command's own `@hydra.main` composes it (the rehearsal's steps start from it); needs verl."""
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name=config_name or CONFIGS[kind], overrides=list(overrides))


Steps = Iterator[tuple[str, Callable[[], object]]]


def _main_ppo(cfg: Any) -> Steps:
    from omegaconf import OmegaConf, open_dict
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    yield "validate_config", lambda: validate_config(
        config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    yield "resolve", lambda: OmegaConf.to_container(cfg, resolve=True)
    arr = cfg.actor_rollout_ref
    yield "algorithm", lambda: omega_conf_to_dataclass(cfg.algorithm)
    yield "rollout", lambda: omega_conf_to_dataclass(arr.rollout)
    if cfg.get("distillation") is not None and cfg.distillation.get("enabled", False):
        yield "distillation", lambda: omega_conf_to_dataclass(cfg.distillation)
    if need_reference_policy(cfg):
        def ref() -> object:  # engine_workers.py:544-553: the ref's keys renamed as the actor's
            ref = copy.deepcopy(cfg).actor_rollout_ref.ref  # a copy that keeps its root
            with open_dict(ref):
                ref.ppo_mini_batch_size = arr.actor.ppo_mini_batch_size
                ref.ppo_micro_batch_size = ref.pop("log_prob_micro_batch_size", None)
                ref.ppo_micro_batch_size_per_gpu = ref.pop("log_prob_micro_batch_size_per_gpu", None)
                ref.use_dynamic_bsz = ref.pop("log_prob_use_dynamic_bsz", False)
                ref.ppo_max_token_len_per_gpu = ref.pop("log_prob_max_token_len_per_gpu", None)
            return omega_conf_to_dataclass(ref)

        yield "ref", ref


def _generation(cfg: Any) -> Steps:
    from omegaconf import OmegaConf
    from verl.utils.config import omega_conf_to_dataclass

    yield "resolve", lambda: OmegaConf.resolve(cfg)
    rollout = cfg.actor_rollout_ref.rollout

    def sampling() -> None:  # main_generation_server.py:130-133, verbatim
        n_samples = rollout.n
        if rollout.temperature == 0.0:
            assert n_samples == 1, "When temperature=0, n_samples must be 1."
        assert n_samples >= 1, "n_samples should always >= 1"

    yield "sampling", sampling
    yield "rollout", lambda: omega_conf_to_dataclass(rollout)
    # the keys main() reads (the last one only after every sample is generated)
    yield "keys", lambda: (rollout.top_p, rollout.response_length, cfg.data.train_files,
                           cfg.data.prompt_key, cfg.actor_rollout_ref.model.path, cfg.data.output_path)


def _sft(cfg: Any) -> Steps:
    from verl.utils.config import omega_conf_to_dataclass

    def build(section: str) -> Callable[[], object]:
        return lambda: omega_conf_to_dataclass(cfg[section])

    for section in ("engine", "optim", "checkpoint", "profiler"):
        yield section, build(section)

    def interval() -> None:
        from types import SimpleNamespace

        from verl.trainer.sft_trainer import SFTTrainer

        SFTTrainer._validate_profiler_interval(  # type: ignore[arg-type]
            SimpleNamespace(profiler_interval=cfg.trainer.profile_interval))

    yield "profile_interval", interval


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """verl prints and warns as it checks; the verdict is what counts."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)  # verl's loggers hold the real stderr
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def _first_line(e: BaseException) -> str:
    """The exception's first line; Hydra's "Error in call to target 'X':" with the line that says why."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    first = lines[0] + (f" {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else "")
    return f"{type(e).__name__}: {first}"


# -- what the target's faces call -------------------------------------------------------------


def claims(path: Path) -> bool:
    """A run.sh (or a directory holding one) with a verl command."""
    script = path / "run.sh" if path.is_dir() else path
    if script.suffix != ".sh" or not script.is_file():
        return False
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return mentions_verl(script.read_text())
    return False


def check_script(text: str, where: str, env: dict[str, str] | None = None,
                 base: Path | None = None) -> list[tuple[str, str]]:
    """("ok" | "warning" | "error", line) for each verl command of a run.sh's text: verl's own
    check, then whileai's rules where verl is lax (data files read under `base` when given)."""
    from whileai.targets.verl.lax import script_lines as lines

    commands = parse(text, env)
    if not commands:
        return [("error", f"{where}: no verl command (python3 -m verl.trainer.main_ppo ...)")]
    if not available():
        return [("error", f"{where}: not checked by verl: {NEEDS}"), *lines(text, where, env, base)]
    out: list[tuple[str, str]] = []
    if installed_version() != PIN:
        out.append(("error", f"{where}: verl {installed_version()} is installed; this check is "
                             f"for verl {PIN}"))
    for cmd in commands:
        at = f"{where}:{cmd.line}: {cmd.kind}"
        out += [("warning", f"{at}: {u} is not set in the script or the environment: kept as "
                            "written") for u in cmd.unknown]
        v = check_command(cmd)
        keyed = ("; teachers by data_source: " + ", ".join(f"{k} -> {m}" for k, m in v.teachers.items())
                 if len(v.teachers) > 1 else "")
        out.append(("ok", f"{at}: verl {PIN} accepts it ({_checked(v)}{keyed}; {v.seconds:.1f} s)")
                   if v.accepted else ("error", f"{at}: verl {PIN} refuses it at {v.step}: {v.error}"))
    return out + lines(text, where, env, base)


def check(path: Path, entry: str) -> list[tuple[str, str]]:
    """`whileai check run.sh` (or the run directory): verl's own check of each command, then
    whileai's own rules (data files relative to the script's folder)."""
    if entry != "auto":
        return [("error", f"--entry {entry}: a verl run.sh says its commands itself; use auto")]
    script = path / "run.sh" if path.is_dir() else path
    try:
        text = script.read_text()
    except (OSError, UnicodeDecodeError) as e:
        return [("error", f"{script}: cannot read it: {type(e).__name__}")]
    env = {**os.environ, "PWD": str(script.resolve().parent)}
    return check_script(text, str(script), env, script.resolve().parent)


def verify(compiled: list[Compiled]) -> list[tuple[bool, str]]:
    """`compile --check`: verl's own check of each compiled run.sh; stops at the first failure.
    Without verl, a SpecError says how to get it (nothing is reported as checked)."""
    from whileai.errors import SpecError, raw

    if not available():
        raise SpecError("--check", raw("verl is not installed"), NEEDS)
    out: list[tuple[bool, str]] = []
    for c in [s for r in compiled for s in (r.stages or (r,))]:
        name = next((n for n in c.files if Path(n).name == "run.sh"), None)
        if name is None:
            continue
        where = str(Path(c.out).parent / name) if c.out else f"{name} (not written)"
        env = {"PWD": str(Path(c.out).parent) if c.out else "."}  # run.sh cds to its folder
        for level, line in check_script(c.files[name], where, env):
            if level == "error":
                return out + [(False, line)]
            out.append((True, f"checked: {line}" if level == "ok" else f"warning: {line}"))
    if compiled and not out:  # verify([]) is compile --check asking whether it can check here
        raise SpecError("--check", raw("no run.sh"), "a compiled verl run with a run.sh")
    return out


def _checked(v: CommandVerdict) -> str:
    return {"main_ppo": "Hydra compose, validate_config, the worker configs",
            "main_generation_server": "Hydra compose, its main()'s checks, the rollout config",
            "sft_trainer": "Hydra compose, the engine, optimizer and checkpoint configs"}[v.kind]
