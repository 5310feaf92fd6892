"""TRL's paired arms: any spec file, run here on the CPU on tiny local models (its Launcher,
whileai.targets.run), each arm trained and scored by whileai.targets.trl.eval.

    off = Offline(prompts=4, max_tokens=64, samples=4, holdout=32, lr=5e-4)
    off.check(name, run)                                   # SpecError: cannot run offline
    run, subs = off.apply(name, run, {"student": ..., "teacher": ...})

`apply` replaces what a CPU cannot run as the spec says and records each replacement (a
`Substitution` of results.json): the student and any teacher become the tiny models, the
sizes become the recipe's options, LoRA becomes full weights, W&B is dropped, and overrides
TRL does not know (another target's keys) are dropped. The holdout, the data, the method and
its divergence, anchor, template and seed are kept. Light: no torch.
"""

from __future__ import annotations

from argparse import ArgumentParser, Namespace
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from whileai.errors import SpecError
from whileai.spec.load import replace_run
from whileai.spec.run import RunSpec
from whileai.targets.base import Options
from whileai.targets.run import ArmCall, Metrics, ModalApp, Prepared, positive, read_metrics
from whileai.targets.trl.pin import VERSION
from whileai.targets.trl.teacher import PLACEHOLDER
from whileai.tasksets.builtin import BUILTIN, name_of

if TYPE_CHECKING:
    from whileai.targets.compiled import Compiled

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "TOKENIZERS_PARALLELISM": "false"}
EVAL = "whileai.targets.trl.eval:train_and_evaluate"
TINY_TEACHER_URL = f"http://{PLACEHOLDER}:8001/v1"  # the URL that keeps the teacher in-process
TINY = "tiny random Qwen3 models (whileai.vocab.tiny) warmed up on the train split: a pipeline " \
       "test, not evidence about the methods"
# eval.py scores the checkpoints, the same way for every arm: save a few, evaluate none in TRL
RECIPE_OVERRIDES = {"gradient_checkpointing": False, "logging_steps": 1, "report_to": "none",
                    "save_strategy": "steps", "save_only_model": True, "eval_strategy": "no"}

@dataclass(frozen=True)
class Offline:
    prompts: int = 4
    max_tokens: int = 64
    samples: int = 4
    holdout: int = 32
    lr: float = 5e-4

    def check(self, name: str, run: RunSpec) -> None:
        """Refuse, in one line, a spec whose tasks cannot be had on this machine."""
        if run.data is None and name_of(run.taskset) not in BUILTIN:
            raise SpecError("taskset", run.taskset, "offline arms need tasks on this machine: a "
                            f"built-in taskset ({', '.join(BUILTIN)}) or data = 'tasks.jsonl' in "
                            "the spec", hint=f"arm {name}")

    def apply(self, name: str, run: RunSpec, models: dict[str, str]) -> tuple[RunSpec, list[dict[str, Any]]]:
        subs: list[dict[str, Any]] = []

        def sub(field: str, spec: Any, new: Any, reason: str) -> Any:
            if spec != new:
                subs.append({"arm": name, "field": field, "spec": spec, "run": new, "reason": reason})
            return new

        m = run.method.model_dump(mode="python")
        teacher = m.get("teacher")
        if isinstance(teacher, dict):
            teacher["model"] = sub("method.teacher.model", teacher["model"], models["teacher"],
                                   "the tiny teacher (loaded in-process; its URL is not used)")
            if urlsplit(teacher["url"]).hostname != PLACEHOLDER:  # a served teacher: in-process here
                teacher["url"] = sub("method.teacher.url", teacher["url"], TINY_TEACHER_URL,
                                     "the tiny teacher is loaded in-process (TRL's in-process "
                                     "trainer), not queried at the spec's server")
        elif isinstance(teacher, str):
            m["teacher"] = sub("method.teacher", teacher, models["teacher"], "the tiny teacher")
        if "max_tokens" in m:
            m["max_tokens"] = sub("method.max_tokens", m["max_tokens"], self.max_tokens,
                                  "CPU-sized, and the same for every arm so the holdout is scored alike")
        if m.get("samples", 0) > self.samples:
            floor = 2 if m["type"] == "grpo" else 1  # a GRPO group needs two
            m["samples"] = sub("method.samples", m["samples"], max(self.samples, floor),
                               "CPU-sized (--samples)")
        if "learning_rate" in m:
            m["learning_rate"] = sub("method.learning_rate", m["learning_rate"], self.lr,
                                     "tiny random models need a large step (--lr)")
        overrides = self._overrides(name, run, subs)
        changes = {
            "model": sub("model", run.model, models["student"], TINY),
            "method": m,
            "prompts": sub("prompts", run.prompts, self.prompts, "CPU-sized (--prompts)"),
            "lora": sub("lora", run.lora, False, "full weights: the tiny models are small"),
            "monitor": sub("monitor", run.monitor.model_dump() if run.monitor else None, None,
                           "offline: no W&B"),
            "output_dir": sub("output_dir", run.output_dir, "outputs", "inside the arm's folder"),
            "eval": {"interval": run.eval.interval, "examples": sub(
                "eval.examples", run.eval.examples, self.holdout, "CPU-sized holdout (--holdout)")},
            "overrides": overrides,
        }
        return replace_run(run, **changes), subs

    @staticmethod
    def _overrides(name: str, run: RunSpec, subs: list[dict[str, Any]]) -> dict[str, Any]:
        """The spec's overrides that TRL knows; the others (another target's keys) dropped."""
        from whileai.targets import overrides as ov
        from whileai.targets.trl import catalog as trl_catalog
        from whileai.targets.trl.fieldmap import command_name

        kept: dict[str, Any] = {}
        catalog = trl_catalog.catalog(command_name(run))
        for key, value in run.overrides.items():
            try:
                ov.check_override(catalog, key, value)
                kept[key] = value
            except SpecError as e:
                subs.append({"arm": name, "field": f"overrides.{key}", "spec": value, "run": None,
                             "reason": f"dropped: not a TRL key here ({e.allowed})"})
        return kept


def metric(run: RunSpec, reward: str | None) -> str:
    if reward:
        return f"{reward} (the baseline's reward)"
    ts = BUILTIN[name_of(run.taskset)]
    return f"{ts.name}: {ts.description.split('; ')[-1]}"


def compile_arm(name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
    """A checkpoint every quarter of the steps, each scored afterwards by eval.py."""
    from dataclasses import replace

    from whileai.targets.trl.compile import compile
    from whileai.targets.trl.stages import compile_stages

    interval = max(1, run.steps // 4)
    forced = RECIPE_OVERRIDES | {"save_steps": interval}
    for k, v in forced.items():
        if k in run.overrides and run.overrides[k] != v and subs is not None:
            subs.append({"arm": name, "field": f"overrides.{k}", "spec": run.overrides[k], "run": v,
                         "reason": "the recipe saves checkpoints and trl_eval scores them"})
    run = replace_run(run, eval={"interval": interval, "examples": run.eval.examples},
                      overrides=dict(run.overrides) | forced)
    c = compile(run, cpu=True, out=None) if run.then is None else compile_stages(run, None, True)
    # eval_strategy 'no' is the recipe's: eval.py scores the holdout instead, so eval-never-runs
    # (no holdout score) is met here and said as a note
    return replace(c, warnings=tuple(w for w in c.warnings if w.rule != "eval-never-runs"),
                   notes=(*c.notes, "eval-never-runs is met: the recipe turns TRL's own evaluation off "
                          f"and whileai.targets.trl.eval scores the base model, every checkpoint (each "
                          f"{interval} steps) and the final model on data/test.jsonl"))


def needs_extras(validate: bool) -> None:
    """Training needs the trl extra (and the results extra for results.json and the plot);
    --validate needs TRL's own parser: one line before anything is written or built, not a
    traceback afterwards. --dry-run and --collect need neither."""
    from importlib.util import find_spec

    from whileai.errors import raw

    need = {"trl": ("torch", "transformers", "trl")}
    if not validate:
        need["results"] = ("numpy", "scipy", "matplotlib")
    gone = {extra: [m for m in mods if find_spec(m) is None] for extra, mods in need.items()}
    gone = {extra: mods for extra, mods in gone.items() if mods}
    if gone:
        what = ", ".join(m for mods in gone.values() for m in mods)
        raise SpecError("--validate" if validate else "training", raw(f"{what} not installed"),
                        f"pip install -e '.[{','.join(gone)}]' in a clone of whileai "
                        "(--dry-run needs neither)")


def validate_dirs(dirs: Mapping[str, Path], paths: list[str]) -> int:
    """TRL's own parser on every arm's folder (the reward modules import from the spec folders)."""
    import sys

    from whileai.targets.trl.check import check_dir

    sys.path[:0] = paths
    bad = 0
    for name, folder in dirs.items():
        problems = check_dir(folder)
        bad += bool(problems)
        print(f"{name}: {'REJECTED' if problems else 'ok'} (TRL's parser, unknown keys rejected)")
        for p in problems:
            print(f"  {p}", file=sys.stderr)
    return 1 if bad else 0


class TRLLauncher:
    """TRL's arms here, on the CPU, on tiny local models: each arm folder is what `whileai compile
    --backend trl --cpu` writes; eval.py runs its command and scores the checkpoints."""

    revision = VERSION
    tag = "trl-tiny"
    steps: int | None = 40
    options = Options(cpu=True)
    app: ModalApp | None = None
    tiny = True
    validates = "write the run dirs, check each with TRL's own parser (unknown keys rejected)"
    preflight = "launch without `whileai preflight`'s checks of models, memory and disk"
    env = OFFLINE

    def add_options(self, ap: ArgumentParser) -> None:
        ap.add_argument("--prompts", type=positive, default=4, help="prompts per step")
        ap.add_argument("--max-tokens", type=positive, default=64, help="completion tokens (and eval tokens)")
        ap.add_argument("--samples", type=positive, default=4, help="cap on completions per prompt")
        ap.add_argument("--holdout", type=positive, default=32, help="holdout tasks scored per evaluation")
        ap.add_argument("--lr", type=float, default=5e-4, help="learning rate of every arm")

    def require(self, validate: bool) -> None:
        needs_extras(validate)

    def prepare(self, arms: Mapping[str, RunSpec], baseline: str, paths: list[str],
                models: Callable[[RunSpec], dict[str, str]], a: Namespace) -> Prepared:
        """Any spec on the tiny models, sized for a CPU; every replacement recorded."""
        off = Offline(prompts=a.prompts, max_tokens=a.max_tokens, samples=a.samples,
                      holdout=a.holdout, lr=a.lr)
        for n, r in arms.items():
            off.check(n, r)
        base = arms[baseline]
        if base.data is not None and base.reward is None:
            raise SpecError("reward", None, "a 'module.function' in the baseline spec: arms on your "
                            "own data are scored on its holdout with the baseline's reward",
                            hint=f"baseline {baseline}")
        folders = models(base)
        runs: dict[str, RunSpec] = {}
        subs: list[dict[str, Any]] = []
        for n, r in arms.items():
            runs[n], s = off.apply(n, r, folders)
            subs += s
        meta = {"models": TINY, "learning_rate": a.lr, "device": "cpu", "substitutions": subs,
                "models_dir": str(Path(folders["student"]).parent)}
        return Prepared(runs=runs, subs=subs, meta=meta, paths=paths, reward=base.reward)

    def compile(self, name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
        return compile_arm(name, run, subs)

    def meta(self, base: RunSpec, prep: Prepared) -> dict[str, Any]:
        held = f"{base.taskset} holdout" if base.data is None else f"{Path(base.data).name} test split"
        return {"holdout": f"{held} ({base.eval.examples} tasks)", "metric": metric(base, prep.reward)}

    def files(self, c: Compiled, name: str, baseline: RunSpec) -> dict[str, str]:
        return {}

    def call(self, c: Compiled, prep: Prepared) -> ArmCall | None:
        """eval.py: the arm's commands in order, as one shell line (SFT: the teacher samples,
        then trl sft trains), then its holdout scored."""
        return ArmCall(EVAL, {"command": " && ".join(c.commands), "taskset": c.run.taskset,
                           "reward": prep.reward})

    def validate(self, dirs: Mapping[str, Path], compiled: Mapping[str, Compiled],
                 prep: Prepared) -> int:
        return validate_dirs(dirs, prep.paths)

    def read_metrics(self, work: Path) -> Metrics:
        """The record eval.py returned, which the local runner wrote into the arm's folder (TRL's
        logs hold no holdout score: eval.py scores every checkpoint itself)."""
        return read_metrics(work / "metrics.json")


LAUNCHER = TRLLauncher()
