"""A toy target, in the test tree only: a spec compiled to a one-line JSON file.

It is what docs/layout.md ("Adding a target") asks of a new target, in one module: a name, a pin,
a shape, a pure compile built from a field map (every spec field read or ignored with a reason),
a check, the machine it needs and what preflight probes (nothing). Registered at run time
(whileai.targets.registry.register), with no change to any file of whileai.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai.rules.base import Rule
from whileai.spec.endpoint import Endpoint
from whileai.spec.fields import spec_fields
from whileai.spec.run import RunSpec
from whileai.targets.base import Machine, Options, Shape
from whileai.targets.compiled import Compiled
from whileai.targets.fieldmap import Drop, Row, To, apply
from whileai.targets.probe import Probe
from whileai.targets.run import AsWritten, Metrics, ModalApp, Prepared

READ = {"model": "model", "steps": "steps", "prompts": "batch.prompts", "method.type": "method",
        "method.samples": "batch.samples"}


def rows(run: RunSpec) -> list[Row]:
    """Five fields read; every other leaf of the run's spec models ignored, with why."""
    out: list[Row] = [To(field, path) for field, path in READ.items()]
    for field in spec_fields(type(run)):
        if field in ("method", "method.type"):
            continue
        if field not in READ:
            out.append(Drop(field, "the toy target writes five keys only"))
    for field in spec_fields(type(run.method)):
        if f"method.{field}" not in READ:
            out.append(Drop(f"method.{field}", "the toy target writes five keys only"))
    return out


# the toy trainer's micro-batch: a step's rollouts (prompts x samples) must split into whole ones,
# the kind of refusal a real target's own check makes (TRL: generation_batch_size divisible by
# num_generations, trl/trainer/grpo_config.py:1131; verl: its batch sizes by its GPUs)
MICRO = 8


def refusal(doc: dict[str, Any]) -> str | None:
    """Why the toy's trainer would refuse this file, or None."""
    batch = doc.get("batch")
    if not isinstance(batch, dict):
        return None
    rollouts = batch.get("prompts", 0) * batch.get("samples", 1)
    if rollouts % MICRO:
        return (f"batch.prompts x batch.samples = {rollouts} rollouts per step, not a multiple of "
                f"the toy trainer's micro-batch of {MICRO}")
    return None


# the toy target's own warning rule: listed by `whileai rules` after the shared ones while registered
RULES = [Rule("toy-long-run", "a toy run of more than 1000 steps", "tests/targets/toy.py",
              lambda run, facts: "the toy target trains nothing for long" if run.steps > 1000 else None)]
class ToyLauncher(AsWritten):
    """Paired arms of the toy: planned, dry-run and validated by the shared recipe
    (whileai.cli.recipe.main("toy")); each arm's command is the compiled one, run here."""

    revision = "0.0.1"
    tag = "toy"
    steps: int | None = None
    options = Options()
    app: ModalApp | None = None
    tiny = False
    validates = "the toy's own check: each arm's file is one line of JSON"
    preflight = ""
    env: dict[str, str] = {}

    def compile(self, name: str, run: RunSpec, subs: list[dict[str, Any]] | None) -> Compiled:
        return TARGET.compile(run, name=f"{name.split('@')[0]}.json", out=None, options=Options())

    def meta(self, base: RunSpec, prep: Prepared) -> dict[str, Any]:
        return {"holdout": f"{base.taskset} ({base.eval.examples} tasks)", "metric": "none: a toy"}

    def validate(self, dirs: Mapping[str, Path], compiled: Mapping[str, Compiled],
                 prep: Prepared) -> int:
        bad = 0
        for name, folder in dirs.items():
            for level, line in TARGET.check(folder / compiled[name].main, "auto"):
                bad += level == "error"
                print(f"{name}: {level}: {line}")
        return 1 if bad else 0

    def read_metrics(self, work: Path) -> Metrics:
        return Metrics()  # the toy trains nothing and logs nothing


class Toy:
    name = "toy"
    pin = "toy 0.0.1"
    shape = Shape(".json", "the toy target writes JSON")
    options: dict[str, str] = {}
    refuses = {"cpu": "the toy target has no trainer"}
    rehearsal = None  # `whileai rehearse -t toy`: not rehearsable, in one line
    migration = None  # `whileai migrate -t toy`: nothing to migrate, in one line
    launcher = ToyLauncher()  # paired arms through the one recipe (whileai.cli.recipe.main("toy"))

    def compile(self, run: RunSpec, *, name: str, out: str | None, options: Options) -> Compiled:
        applied = apply(rows(run), run)
        text = json.dumps(applied.doc, sort_keys=True) + "\n"
        return Compiled(target=self.name, pin=self.pin, run=run, files={name: text}, main=name,
                        reads=tuple(applied.reads), ignores=tuple(applied.ignores),
                        fixed=tuple(applied.fixed), warnings=(), commands=(f"toy-train {name}",))

    def verify(self, compiled: list[Compiled]) -> list[tuple[bool, str]]:
        out: list[tuple[bool, str]] = []
        for c in compiled:
            why = refusal(json.loads(c.text))
            if why:  # ends at the first failure, as every target's check does
                return out + [(False, f"{c.label}: {why}")]
            out.append((True, f"checked: {c.label} is one line of JSON"))
        return out

    def claims(self, path: Path) -> bool:
        return path.suffix == ".json"

    def check(self, path: Path, entry: str) -> list[tuple[str, str]]:
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) != 1 or not json.loads(lines[0]):
            return [("error", f"{path}: not one line of JSON")]
        why = refusal(json.loads(lines[0]))
        return [("error", f"{path}: {why}")] if why else [("ok", f"{path} is one line of JSON")]

    def rules(self) -> list[Rule]:
        return RULES

    def machine(self, run: RunSpec, stages: list[Compiled]) -> Machine:
        return Machine(gpus=0, gpus_why="(the toy trains nothing)")

    def probes(self, run: RunSpec, stages: list[Compiled], student: Endpoint | None) -> list[Probe]:
        return []  # it calls no server and loads no model: nothing for preflight to probe


TARGET = Toy()
