"""whileai's own rules where verl 0.9.1 is lax: the mistakes its config check lets through.

    refusals({"actor_rollout_ref.actor.optim.lr": "abc"}, job="main_ppo")
    # [Refusal(key="actor_rollout_ref.actor.optim.lr", value="abc", message="'abc' is not a number",
    #          allowed="a number (verl's default 1e-06)", verl="lets it through: ...", rule="type")]

Input: one verl job's Hydra overrides (key as written, `+` kept -> the raw value as Hydra gets it);
every key not set takes its composed default from the pinned catalogue
(whileai.targets.verl.catalog). `job`: main_ppo, main_generation_server or sft_trainer. `base`: the
folder relative data paths are read from (None: files are not checked); `produced`: the paths an
earlier step of the same run.sh writes (a file there, or below a folder there, counts as present).

Each rule says what verl checks itself and what whileai adds (RULES: id -> what, the verl source or
issue it mirrors). `Refusal.verl` says what verl 0.9.1 itself does with that mistake, as
tests/fixtures/verl/lax.json recorded it. `script_lines` applies the rules to every verl command of a
run.sh (what `whileai check` prints). Pure: no verl, no I/O but `Path.exists` under `base`.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from whileai.errors import SpecError, close_matches
from whileai.targets.verl import catalog, gpus, runsh
from whileai.targets.verl.job import Job, Refusal, launcher_gpus
from whileai.targets.verl.pin import VERSION
from whileai.targets.verl.values import INTERPOLATION, fits, kind, parse_value

RULES = {
    "unknown-key": ("a key verl's config does not have, `+key=` included (Hydra adds any key given "
                    "with +, and verl never reads it); + on a key it has", "Hydra struct mode; verl "
                    "#1080, #4262"),
    "type": ("a value of the wrong type for the key (the `_target_` dataclass's annotation, else "
             "the YAML default's)", "utils/config.py:23-65 omega_conf_to_dataclass; utils/config.py:124"),
    "choice": ("a value verl has no entry for (its registries and fixed lists)",
               "trainer/ppo/core_algos.py ADV_ESTIMATOR_REGISTRY; workers/rollout/replica.py:323"),
    "rollout-tp": ("rollout TP x DP x PP must divide the GPUs (n_gpus_per_node x nnodes) and TP fit "
                   "one node", "workers/engine_workers.py:659; verl #1191, #1785"),
    "memory-utilization": ("gpu_memory_utilization in (0, 1]", "workers/config/rollout.py:185; "
                           "verl #2588, #855"),
    "greedy-samples": ("temperature 0 (or do_sample=False) with n > 1: the n answers are one",
                       "main_generation_server.py:130-133 (verl checks it there only)"),
    "batch-gpus": ("train_batch_size x n divisible by the GPUs, with use_dynamic_bsz too",
                   "utils/config.py:103-127 (skipped under use_dynamic_bsz); verl #473, #606, #1004"),
    "mini-batch": ("ppo_mini_batch_size divides train_batch_size, and mini x n splits evenly over "
                   "the GPUs into micro batches", "workers/config/actor.py:222-240; verl #1524, #3095, "
                   "#833, #382, #559"),
    "sft-gpus": ("the SFT trainer's batch split over the GPUs torchrun starts, which are the ones it "
                 "uses (it never reads trainer.n_gpus_per_node)", "trainer/sft_trainer.py:240-241 "
                 "(train_batch_size // data-parallel ranks, the rest dropped)"),
    "data-file": ("data files present: relative to the run folder, or written by an earlier step",
                  "utils/dataset/rl_dataset.py:173-178 (read at start-up)"),
    "teacher-dropped": ("distillation: a teacher_model key beside a named teacher, which verl "
                        "drops silently", "workers/config/distillation.py:309-310 (its YAML's comment "
                        "above teacher_model)"),
    "teacher-pool": ("distillation: num_replicas x TP of the teachers sums to the teacher pool",
                     "workers/config/distillation.py:281-306 (one teacher: num_replicas reset silently)"),
}
LETS_THROUGH = "lets it through (its config check passes; the run fails or misbehaves later)"


def refusals(overrides: Mapping[str, str], *, job: str, base: Path | None = None,
             produced: Collection[str] = (), launcher: tuple[int, int] | None = None) -> list[Refusal]:
    """Every mistake of one verl job's overrides that whileai refuses, in rule order.
    `launcher`: (GPUs a node, nodes) torchrun starts for the SFT trainer (job.launcher_gpus)."""
    run = Job(overrides, job, launcher)
    out = list(_keys(run))
    for check in (gpus.tensor_parallel, gpus.memory, gpus.greedy, gpus.batches, gpus.sft_batches,
                  gpus.dropped, gpus.teachers):
        out += check(run)
    if base is not None:
        out += _data_files(run, base, set(produced))
    return out


def first_error(overrides: Mapping[str, str], *, job: str, base: Path | None = None,
                produced: Collection[str] = (), launcher: tuple[int, int] | None = None) -> None:
    """Raise SpecError (field: the key, its value, what is allowed) for the first refusal: what
    the verl target's compile calls on each job's final overrides (noqa: vulture reads this
    package without that caller where the target is not merged yet)."""
    for r in refusals(overrides, job=job, base=base, produced=produced, launcher=launcher):
        raise SpecError(r.key, r.value, r.allowed, hint=f"{r.message}; verl {VERSION} {r.verl}")


def as_mapping(overrides: Collection[str]) -> dict[str, str]:
    """A command's overrides (`key=value` words) as the mapping `refusals` reads; the last wins."""
    return {o.partition("=")[0]: o.partition("=")[2] for o in overrides if "=" in o}


def script_lines(text: str, where: str, env: Mapping[str, str] | None = None,
                 base: Path | None = None) -> list[tuple[str, str]]:
    """`whileai check run.sh`'s lines: ("error", line) for each refusal of each verl command of a
    run.sh's text, naming the command's line, in order (a "warning" for a command composing
    another config than the catalogue's). A relative data file counts as present in
    `base` (the script's folder) or when an earlier line names it or a folder above it (a step
    that writes it: `python3 convert.py ... data/sft.parquet`, `+data.output_path=...`, verl's gsm8k
    preprocessing with `--local_save_dir data`)."""
    out: list[tuple[str, str]] = []
    for cmd in runsh.parse(text, env):
        if cmd.kind not in catalog.JOBS:
            continue
        config = catalog.document()["jobs"][cmd.kind]["config"]
        name = (cmd.option("--config-name") or config).removesuffix(".yaml")
        if name != config or cmd.option("--config-path") not in (None, "config"):
            out.append(("warning", f"{where}:{cmd.line}: {cmd.kind}: whileai's own rules know verl's "
                                   f"{config}; --config-name={name} is not checked by them"))
            continue
        found = refusals(as_mapping(cmd.overrides), job=cmd.kind, base=base,
                         produced=written_before(text, cmd.line), launcher=launcher_gpus(cmd.launcher))
        out += [("error", f"{where}:{cmd.line}: {cmd.kind}: {r.line()}") for r in found]
    return out


def written_before(text: str, line: int) -> set[str]:
    """The words of the script's lines before `line` that could name a file a step writes: each
    argument, and the value of each `--opt=value` or `key=value` (comments skipped)."""
    words: set[str] = set()
    for raw in text.splitlines()[: max(line - 1, 0)]:
        try:
            parts = shlex.split(raw, comments=True)
        except ValueError:  # an unclosed quote on a line: its words as they stand
            parts = raw.split("#", 1)[0].split()
        for word in parts:
            value = word.rpartition("=")[2] if "=" in word else word
            for here in ("$PWD/", "${PWD}/", "./"):  # run.sh works in its own folder
                value = value.removeprefix(here)
            if value and not value.startswith("-"):
                words.add(value.strip("'\"").rstrip("/"))
    return words


def _keys(run: Job) -> Iterator[Refusal]:
    """unknown-key, type, choice: each override against the catalogue."""
    config = catalog.document()["jobs"][run.job]["config"]
    for written, raw in run.raw.items():
        key = written.lstrip("+~")
        entry = catalog.lookup(key, run.job)
        if entry is None and not written.startswith("~"):
            hint = catalog.suggest(key, run.job)
            yield Refusal(written, raw, "verl's config has no such key" + (f"; {hint}" if hint else ""),
                          f"a key of verl {catalog.PIN}'s {config} config",
                          _ADDED if written.startswith("+") else f"refuses it at compose (Could not "
                          f"override '{key}')", "unknown-key")
            continue
        if written[:1] == "+" and written[:2] != "++" and entry and entry.source == "yaml" \
                and key in catalog.config_of(run.job)["keys"]:
            yield Refusal(written, raw, "the config has this key: Hydra adds with + only keys it lacks",
                          f"{key}={raw} (without +)", "refuses it at compose (Could not append to config)",
                          "unknown-key")
            continue
        if entry and entry.source == "added" and written[:1] != "+":
            yield Refusal(written, raw, f"verl's YAML leaves this {entry.dataclass} field out: Hydra "
                          "sets it only with +", f"+{key}={raw}", f"refuses it at compose (Could not "
                          f"override '{key}')", "unknown-key")
            continue
        value = parse_value(raw)
        if entry is None or value is INTERPOLATION or entry.source not in ("yaml", "added") \
                or written.startswith("~"):
            continue
        if not fits(value, entry.type, strict=bool(entry.dataclass)):
            yield Refusal(written, raw, f"{raw!r} is not {kind(entry.type)}",
                          f"{kind(entry.type)} (verl's default {entry.default!r})",
                          _verdict("type", run.job, key, _TYPE_DEFAULT), "type")
        elif entry.choices and (bad := [v for v in _listed(value) if v not in entry.choices]):
            near = close_matches(str(bad[0]), [str(c) for c in entry.choices])
            yield Refusal(written, raw, f"verl has no {bad[0]!r}" + (f"; did you mean {near[0]!r}?"
                          if near else ""), f"one of {', '.join(map(str, entry.choices))} "
                          f"({entry.choices_from})", _verdict("choice", run.job, key, LETS_THROUGH), "choice")


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


_ADDED = "lets it through: Hydra adds any key given with +, and verl never reads it"
_TYPE_DEFAULT = "lets it through: Hydra keeps the value as a string and no config check reads its type"
_VERDICT = {  # (rule, job, key) -> what verl 0.9.1 does (tests/fixtures/verl/lax.json records it)
    ("type", "main_ppo", "data.train_batch_size"):
        "crashes at validate_config with a raw TypeError that names no key (utils/config.py:124)",
    ("type", "main_ppo", "actor_rollout_ref.actor.optim.lr"):
        "lets it through: no config check reads the learning rate; the optimizer fails at start-up",
    ("type", "sft_trainer", "optim.lr"):
        "lets it through: the SFT trainer's config check never reads the learning rate",
    ("choice", "", "algorithm.adv_estimator"):
        "lets it through: the estimator is looked up at the first step's advantages "
        "(trainer/ppo/core_algos.py:149)",
    ("choice", "", "actor_rollout_ref.rollout.name"):
        "lets it through: the engine is looked up when the rollout replicas start "
        "(workers/rollout/replica.py:326)",
    ("choice", "", "actor_rollout_ref.actor.loss_agg_mode"):
        "refuses it at validate_config (Invalid loss_agg_mode: workers/config/actor.py:220)",
    ("choice", "", "distillation.distillation_loss.loss_mode"):
        "refuses it at the distillation config (Unsupported loss mode: losses.py:95)",
    ("choice", "", "actor_rollout_ref.actor.policy_loss.loss_mode"):
        "lets it through: the loss is looked up at the first update (trainer/ppo/core_algos.py:81)",
    ("choice", "", "actor_rollout_ref.actor.kl_loss_type"):
        "lets it through: the first KL loss raises NotImplementedError (trainer/ppo/core_algos.py:2216)",
    ("choice", "", "trainer.logger"):
        "lets it through: the tracker asserts when the trainer starts (utils/tracking.py:71)",
    ("choice", "", "reward.reward_manager.name"):
        "lets it through: the manager is looked up when the reward loop starts "
        "(reward_manager/registry.py:52)",
}


def _verdict(rule: str, job: str, key: str, default: str) -> str:
    return _VERDICT.get((rule, job, key)) or _VERDICT.get((rule, "", key)) or default


def _data_files(run: Job, base: Path, produced: set[str]) -> list[Refusal]:
    """data-file: verl opens the files only when the trainer starts (rl_dataset.py:173-178)."""
    out = []
    for key in ("data.train_files", "data.val_files"):
        if key not in run.set:
            continue
        for path in (_inside(p, base) for p in _listed(run.get(key)) if isinstance(p, str)):
            if path and not (base / path).exists() and not _made(path, produced):
                out.append(run.refuse(key, f"{path} is not in the run folder and no earlier step of "
                                      "the run.sh writes it",
                                   "a file of the run folder, or one an earlier step of run.sh writes",
                                   "lets it through: the file is first opened when the trainer starts",
                                   "data-file"))
    return out


def _inside(path: str, base: Path) -> str:
    """The path relative to the run folder ($PWD/x as the script's folder expands it), or ""
    for one elsewhere (absolute, ~, $VAR and URLs name the machine that runs it)."""
    if path.startswith("/") and Path(path).is_relative_to(base.resolve()):
        return Path(path).relative_to(base.resolve()).as_posix()
    return "" if not path or path.startswith(("/", "~", "$")) or "://" in path else path


def _made(path: str, produced: set[str]) -> bool:
    parts = Path(path).parts
    made = {str(Path(p)) for p in produced}
    return any(str(Path(*parts[:i])) in made for i in range(1, len(parts) + 1))
