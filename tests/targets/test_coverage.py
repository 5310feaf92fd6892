"""No silent drops: every spec field is read or ignored-with-reason, for every method x backend."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
from helpers import STUDENT

import whileai as wai
from whileai.spec.fields import spec_fields
from whileai.spec.run import METHODS, RunSpec
from whileai.targets import registry

# every registered target, and its compile module (the same role has the same file name in each)
BACKENDS = list(registry.names())
MODULES = {n: registry.TARGETS[n].rsplit(".", 1)[0] + ".compile" for n in BACKENDS}
TASKS = Path(__file__).parents[1] / "data" / "tasks.jsonl"
TEACHER = wai.Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")


def variants(kind: str) -> list[RunSpec]:
    """Defaults, and every optional field set to a non-default value."""
    base: dict = {"opd": {"type": "opd", "teacher": TEACHER.model_dump()},
                  "opsd": {"type": "opsd"}, "grpo": {"type": "grpo"},
                  "sft": {"type": "sft", "teacher": TEACHER.model_dump()}}[kind]
    full_method = dict(base, learning_rate=2e-5, temperature=0.9, max_tokens=1024, samples=2)
    if kind == "opd":
        full_method |= {"divergence": "forward_kl", "top_k": 8}
    if kind == "opsd":
        full_method |= {"divergence": "jsd", "anchor": "initial", "template": "hint: {demonstration}"}
    common = {"taskset": "reverse-text", "model": STUDENT}
    full = dict(common, method=full_method, steps=10, prompts=8, gpus=4, inference_gpus=1,
                lora=False, seed=7, prompt_tokens=512, max_off_policy_steps=2,
                taskset_args={"dataset_split": "train"},
                eval={"interval": 5, "examples": 16, "taskset": "gsm8k", "taskset_args": {"split": "test"}},
                checkpoint={"interval": 5, "keep_last": 2},
                monitor={"project": "p", "entity": "e", "name": "n", "group": "g", "tags": ["t"]},
                output_dir="runs/x", data=str(TASKS), reward="my_rewards.contains_answer",
                inspect={"token_export": True}, accept={"needs-grpo-arm": "the GRPO arm runs elsewhere"})
    off = dict(common, method=base, eval={"enabled": False, "interval": 5, "examples": 3,
                                          "taskset_args": {"dataset_split": "test"}},
               checkpoint={"enabled": False, "interval": 5, "keep_last": 1}, inspect={"token_export": False})
    unknown = dict(common, method=base, taskset="someone/my-env@0.1", roles=["player"],
                   taskset_args={"level": 3}, data=str(TASKS), reward="my_rewards.contains_answer")
    live = dict(common, method=dict(base, anchor="live")) if kind == "opsd" else None
    remote = {"teacher": {"url": "http://teacher-node:8001/v1", "model": "Qwen/Qwen3-32B"}}
    nodes = dict(common, method=dict(base, **(remote if kind in ("opd", "sft") else {})), nodes=4,
                 gpus=32, gpus_per_node=8, inference_nodes=2, inference_replicas=1, inference_tp=2,
                 nodes_per_fsdp_group=1, slurm=SLURM)
    # a two-stage run: an SFT cold start, then this method with every stage field set
    chain = dict(full, method={"type": "sft", "teacher": TEACHER.model_dump()},
                 then={"method": full_method, "steps": 6, "prompts": 4, "lora": True, "lora_rank": 8})
    runs = [RunSpec.model_validate(dict(common, method=base)), RunSpec.model_validate(full),
            RunSpec.model_validate(off), RunSpec.model_validate(unknown), RunSpec.model_validate(nodes),
            RunSpec.model_validate(chain)]
    return runs + ([RunSpec.model_validate(live)] if live else [])


def mixtures(kind: str) -> list[RunSpec]:
    """A mixture whose extra sources set every source field, this method on one of them (every
    method field set), one with no method of its own, one on an unknown taskset with roles."""
    full_method = {"type": kind, "learning_rate": 2e-5, "temperature": 0.9, "max_tokens": 1024,
                   "samples": 2} | ({"teacher": {"url": "http://localhost:8002/v1", "model": TEACHER.model}}
                                    if kind in ("opd", "sft") else {})
    if kind == "opd":
        full_method |= {"divergence": "forward_kl", "top_k": 8}
    if kind == "opsd":
        full_method |= {"divergence": "jsd", "anchor": "initial", "template": "hint: {demonstration}"}
    sources = [
        {"taskset": "gsm8k", "taskset_args": {"split": "train"}, "ratio": 2.0, "name": "math",
         "method": full_method, "eval": True},
        {"taskset": "reverse-text", "ratio": 0.5, "eval": False},
        {"taskset": "someone/my-env@0.1", "roles": ["player"], "taskset_args": {"level": 3},
         "method": {"type": "grpo", "samples": 2}},
    ]
    common = {"taskset": "reverse-text", "model": STUDENT, "ratio": 3.0, "method": {"type": "grpo"},
              "sources": sources}
    return [RunSpec.model_validate(common),
            RunSpec.model_validate(common | {"eval": {"taskset": "gsm8k"}}),
            RunSpec.model_validate(common | {"eval": {"enabled": False}})]


SLURM = {"job_name": "j", "partition": "gpu", "account": "a", "time": "1-00:00:00",
         "nodelist": "n[1-4]", "exclude": "n9", "template_path": "t.sbatch.j2",
         "project_dir": "/shared/prime-rl", "pre_run_command": "echo hi",
         "cleanup_grace_period": 60, "shared_fs": True}


def backend(name: str):  # type: ignore[no-untyped-def]
    mod = MODULES[name]
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name == mod:
            pytest.skip(f"{mod} not present")
        raise


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("kind", list(METHODS))
def test_every_set_field_is_read_or_ignored(name: str, kind: str) -> None:
    from whileai.targets import registry
    from whileai.targets.base import Options

    mod = backend(name)
    for run in variants(kind):
        # verl 0.9.1 has no OPSD; a second stage is its own run; its SFT jobs run on one node
        if name == "verl" and (kind == "opsd" or run.then is not None or kind == "sft" and run.nodes):
            with pytest.raises(wai.SpecError, match="opsd|then|nodes"):
                mod.compile(run)
            continue
        if name == "prime-rl" and (run.data or run.reward):  # refused, not ignored (own_tasks below)
            run = run.model_copy(update={"data": None, "reward": None})
        if name == "prime-rl":  # reverse KL only: another divergence is refused (test_strict.py)
            run = _reverse_kl(run)
        c = mod.compile(run) if run.then is None else registry.get(name).compile(
            run, name="chain.toml", out=None, options=Options())
        assert_accounted(c, run, f"{name}/{kind}")


@pytest.mark.parametrize("field", ["data", "reward"])
def test_prime_rl_refuses_own_tasks_it_would_not_train_on(field: str) -> None:
    """prime-rl reads tasks and rubric from the taskset package: a data file or a reward function
    it ignored would train on something else, so each is refused in one line naming the field."""
    for kind in METHODS:
        for run in variants(kind):
            if getattr(run, field) is None or (field == "reward" and run.data):
                continue
            with pytest.raises(wai.SpecError, match=rf"^{field}: .*; prime-rl .* \(-t trl\)") as info:
                backend("prime-rl").compile(run)
            assert "verifiers environment" in str(info.value)


@pytest.mark.parametrize("kind", list(METHODS))
def test_every_field_of_every_source_is_read_or_ignored(kind: str) -> None:
    """A mixture on prime-rl: each source's fields (sources[i].*) too; TRL refuses it in one
    line."""
    for run in mixtures(kind):
        assert_accounted(backend("prime-rl").compile(_reverse_kl(run)), _reverse_kl(run),
                         f"prime-rl/{kind} mixture")
        with pytest.raises(wai.SpecError, match="TRL has no per-source algorithms"):
            backend("trl").compile(run)
        with pytest.raises(wai.SpecError, match="sources|opsd"):
            backend("verl").compile(run)


def _reverse_kl(run: RunSpec) -> RunSpec:
    """The run with every divergence reverse KL (prime-rl's only OPD/OPSD loss)."""
    from helpers import ROOT

    spec = importlib.util.spec_from_file_location("sample_runs", ROOT / "scripts" / "sample_runs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reverse_kl(run)  # type: ignore[no-any-return]


def assert_accounted(c: wai.Compiled, run: RunSpec, what: str) -> None:
    accounted = {r.field for r in c.reads} | {i.field for i in c.ignores}
    for field in spec_fields(RunSpec):
        if field in ("schema_", "overrides", "then.overrides"):  # each key is its own read
            continue
        if field.startswith("sources."):  # each source's own fields, by its position
            rest = field.removeprefix("sources.")
            for j, source in enumerate(run.sources):
                value = _value(source, rest)
                if value is not _ABSENT and value is not None and value != {}:
                    assert f"sources[{j}].{rest}" in accounted, (
                        f"{what}: sources[{j}].{rest}={value!r} is neither read nor ignored")
            continue
        label = field.removeprefix("method.")
        value = _value(run, field)
        if value is _ABSENT or value is None or value == {} or value == []:  # sets nothing
            continue
        assert label in accounted, f"{what}: {field}={value!r} is neither read nor ignored"
    for i in c.ignores:
        assert len(i.reason) > 15, f"{i.field}: reason too thin: {i.reason!r}"


_ABSENT = object()


def _value(run: object, dotted: str) -> object:
    obj: object = run
    for seg in dotted.split("."):
        if seg == "method" and obj is not None:  # the run's method, or a stage's
            obj = obj.method  # type: ignore[attr-defined]
            continue
        if obj is None or seg not in type(obj).model_fields:  # type: ignore[attr-defined]
            return _ABSENT
        obj = getattr(obj, seg)
    return obj


def test_method_fields_are_covered_by_spec_fields() -> None:
    """spec_fields(RunSpec) walks into the method union: every method's fields appear."""
    fields = set(spec_fields(RunSpec))
    for kind, model in METHODS.items():
        for f in model.model_fields:
            assert f"method.{f}" in fields or any(x.startswith(f"method.{f}.") for x in fields), (kind, f)


def two_teachers(**source: object) -> RunSpec:
    """An OPD mixture on verl's terms: a second source with its own teacher, data, reward, name,
    eval, arguments and roles (every source field but ratio, which verl refuses)."""
    other = {"type": "opd", "teacher": {"url": "http://localhost:8002/v1", "model": "Qwen/Qwen3-1.7B"}}
    return RunSpec.model_validate({
        "taskset": "reverse-text", "model": STUDENT,
        "method": {"type": "opd", "teacher": TEACHER.model_dump()},
        "sources": [{"taskset": "someone/my-env@0.1", "roles": ["player"], "taskset_args": {"level": 3},
                     "name": "mine", "eval": False, "data": str(TASKS),
                     "reward": "my_rewards.contains_answer", "method": other} | source]})


def test_every_field_of_a_two_teacher_mixture_is_read_or_ignored_on_verl() -> None:
    """verl compiles a teacher per source: each source field is read or ignored with its reason;
    prime-rl refuses the source's own data (it trains on the taskset package), TRL the mixture."""
    run = two_teachers()
    c = backend("verl").compile(run)
    assert_accounted(c, run, "verl/opd two-teacher mixture")
    with pytest.raises(wai.SpecError, match=r"^sources\[0\]\.data: .*prime-rl.*\(-t verl\)"):
        backend("prime-rl").compile(run)
    with pytest.raises(wai.SpecError, match=r"^sources\[0\]\.reward: .*prime-rl"):
        backend("prime-rl").compile(two_teachers(data=None))
    with pytest.raises(wai.SpecError, match="sources"):
        backend("trl").compile(run)


def test_task_reward_is_read_on_verl_and_refused_in_one_line_elsewhere() -> None:
    """OPD's task_reward_kl_coef: verl's use_task_rewards with distillation_loss_coef; prime-rl's
    opd and TRL's DistillationTrainer train on the teacher alone, so each refuses it."""
    run = RunSpec.model_validate({"taskset": "reverse-text", "model": STUDENT, "method": {
        "type": "opd", "teacher": TEACHER.model_dump(), "task_reward_kl_coef": 0.25}})
    c = backend("verl").compile(run)
    assert_accounted(c, run, "verl/opd task reward")
    assert {r.path: r.value for r in c.reads if r.field == "task_reward_kl_coef"} == {
        "distillation.distillation_loss.use_task_rewards": True,
        "distillation.distillation_loss.distillation_loss_coef": 0.25}
    assert "distillation.distillation_loss.use_task_rewards=True" in c.files["run.sh"]
    for name, cite in (("prime-rl", "configs/algorithm.py:296-305"), ("trl", "distillation_trainer.py:1531")):
        with pytest.raises(wai.SpecError) as info:
            backend(name).compile(run)
        assert info.value.field == "method.task_reward_kl_coef" and cite in str(info.value)
        assert "\n" not in str(info.value)
    off = backend("verl").compile(run.model_copy(update={"method": run.method.model_copy(
        update={"task_reward_kl_coef": None})}))
    assert "distillation.distillation_loss.use_task_rewards=False" in off.files["run.sh"]
