"""The TRL backend without TRL: output shape, the field map's honesty, overrides, the data."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from trl_helpers import ARMS, GOLDEN, ROOT, TEACHER, golden, seed_run

from whileai.errors import SpecError
from whileai.report.text import render_text
from whileai.spec.fields import spec_fields
from whileai.spec.run import GRPO, METHODS, OPD, OPSD, SFT, RunSpec
from whileai.targets.fieldmap import Drop, To, label
from whileai.targets.trl import catalog as trl_catalog
from whileai.targets.trl import compile as trl
from whileai.targets.trl.fieldmap import FIELD_MAP, completions, teacher_template
from whileai.tasksets import reverse_text
from whileai.tasksets.reverse_text import reverse_text_reward


def yaml_of(c: trl.Compiled) -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(c.files["config.yaml"])


def full_run(kind: str, *, lora: bool) -> RunSpec:
    """Every optional field set."""
    method = {"opd": OPD(TEACHER, top_k=8, samples=2, learning_rate=2e-5),
              "opsd": OPSD(anchor="initial", samples=2, learning_rate=2e-5),
              "grpo": GRPO(samples=4, learning_rate=2e-5),
              "sft": SFT(TEACHER, samples=2, temperature=0.8, learning_rate=2e-5)}[kind]
    return RunSpec.model_validate({
        "$schema": "x.json", "taskset": "reverse-text", "model": "m", "method": method,
        "steps": 10, "prompts": 8, "gpus": 4, "inference_gpus": 1, "lora": lora, "seed": 3,
        "prompt_tokens": 512, "max_off_policy_steps": 2, "taskset_args": {"dataset_split": "train"},
        "eval": {"interval": 5, "examples": 16, "taskset": "gsm8k", "taskset_args": {"split": "test"}},
        "checkpoint": {"interval": 5, "keep_last": 2},
        "monitor": {"project": "p", "entity": "e", "name": "n", "group": "g", "tags": ["a"]},
        "output_dir": "o", "overrides": {"logging_steps": 5}, "ratio": 2.0,
        "inspect": {"token_export": True}, "accept": {"lora-rank-low": "a small adapter on purpose"},
    })


MULTI_NODE = ("nodes", "inference_nodes", "inference_replicas", "inference_tp",
              "nodes_per_fsdp_group", "slurm")


def leaf_fields(kind: str) -> list[str]:
    """The fields one stage's field map accounts for (`then.*`: whileai.targets.stages,
    tests/targets/test_coverage.py;
    `sources.*`: a mixture, which TRL refuses, tests/targets/prime_rl/test_mixtures.py)."""
    top = [f for f in spec_fields(RunSpec) if not f.startswith(("method.", "then.", "sources."))]
    return top + [f"method.{f}" for f in spec_fields(METHODS[kind])]


@pytest.mark.parametrize("kind", list(METHODS))
def test_every_field_has_a_row(kind: str) -> None:
    """The table itself names every leaf field of RunSpec and of the method."""
    named = {row.field for row in FIELD_MAP if isinstance(row, (To, Drop))}
    named.add("overrides")  # each key becomes its own read (overrides.account)
    missing = [f for f in leaf_fields(kind) if f not in named]
    assert not missing, f"{kind}: no TRL field-map row for {missing}"


@pytest.mark.parametrize("lora", [True, False])
@pytest.mark.parametrize("kind", list(METHODS))
def test_every_set_field_is_read_or_ignored(kind: str, lora: bool) -> None:
    run = full_run(kind, lora=lora)
    c = trl.compile(run)
    accounted = {r.field for r in c.reads} | {i.field for i in c.ignores}
    for field in leaf_fields(kind):
        if field in ("data", "reward", "roles") and getattr(run, field) is None:
            continue  # unset: nothing to read (tests/tasksets/test_local_data.py sets data and reward;
            # roles is for unknown tasksets only: tests/targets/test_coverage.py)
        if field == "method.task_reward_kl_coef":
            continue  # unset: TRL trains on the teacher alone; set: refused (tests/targets/test_coverage.py)
        if field.split(".")[0] in MULTI_NODE:
            continue  # several nodes: tests/targets/test_coverage.py sets them
        name = "overrides.logging_steps" if field == "overrides" else label(field)
        assert name in accounted, f"{kind}: {field} is neither read nor ignored"
    assert all(len(i.reason) > 15 for i in c.ignores)


@pytest.mark.parametrize("kind", ARMS)
def test_compile_shape(kind: str) -> None:
    c = trl.compile(seed_run(kind))
    assert (c.target, c.pin, c.main) == ("trl", "trl 1.16.0", "config.yaml")
    assert trl.TRL_VERSION == "1.16.0"
    expected = {"config.yaml", "accelerate.yaml", "README.md", "data/train.jsonl", "data/test.jsonl"}
    expected |= {"grpo": {"reverse_text.py"}, "opsd": {"train.py"}, "opd": set(), "sft": {"sample.py"}}[kind]
    assert set(c.files) == expected
    sample = ("python sample.py --teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL --prompts 6400 "
              "--samples 4 --temperature 1 --max-new-tokens 4096 --seed 0 --data data --out teacher_samples")
    one = " --accelerate_config accelerate.yaml"  # one process, stated (accelerate.yaml)
    assert c.commands == ({"opd": ("trl distillation --config config.yaml" + one,),
                           "grpo": ("trl grpo --config config.yaml" + one,),
                           "opsd": ("accelerate launch --config_file accelerate.yaml train.py --config "
                                    "config.yaml",),
                           "sft": (sample, "trl sft --config config.yaml" + one)}[kind])
    assert c.commands[0] in c.files["README.md"]
    assert trl.compile(seed_run(kind), out="runs/a").commands[0].startswith("cd runs/a && ")


def test_compiling_imports_no_trl_torch_transformers() -> None:
    code = (
        "import sys\n"
        "sys.path[:0] = ['tests/targets/trl', 'tests']\n"
        "from trl_helpers import seed_run\n"
        "from whileai.targets.trl import compile as trl\n"
        "from whileai.targets.trl.check import check_dir\n"
        "for k in ('grpo', 'opsd', 'opd'):\n"
        "    trl.compile(seed_run(k), cpu=True)\n"
        "heavy = [m for m in ('trl', 'torch', 'transformers', 'datasets') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("div", "beta"), [("reverse_kl", 1.0), ("forward_kl", 0.0), ("jsd", 0.5)])
def test_divergence_is_beta_and_alpha(div: str, beta: float) -> None:
    opd = trl.compile(seed_run("opd", method=OPD(TEACHER, divergence=div)))
    assert f"\nbeta: {beta}\n" in opd.text
    assert yaml_of(opd)["beta"] == beta
    opsd = trl.compile(seed_run("opsd", method=OPSD(divergence=div)))
    assert yaml_of(opsd)["distillation_alpha"] == beta
    assert yaml_of(opsd)["distillation_mode"] == "full_logits"


def test_opd_report_tells_the_truth() -> None:
    c = trl.compile(seed_run("opd"))
    ignored = {i.field: i.reason for i in c.ignores}
    assert "one completion per prompt" in ignored["samples"]
    assert "full vocabulary" in ignored["top_k"]
    assert "in-process" in ignored["teacher.url"]
    assert "teacher.api_key_env" in ignored
    doc = yaml_of(c)
    assert doc["teacher_model_name_or_path"] == TEACHER.model
    assert "top_k" not in doc and "num_generations" not in doc
    assert (c.facts.estimator, c.facts.support_top_k, c.facts.top_p) == ("full_vocab", None, 1.0)


@pytest.mark.parametrize(("anchor", "kind", "rate"),
                         [("ema:0.01", "ema", 0.01), ("initial", "base", None), ("live", "live", None)])
def test_opsd_anchor(anchor: str, kind: str, rate: float | None) -> None:
    c = trl.compile(seed_run("opsd", method=OPSD(anchor=anchor)))
    doc = yaml_of(c)
    assert doc["teacher_model_kind"] == kind
    assert doc.get("teacher_update_rate") == rate
    assert c.facts.anchor == {"base": "initial"}.get(kind, kind)
    if anchor == "live":
        assert any(w.rule == "opsd-unanchored" for w in c.warnings)


def test_opsd_prompt_room_and_template() -> None:
    run = seed_run("opsd")
    doc = yaml_of(trl.compile(run))
    m = run.method
    assert isinstance(m, OPSD)
    assert doc["max_prompt_length"] >= run.prompt_tokens + m.max_tokens
    tpl = doc["teacher_prompt_template"]
    assert tpl.format(prompt="P", privileged_context="D") == "P\n\n" + m.template.replace(
        "{demonstration}", "D")
    # the same str.format semantics as whileai's template: literal braces doubled
    odd = "x {{y}} {demonstration} }}"
    assert teacher_template(odd).format(prompt="P", privileged_context="D") == (
        "P\n\n" + odd.format(demonstration="D"))


def test_sft_report_tells_the_truth() -> None:
    """SFT on TRL: the teacher samples first (sample.py, in-process: the URL is not read), then
    trl sft trains on the teacher's completion tokens only; the sample count follows the final
    config (an override of max_steps included)."""
    c = trl.compile(seed_run("sft"))
    doc = yaml_of(c)
    assert doc["dataset_name"] == "teacher_samples" and doc["completion_only_loss"] is True
    assert doc["max_length"] == 2048 + 4096 and doc["learning_rate"] == 1e-4
    assert not {"temperature", "max_completion_length", "num_generations", "beta"} & set(doc)
    ignored = {i.field: i.reason for i in c.ignores}
    assert "in-process" in ignored["teacher.url"]
    assert "sampled before training" in ignored["max_off_policy_steps"]
    reads = {r.path: r.value for r in c.reads}
    assert reads["<sample.py --teacher>"] == TEACHER.model and reads["<sample.py --prompts>"] == 6400
    assert c.facts.estimator == "cross_entropy" and c.facts.teacher_reads == "text"
    assert c.files["sample.py"] == (ROOT / "whileai" / "targets" / "trl" / "sample.py").read_text()
    assert "whileai" not in "".join(ln for ln in c.files["sample.py"].splitlines()
                                    if ln.startswith(("import", "from")))
    short = trl.compile(seed_run("sft", eval={"interval": 5}, checkpoint={"interval": 5},
                                 overrides={"max_steps": 5}))
    assert "--prompts 320 " in short.commands[0]  # 5 steps x 256 completions / 4 per prompt
    assert {r.path: r.value for r in short.reads}["<sample.py --prompts>"] == 320
    assert "sample.py" in c.files["README.md"] and "teacher_samples/" in c.files["README.md"]


def test_cpu_keys_only_when_asked() -> None:
    gpu, cpu = yaml_of(trl.compile(seed_run("grpo"))), yaml_of(trl.compile(seed_run("grpo"), cpu=True))
    assert "use_cpu" not in gpu and "bf16" not in gpu
    assert cpu["use_cpu"] is True and cpu["bf16"] is False


@pytest.mark.parametrize(("prompts", "samples"), [(64, 8), (7, 3), (5, 16), (1, 2), (12, 6)])
def test_grpo_batch_divides_by_generations(prompts: int, samples: int) -> None:
    c = trl.compile(seed_run("grpo", method=GRPO(samples=samples), prompts=prompts))
    doc = yaml_of(c)
    batch = doc["per_device_train_batch_size"] * doc["gradient_accumulation_steps"]
    assert batch == prompts * samples == completions(c.run)
    assert batch % doc["num_generations"] == 0
    assert doc["per_device_eval_batch_size"] % samples == 0
    assert doc["per_device_train_batch_size"] <= 8


def test_opd_batch_counts_prompts() -> None:
    doc = yaml_of(trl.compile(seed_run("opd", prompts=64)))
    assert doc["per_device_train_batch_size"] * doc["gradient_accumulation_steps"] == 64


def test_overrides_checked_against_catalogue() -> None:
    with pytest.raises(SpecError, match="did you mean 'learning_rate'"):
        trl.compile(seed_run("grpo", overrides={"learnin_rate": 1e-5}))
    with pytest.raises(SpecError, match="not of type number"):
        trl.compile(seed_run("grpo", overrides={"learning_rate": "fast"}))
    with pytest.raises(SpecError, match="not one of"):
        trl.compile(seed_run("grpo", overrides={"eval_strategy": "sometimes"}))
    with pytest.raises(SpecError, match="unknown key"):  # a GRPO key is not a distillation key
        trl.compile(seed_run("opd", overrides={"num_generations": 4}))
    with pytest.raises(SpecError, match="num_generations"):
        trl.compile(seed_run("grpo", overrides={"num_generations": 7}))
    c = trl.compile(seed_run("grpo", overrides={"learning_rate": 1e-5, "loss_type": "grpo"}))
    assert yaml_of(c)["learning_rate"] == 1e-5
    read = next(r for r in c.reads if r.field == "overrides.learning_rate")
    assert "replaces" in read.note


def test_field_map_keys_are_in_the_catalogue() -> None:
    """Every YAML key the map can write exists for the parser of its command."""
    runs = [full_run(k, lora=lo) for k in METHODS for lo in (True, False)]
    runs += [seed_run(k) for k in ARMS] + [seed_run("opsd", method=OPSD(anchor="live"))]
    for run in runs:
        c = trl.compile(run, cpu=True)
        cmd = trl.command_name(run)
        keys = [r.path for r in c.reads if not r.path.startswith("<")] + [f.path for f in c.fixed]
        assert keys, run
        for key in keys:
            assert trl_catalog.has(cmd, key), f"{cmd}: {key} is not a TRL {cmd} config key"


def test_catalogue_lists_each_class() -> None:
    cat = trl_catalog.raw()
    assert cat["trl_version"] == trl.TRL_VERSION
    for cls in ("ScriptArguments", "ModelConfig", "DistillationConfig", "GRPOConfig", "SDFTConfig",
                "SFTConfig"):
        assert cat["classes"][cls]["fields"], cls
    assert cat["classes"]["SDFTConfig"]["fields"]["distillation_mode"]["choices"] == [
        "sampled_token", "full_logits", "topk_logits"]
    assert "help" not in json.dumps(cat)


def test_unknown_taskset_and_privileged_key() -> None:
    with pytest.raises(SpecError, match="reverse-text") as e:
        trl.compile(seed_run("grpo").model_copy(update={"taskset": "gsm8k"}))
    assert "gsm8k" in str(e.value)
    with pytest.raises(SpecError, match="method.privileged"):
        trl.compile(seed_run("opsd", method=OPSD(privileged="solution")))
    assert trl.compile(seed_run("grpo").model_copy(update={"taskset": "me/reverse-text@v1"}))


def test_data_columns() -> None:
    opsd = trl.compile(seed_run("opsd", eval={"examples": 5}))
    rows = [json.loads(x) for x in opsd.files["data/train.jsonl"].splitlines()]
    test = [json.loads(x) for x in opsd.files["data/test.jsonl"].splitlines()]
    assert len(rows) == reverse_text.TRAIN_SIZE and len(test) == 5
    r = rows[0]
    assert [m["role"] for m in r["prompt"]] == ["system", "user"]
    assert r["answer"] == r["prompt"][1]["content"][::-1] == r["privileged_context"]
    assert "<reversed_text>" in r["prompt"][0]["content"]
    assert not {x["answer"] for x in rows} & {x["answer"] for x in test}
    grpo = trl.compile(seed_run("grpo", eval={"examples": -1}))
    assert len(grpo.files["data/test.jsonl"].splitlines()) == reverse_text.HOLDOUT_SIZE
    assert "privileged_context" not in grpo.files["data/train.jsonl"].splitlines()[0]


def test_reward_is_prime_rl_lcs_ratio() -> None:
    ans = "olleh dlrow"
    done = [{"role": "assistant", "content": f"ok <reversed_text>\n {ans} \n</reversed_text>"}]
    near = "<reversed_text>olleh dlrw</reversed_text> <reversed_text>x</reversed_text>"
    got = reverse_text_reward([done, near, "no tags", "<reversed_text>open"], [ans] * 4)
    assert got == [1.0, SequenceMatcher(None, "olleh dlrw", ans).ratio(), 0.0, 0.0]


def test_reward_module_is_shipped_verbatim_and_standalone() -> None:
    c = trl.compile(seed_run("grpo"))
    text = c.files["reverse_text.py"]
    assert text == (ROOT / "whileai" / "tasksets" / "reverse_text.py").read_text()
    assert "whileai" not in "".join(ln for ln in text.splitlines() if ln.startswith(("import", "from")))
    assert yaml_of(c)["reward_funcs"] == ["reverse_text.reverse_text_reward"]


def test_yaml_round_trips() -> None:
    yaml = pytest.importorskip("yaml")
    from whileai.targets.trl.compile import dumps

    doc = {"a": 1e-6, "b": 5e-5, "c": "yes", "d": "x: y # z\n", "e": [1, "on", None], "f": "",
           "g": {"K": "1"}, "h": 0.1, "i": "1e-3", "j": -3e20, "k": [{"p": "json"}], "l": True,
           "emoji 😀": "👍🏽 café", "key\n": "ends in a newline", "m": 1e16, "n": -0.0,
           "o": "next line \x85 and \u2028 \u2029 separators", "": "\x85"}  # YAML 1.1 line breaks
    assert yaml.safe_load(dumps(doc)) == doc
    assert "learning_rate: 1.0e-06" in dumps({"learning_rate": 1e-6})  # a float for YAML 1.1


@pytest.mark.parametrize("kind", ARMS)
def test_golden_seed_arms(kind: str) -> None:
    c = trl.compile(seed_run(kind))
    for name, text in sorted(c.files.items()):
        if name.startswith("data/"):
            digest = hashlib.sha256(text.encode()).hexdigest()
            text = f"{len(text.splitlines())} rows, sha256 {digest}\n" + text.split("\n", 1)[0] + "\n"
            name += ".digest"
        golden(GOLDEN / kind / name, text)
    golden(GOLDEN / kind / "report.txt", render_text(c, 100) + "\n")


@pytest.mark.parametrize("taskset", ["kuhn-poker", "gsm8k", "wiki-search"])
def test_a_catalogue_taskset_trl_cannot_generate_points_to_data(taskset: str, tmp_path: Path) -> None:
    """TRL trains from files: the refusal names the spec field that works, `data`."""
    from typer.testing import CliRunner

    from whileai.cli.app import app

    spec = tmp_path / "s.toml"
    spec.write_text(f'taskset = "{taskset}"\nmodel = "Qwen/Qwen3-0.6B"\n[method]\ntype = "grpo"\n')
    r = CliRunner().invoke(app, ["compile", str(spec), "-b", "trl"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"taskset: '{taskset}'" in r.stderr and 'data = "tasks.jsonl"' in r.stderr


@pytest.mark.parametrize("kind", ["opd", "grpo", "opsd", "sft"])
def test_one_gpu_is_trls_default_and_can_be_said(kind: str) -> None:
    """gpus = 1 is one process, as unset is (TRL generates in the training process; vLLM is off,
    use_vllm false); prime-rl needs two on one node and says TRL takes one."""
    import whileai as wai

    one, unset = trl.compile(seed_run(kind, gpus=1)), trl.compile(seed_run(kind))
    assert one.files == unset.files and "one process" in one.header()[0]
    with pytest.raises(SpecError, match=r"^gpus: 1 .*at least 2 for prime-rl.*TRL trains on one"):
        wai.compile(seed_run(kind, gpus=1), "prime-rl")
