"""The one secret scanner: every common key format and long random tokens are caught; the names,
paths, URLs, commit SHAs and ids people really write are not; a message never undoes its own
masking; a key that names a secret takes a variable name."""

from __future__ import annotations

import hashlib
import json
import random
import string
import uuid

import pytest
from helpers import REFERENCE, seed_run

import whileai as wai
from whileai import secretscan
from whileai.errors import SpecError, raw

SECRETS = [
    "sk-live-0123456789abcdef", "sk-proj-YEyc5uq2GrsBEzEu44jiZ0Ab", "sk-ant-api03-Xy7Zk2Lm9Qp4Rt8W",
    "sk_live_5T0hgTrJ8s7Pu5Wmi5BvYO", "rk_test_51Hq8Zk2Lm9Qp4", "hf_OKqfrHdJQipELNQypRgxqGdyUuEvWx",
    "ghp_IGBLXv1f1iqLgrZ2LzLhrM82MIabcd", "gho_WWfa70sBKKSqkokddvPBJziN4H",
    "github_pat_11ABCDEFG0_abcdefghijkl",
    "glpat-iysCT-nAOANVXbSfoL-C", "xoxb-123456789012-123456789012-AbCdEf", "xoxp-1234-5678-abcd",
    "AKIAIOSFODNN7EXAMPLE", "gsk_We2if2rcyUC5W3PSXYk0Q8drtK", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sflKxwRJSMeKKF2QT4fwpM", "Bearer abc.def-ghi",
    "ak-ishbIiC8VU93aLO7Enky5e", "http://user:pw@host/v1", "https://h/v1?api_key=abc123",
    "vllm:m@http://h:1/v1?token=xyz", "Zx8Kq2LmN9pR4tV7wY1bC3dF6gH0jS5", "k3j4h5g6f7d8s9a0q1w2e3r4t5",
    "-----BEGIN RSA PRIVATE KEY-----",
]
NOT_SECRETS = [
    "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "meta-llama/Llama-3.1-8B-Instruct",
    "mistralai/Mixtral-8x7B-Instruct-v0.1", "Qwen/Qwen3-30B-A3B-Instruct-2507", "google/gemma-2-2b-it",
    "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "HuggingFaceTB/SmolLM2-135M-Instruct",
    "/home/user/checkpoints/run_2024_05_01/step_100", "./outputs/opd-reverse-text", "C:/runs/x",
    "http://localhost:8001/v1", "https://api.openai.com/v1", "https://teacher.internal:9000/v1",
    hashlib.sha1(b"commit").hexdigest(), hashlib.sha256(b"digest").hexdigest(), str(uuid.uuid4()),
    "opd-vs-grpo-qwen3-0.6b-reverse-text-sweep-2026", "primeintellect/reverse-text@0.1.2",
    "will/wiki-search@0.2.0-alpha.3", "s3://bucket/ckpt/qwen3_0p6b_grpo_lr3e6_bs64",
    "Qwen2VLForConditionalGeneration", "MiniMaxM2RendererConfig", "VLLM_API_KEY", "HF_TOKEN",
    "my_rewards.contains_answer", "hf_cache", "hf_datasets_cache", "sk-learn", "task-risk-assessment",
    "A reference solution for this task follows.\n<demonstration>\n{demonstration}\n</demonstration>",
    "models--Qwen--Qwen3-0.6B/snapshots/" + hashlib.sha1(b"x").hexdigest(), "wandb-team-2026",
]


@pytest.mark.parametrize("text", SECRETS)
def test_every_format_is_caught_and_masked(text: str) -> None:
    assert secretscan.find(text), text
    hidden = secretscan.mask(f"before {text} after")
    assert "[redacted]" in hidden and hidden.startswith("before") and hidden.endswith("after")
    if "?" in text:
        body = text.split("=")[-1]
    elif "://" in text:
        body = text.split("://")[1].split("@")[0]
    else:
        body = text[-8:]
    assert body not in hidden, hidden


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_realistic_names_never_trip_it(text: str) -> None:
    assert secretscan.find(text) is None


def test_reference_configs_and_catalogues_hold_no_false_alarm() -> None:
    """Every string in prime-rl's renderer map (hundreds of real model ids)."""
    path = REFERENCE / "prime-rl" / "model-renderers.json"
    if not path.exists():
        pytest.skip(f"no {path}: restore tests/fixtures/reference (git checkout -- tests/fixtures)")
    found = json.loads(path.read_text())
    names = list(found) + [v for v in found.values() if isinstance(v, str)]
    assert names and [n for n in names if secretscan.find(n)] == []


def test_random_tokens_are_caught_most_of_the_time() -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits
    tokens = ["".join(rng.choice(alphabet) for _ in range(32)) for _ in range(300)]
    assert sum(bool(secretscan.find(t)) for t in tokens) / len(tokens) > 0.95


@pytest.mark.parametrize("field", ["model", "output_dir", "monitor", "template", "teacher", "overrides",
                                   "array", "key", "data", "reward"])
def test_a_secret_anywhere_in_a_spec_is_refused_without_echoing_it(field: str) -> None:
    s = "gsk_V8bN3mQ2xL7kP9zR4tW1yC6"
    make = {
        "model": lambda: wai.RunSpec(taskset="reverse-text", model=f"org/{s}", method=wai.GRPO()),
        "output_dir": lambda: seed_run("grpo", output_dir=f"/runs/{s}"),
        "monitor": lambda: seed_run("grpo", monitor={"project": s}),
        "template": lambda: seed_run("opsd", method=wai.OPSD(template=f"{{demonstration}} {s}")),
        "teacher": lambda: wai.OPD(f"vllm:a/b@http://localhost:8001/v1/{s}"),
        "overrides": lambda: seed_run("grpo", overrides={"orchestrator.env_vars.NOTE": s}),
        "array": lambda: seed_run("grpo", monitor={"project": "p", "tags": ["a", s]}),
        "key": lambda: seed_run("grpo", overrides={f"orchestrator.env_vars.{s}": "1"}),
        "data": lambda: seed_run("grpo", data=f"/data/{s}.jsonl"),
        "reward": lambda: seed_run("grpo", reward=f"m.{s}"),
    }[field]
    with pytest.raises(SpecError) as e:
        make()
    assert s not in str(e.value) and s[4:] not in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("key,value,ok", [
    ("orchestrator.env_vars.PASSWORD", "hunter2", False),
    ("orchestrator.env_vars.HF_TOKEN", "abc", False),
    ("orchestrator.env_vars.HF_TOKEN", "MY_HF_TOKEN", True),
    ("orchestrator.env_vars.WANDB_API_KEY", "${WANDB_KEY}", True),
    ("orchestrator.model.client.headers.Authorization", "token123", False),
    ("orchestrator.env_vars.TOKENIZERS_PARALLELISM", "false", True),
    ("orchestrator.algo.demo_key", "answer", True),
    ("orchestrator.algo.teacher.api_key_var", "OPENAI_API_KEY", True),
])
def test_a_key_that_names_a_secret_takes_a_variable_name(key: str, value: str, ok: bool) -> None:
    if ok:
        seed_run("grpo", overrides={key: value})
        return
    with pytest.raises(SpecError, match="NAME of an environment variable") as e:
        seed_run("grpo", overrides={key: value})
    assert value not in str(e.value).split(";", 1)[0].replace(key, "")


def test_a_message_never_undoes_its_own_redaction() -> None:
    s = "sk-proj-YEyc5uq2GrsBEzEu44jiZ0Ab"
    e = SpecError(f"overrides.{s}", s, f"not {s}", hint=f"got {s!r}")
    assert s not in str(e) and s[8:] not in str(e) and str(e).count("[redacted]") >= 3
    e = SpecError("x", raw(f"'{s}'\nsecond line\u2028"), "ok")
    assert "\n" not in str(e) and "\u2028" not in str(e) and s not in str(e)
    e = SpecError("x", "y" * 10_000, "ok")
    assert len(str(e)) < 300


GLUED = ["answerAKIAIOSFODNN7EXAMPLE", "xghp_IGBLXv1f1iqLgrZ2LzLhrM82MIabcdefgh",
         "keyAIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "myhf_OKqfrHdJQipELNQypRgxqGdyUuEvWxYzAB",
         "tokensk-proj-YEyc5uq2GrsBEzEu44jiZ0Ab", "pre_sk_live_5T0hgTrJ8s7Pu5Wmi5BvYO",
         "xeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sflKxwRJSMeKKF2QT4fwpM",
         "myglpat-iysCT-nAOANVXbSfoL-C",
         # known prefixes anywhere in a value, with the bodies their unglued forms take
         "answerglpat-1234567890abcdef", "answerglpat-Ab12Cd34Ef56", "answerglptt-0a1b2c3d4e5f6a7b",
         "xgho_WWfa70sBKKSqkokddvPBJziN4Habcdefgh", "tokenghs_16C7e42F292c6912E7710c838347Ae178B4a",
         "mygithub_pat_11ABCDEFG0_abcdefghijkl", "answersk-ant-api03-Xy7Zk2Lm9Qp4Rt8W",
         "answersk-T3BlbkFJabcdefghij1234567890abcdefghij12", "myxoxb-123456789012-123456789012-AbCdEf",
         "answerhf_OKqfrHdJQipELNQypRgxqGdyUuEvWx", "WANDB_API_KEY=" + "0123456789abcdef" * 2 + "01234567",
         "wandb_key: " + "a1b2c3d4e5" * 4, "local-" + "0123456789abcdef" * 2 + "01234567"]
# ordinary words around the same prefixes: none is a key
GLUED_WORDS = ["highs_and_lows", "thighs_and_calves_workout2024", "weighs_abcdefghijklmnopqrstuv1",
               "kiosk-0123456789abcdefghij", "the-risk-0123456789abcdefghijklmn", "ask-the-teacher-1234",
               "xoxo-hugs", "glpat", "disk-usage-monitoring-tool",
               "commit 0123456789abcdef0123456789abcdef01234567",
               "wandb-run-0123456789abcdef0123456789abcdef01234567", "local-runs", "whileai-r32",
               "mask-rcnn-resnet50-fpn-coco-2017", "tasksets-2026", "ghost_writer_2024"]


@pytest.mark.parametrize("text", GLUED)
def test_a_key_glued_inside_a_longer_word_is_caught(text: str) -> None:
    assert secretscan.find(text), text
    assert "[redacted]" in secretscan.mask(text)


@pytest.mark.parametrize("text", GLUED_WORDS)
def test_words_around_the_prefixes_are_no_keys(text: str) -> None:
    assert secretscan.find(text) is None


@pytest.mark.parametrize("target", ["prime-rl", "trl"])
def test_a_gitlab_token_glued_to_a_word_is_refused(tmp_path, target: str) -> None:  # type: ignore[no-untyped-def]
    """The issue's case: privileged = 'answerglpat-…' reached the written file."""
    from typer.testing import CliRunner

    from whileai.cli.app import app

    spec = tmp_path / "s.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
                    "[method]\ntype = \"opsd\"\nprivileged = 'answerglpat-1234567890abcdef'\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["compile", str(spec), "-b", target, "-o", str(out)])
    assert r.exit_code == 2 and "method.privileged" in r.stderr and "1234567890" not in r.stderr
    assert not out.exists()


def test_a_glued_key_never_reaches_the_written_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from whileai.cli.app import app

    spec = tmp_path / "s.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
                    '[method]\ntype = "opsd"\nprivileged = "answerAKIAIOSFODNN7EXAMPLE"\n')
    r = CliRunner().invoke(app, ["compile", str(spec), "-o", str(tmp_path / "o.toml")])
    assert r.exit_code == 2 and "method.privileged" in r.stderr and "AKIA" not in r.stderr
    assert not (tmp_path / "o.toml").exists()
