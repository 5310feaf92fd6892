"""prime-rl output is accepted by the pinned schema and obeys the loader's extra rules."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import tomllib
from helpers import STUDENT, needs_reference, seed_run

import whileai as wai
from whileai.errors import SpecError
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.prime_rl.catalog import catalog
from whileai.targets.prime_rl.check import check_document


def reference_validator() -> jsonschema.Draft202012Validator:
    ref = needs_reference()
    return jsonschema.Draft202012Validator(json.loads((ref / "prime-rl/schema/rl.schema.json").read_text()))


def toml(kind: str, **fields: Any) -> dict[str, Any]:
    return tomllib.loads(prime_rl.compile(seed_run(kind, **fields)).text)


VARIANTS = [
    {}, {"lora": False}, {"gpus": 4}, {"gpus": 8, "inference_gpus": 2},
    {"monitor": {"project": "p", "tags": ["a"]}}, {"eval": {"interval": 3, "examples": -1}},
    {"overrides": {"trainer.optim.weight_decay": 0.0}},
]


@pytest.mark.parametrize("kind", ["grpo", "opsd", "opd", "sft"])
@pytest.mark.parametrize("fields", VARIANTS, ids=lambda f: ",".join(f) or "defaults")
def test_output_passes_reference_schema_and_loader_rules(kind: str, fields: dict[str, Any]) -> None:
    doc = toml(kind, **fields)
    errors = [e.message for e in reference_validator().iter_errors(doc)]
    assert errors == []
    assert check_document(doc) == []


def test_loader_rules_that_the_schema_misses_hold() -> None:
    for kind, samples in [("grpo", 8), ("opsd", 1), ("opd", 4), ("sft", 4)]:
        doc = toml(kind)
        orch = doc["orchestrator"]
        assert orch["batch_size"] == 64 * samples and orch["group_size"] == samples
        assert orch["renderer"]["name"] == "prime-qwen3"  # the model is not in the renderer map
        assert "trainer" in doc and "orchestrator" in doc
        for src in orch["train"]["source"] + orch["eval"]["source"]:
            assert src["env"]["agent"]["runtime"]["type"] == "subprocess"
    opsd = toml("opsd")["orchestrator"]["algo"]
    assert opsd == {"type": "opsd", "demo_key": "answer", "template": wai.OPSD().template,
                    "renderer": {"name": "prime-qwen3"}}
    teacher = toml("opd")["orchestrator"]["algo"]["teacher"]
    assert teacher["base_url"] == "http://localhost:8001/v1"


def test_learning_rates_and_lengths_are_explicit() -> None:
    assert toml("opsd")["trainer"]["optim"]["lr"] == 5e-6
    assert toml("opd")["trainer"]["optim"]["lr"] == 1e-4
    assert toml("opd", lora=False)["trainer"]["optim"]["lr"] == 1e-6
    assert "lora" not in toml("opd", lora=False)["trainer"].get("model", {})
    assert toml("opd")["seq_len"] == 2048 + 8192


@pytest.mark.parametrize("model,expected", [
    ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "prime-qwen3"),
    ("Qwen/Qwen3-8B", "qwen3"),
    ("Qwen/Qwen3-4B-Instruct-2507-my-finetune", "qwen3"),
    ("someone/Qwen3-1.7B-math", "qwen3"),
    ("meta-llama/Llama-3.1-8B-Instruct", "default"),  # no map key: the package never guesses
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "default"),  # the package's rule (+ think)
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
    ("/models/my-custom-model", "default"),
])
def test_renderer_is_always_explicit_and_loader_safe(model: str, expected: str) -> None:
    # a 671B model does not fit the default two GPUs: compile it on the nodes it needs
    layout = ({"nodes": 8, "inference_nodes": 4, "inference_tp": 8, "slurm": {"partition": "gpu"}}
              if "R1-0528" in model else {})
    doc = tomllib.loads(prime_rl.compile(
        wai.RunSpec(taskset="reverse-text", model=model, method=wai.OPSD(), **layout)).text)
    assert doc["orchestrator"]["renderer"]["name"] == expected
    assert doc["orchestrator"]["algo"]["renderer"]["name"] == expected
    assert check_document(doc) == []


def test_project_check_accepts_every_reference_example() -> None:
    ref = needs_reference()
    files = sorted((ref / "prime-rl/configs").rglob("*.toml"))
    assert len(files) >= 12
    for f in files:
        assert check_document(tomllib.loads(f.read_text())) == [], f.name


def test_own_validator_agrees_with_jsonschema_on_mutations() -> None:
    validator = reference_validator()
    base = toml("opd")
    mutations = [
        ("orchestrator", "max_tokens", 5), ("orchestrator", "group_size", 0),
        ("orchestrator", "seed", 1), ("trainer", "optim", {"lr": "fast"}),
        ("orchestrator", "algo", {"type": "opd"}), ("orchestrator", "algo", {"type": "ppo"}),
        ("orchestrator", "algo", {"type": "opsd", "teacher": {"name": "x"}}),
        ("deployment", "num_train_gpus", "two"), ("orchestrator", "max_off_policy_steps", -1),
    ]
    for table, key, value in mutations:
        doc = json.loads(json.dumps(base))
        doc.setdefault(table, {})[key] = value
        ours = catalog().validate(doc)
        theirs = list(validator.iter_errors(doc))
        assert bool(ours) == bool(theirs), (table, key, value, ours, [e.message for e in theirs])
    top = json.loads(json.dumps(base)) | {"max_off_policy_steps": 3}
    assert catalog().validate(top) and list(validator.iter_errors(top))


def test_teacher_on_the_policy_port_is_refused() -> None:
    with pytest.raises(SpecError, match="8000"):
        prime_rl.compile(wai.RunSpec(taskset="reverse-text", model=STUDENT, method=wai.OPD(
            wai.Endpoint(url="http://localhost:8000/v1", model="x/y"))))


def test_opd_report_names_the_teacher_serving_command() -> None:
    c = prime_rl.compile(seed_run("opd"))
    assert c.commands[0].startswith("CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model "
                                    "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL --server.port 8001")
    assert c.commands[-1] == "uv run rl @ opd.toml"
    ignored = {i.field: i.reason for i in c.ignores}
    assert "top_k" in ignored and "sampled" in ignored["top_k"]
    assert "seed" in ignored


def test_overrides_from_a_spec_table_are_flattened_checked_and_reported(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from whileai.spec.load import load_spec

    p = tmp_path / "s.toml"
    p.write_text('taskset = "reverse-text"\nmodel = "Qwen/Qwen3-0.6B"\n[method]\ntype = "grpo"\n'
                 "[overrides]\ntrainer.optim.lr = 2e-6\n'orchestrator.train.source.0.ratio' = 1.0\n"
                 "[overrides.inference.vllm]\nseed = 3\n")
    run = load_spec(p)
    assert set(run.overrides) == {"trainer.optim.lr", "orchestrator.train.source[0].ratio",
                                  "inference.vllm.seed"}  # one canonical form (whileai.catalogs.paths)
    c = prime_rl.compile(run)
    doc = tomllib.loads(c.text)
    assert doc["trainer"]["optim"]["lr"] == 2e-6 and doc["inference"]["vllm"]["seed"] == 3
    assert doc["orchestrator"]["train"]["source"][0]["ratio"] == 1.0
    lr = [r for r in c.reads if r.path == "trainer.optim.lr"]
    assert len(lr) == 1 and lr[0].field == "overrides.trainer.optim.lr"
    assert "replaces what learning_rate set" in lr[0].note
    assert any(i.field == "learning_rate" and "overrides.trainer.optim.lr" in i.reason for i in c.ignores)


def test_compiles_do_not_share_state() -> None:
    first = prime_rl.compile(seed_run("grpo")).text
    prime_rl.compile(seed_run("opd"))
    prime_rl.compile(seed_run("opsd", lora=False))
    assert prime_rl.compile(seed_run("grpo")).text == first
    assert "gpu_memory_utilization" not in first


def test_multi_agent_tasksets_get_their_own_roles() -> None:
    doc = tomllib.loads(prime_rl.compile(wai.RunSpec(
        taskset="kuhn-poker", model="Qwen/Qwen3-0.6B", method=wai.GRPO(samples=2))).text)
    for src in doc["orchestrator"]["train"]["source"] + doc["orchestrator"]["eval"]["source"]:
        assert set(src["env"]) == {"taskset", "player0", "player1"}
        assert src["env"]["player1"]["runtime"]["type"] == "subprocess"
    assert check_document(doc) == []


def test_template_is_a_format_string_with_one_field() -> None:
    with pytest.raises(SpecError, match="only placeholder"):
        wai.OPSD(template="{task} then {demonstration}")
    ok = wai.OPSD(template='json: {{"a": 1}} {demonstration}')
    assert ok.template.format(demonstration="D") == 'json: {"a": 1} D'


def test_committed_catalogue_names_the_pin_and_carries_structure_only() -> None:
    """schemas/prime-rl-*.catalog.json comes from prime-rl's own classes at the pin
    (scripts/gen_prime_rl_catalog.py, run with the loader's Python): every entry point's root,
    the renderers data, and none of prime-rl's descriptions."""
    schema = catalog().schema
    meta = schema["x-prime-rl"]
    assert meta["commit"].startswith("559b447") and meta["version"] == "0.8.0"
    assert set(meta["roots"]) == {"rl", "sft", "evals", "inference", "orchestrator", "trainer",
                                  "env-server"}
    assert all(r.rsplit("/", 1)[-1] in schema["$defs"] for r in meta["roots"].values())
    assert '"description"' not in json.dumps(schema)


def test_committed_catalogue_is_what_the_generator_makes() -> None:
    """Regenerates the catalogue with the loader's Python when WHILEAI_PRIME_RL_PYTHON names it
    (and WHILEAI_PRIME_RL_PIN the pinned source tree); the offline suite skips this."""
    import os
    import subprocess

    from helpers import ROOT

    python, pin = os.environ.get("WHILEAI_PRIME_RL_PYTHON"), os.environ.get("WHILEAI_PRIME_RL_PIN")
    if not python or not pin:
        pytest.skip("needs prime-rl's own loader: set WHILEAI_PRIME_RL_PIN to a prime-rl checkout at "
                    "559b447 and WHILEAI_PRIME_RL_PYTHON to a Python 3.12 with its "
                    "packages/prime-rl-configs installed (uv pip install -e $PIN/packages/prime-rl-configs)")
    done = subprocess.run([python, str(ROOT / "scripts" / "gen_prime_rl_catalog.py"), "--check",
                           "--pin-tree", pin], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("teacher", "gpus"), [("meta-llama/Llama-3.1-70B-Instruct", 6),
                                               ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL", 2)])
def test_the_header_counts_the_gpus_the_cost_line_counts(teacher: str, gpus: int) -> None:
    """A 70B teacher served on this node holds 4 GPUs: the header said 2 while the cost counted 6."""
    t = wai.Endpoint(url="http://localhost:8001/v1", model=teacher)
    c = wai.compile(wai.RunSpec(taskset="reverse-text", model="Qwen/Qwen3-8B", method=wai.OPD(t)),
                    "prime-rl")
    from whileai.report.text import render_text

    text = " ".join(render_text(c, 1000).split())
    assert f"{gpus} GPUs (1 inference GPU, 1 trainer GPU" in text and f"on {gpus} GPUs" in text
