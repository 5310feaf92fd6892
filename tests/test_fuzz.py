"""Property-based: whatever specs, `--set` values, API calls and `check` inputs arrive, whileai
exits 0 or 2, says one line on error, leaves nothing behind, never writes a planted secret,
recompiles byte for byte, and writes YAML that loads back to the values it reports.

Seeded and derandomized (the same examples every run), sized to stay well under a minute;
WHILEAI_FUZZ_SCALE=20 runs twenty times as many examples (a longer hunt, by hand).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app

runner = CliRunner()
SCALE = int(os.environ.get("WHILEAI_FUZZ_SCALE", "1"))
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=False,
                suppress_health_check=list(HealthCheck))
SECRETS = [  # planted; none may reach any output (bodies are distinctive enough to grep)
    "sk-proj-Zq8Lm2Kx9Vb4Nc7Rt1Wy", "hf_QwErTyUiOpAsDfGhJkLzXcVbNm12", "AKIAZ7Q2M4X8C6V1B3N5",
    "xoxb-2931-8842-Hq7Lp3Zm9Kx2", "glpat-Xk29LmQp84RtZw17Vn", "gsk_V8bN3mQ2xL7kP9zR4tW1yC6",
    "sk_live_9Zx7Cv5Bn3Mq1Wp8", "ghp_R4nD0mT0k3nV4lu3Xy8Zq2W", "Bearer Zx8Kq2LmN9pR4tV7wY1b",
    "Zx8Kq2LmN9pR4tV7wY1bC3dF6gH0jS5",  # no prefix: the entropy test
]
WORDS = ["steps", "max-steps", "int", "str", "list", "sampels", "lr", "method", "type", "x.y",
         "a..b", "a]", "[0]", "emoji😀", "new\nline", "", "PASSWORD", "port"]
KEYS = {
    "prime-rl": ["trainer.optim.lr", "inference.vllm.seed", "orchestrator.train.source[0].ratio",
                 "orchestrator.train.source.0.ratio", "inference.server.port", "max_steps",
                 "orchestrator.env_vars.PASSWORD", "orchestrator.env_vars.MY_FLAG",
                 "orchestrator.model.client.headers.X-Trace", "orchestrator.eval.interval",
                 "orchestrator.batch_size", "trainer.optim.lrr", "inference.vllm.x",
                 "inference.vllm.x.y", "model.name", "a..b", "a]", "orchestrator.eval"],
    "trl": ["learning_rate", "num_generations", "env.WANDB_PROJECT", "env.HF_TOKEN", "max_steps",
            "model_init_kwargs.x", "eval_strategy", "eval_steps", "logging_steps", "run_name",
            "per_device_train_batch_size", "hub_token", "lora_target_modules", "beta", "seed"],
}
scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.integers(-3, 200),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.text(max_size=30), st.sampled_from(SECRETS + WORDS + ["no", "1e-06", "{demonstration}"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(WORDS), inner, max_size=3), max_leaves=6)
SPEC_FIELDS = ["steps", "prompts", "gpus", "inference_gpus", "lora", "lora_rank", "seed",
               "prompt_tokens", "max_off_policy_steps", "output_dir", "model", "taskset", "reward",
               "eval", "monitor", "data", "max-steps", "int", "list"]
METHOD_FIELDS = ["samples", "temperature", "max_tokens", "learning_rate", "top_k", "divergence",
                 "anchor", "template", "privileged", "teacher", "max-tokens", "str"]
odd_text = st.sampled_from(["emoji 😀 ok", "tab\there", "quote ' \" ", "yes", "null", "1e-06", "~",
                            "- dash", "key: value", "#hash", "ünïcødé", "a\nb", "%s{x}", ""])
# values a user plausibly writes: most compile, so the properties of a success are exercised
GOOD: dict[str, Any] = {
    "steps": st.integers(1, 12), "seed": st.integers(0, 2**32 - 1), "lora": st.booleans(),
    "lora_rank": st.sampled_from([4, 8, 64]), "max_off_policy_steps": st.integers(0, 4),
    "prompt_tokens": st.integers(32, 4096), "output_dir": st.sampled_from(["out", "ck/pt 😀", "/tmp/x"]),
    "model": st.sampled_from(["Qwen/Qwen3-0.6B", "./local model", "./org/name-with-ünïcødé"]),
    "eval": st.fixed_dictionaries({"interval": st.integers(1, 40), "examples": st.integers(-1, 9)}),
    "monitor": st.fixed_dictionaries({"project": st.sampled_from(["p", "opd-vs-grpo-2026", "x😀"]),
                                      "tags": st.lists(st.sampled_from(["a", "b c", "😀"]), max_size=2)}),
}
GOOD_SETS = {
    "prime-rl": {"trainer.optim.lr": st.sampled_from([1e-6, 3e-5]), "inference.vllm.seed": st.integers(0, 9),
                 "orchestrator.train.source[0].ratio": st.just(1.0), "max_steps": st.integers(1, 9),
                 "orchestrator.env_vars.MY_FLAG": odd_text, "orchestrator.eval.interval": st.integers(1, 30),
                 "orchestrator.env_vars.HF_TOKEN": st.just("MY_HF_TOKEN")},
    "trl": {"learning_rate": st.sampled_from([1e-6, 1e-4, 0.5]), "logging_steps": st.integers(1, 5),
            "env.WANDB_PROJECT": odd_text, "env.emoji😀": odd_text, "run_name": odd_text,
            "max_steps": st.integers(1, 9), "eval_strategy": st.sampled_from(["no", "steps"]),
            "model_init_kwargs.revision": st.sampled_from(["0" * 40, "main"]),
            "lora_target_modules": st.lists(odd_text, min_size=1, max_size=2)},
}


@st.composite
def specs(draw: Any) -> tuple[dict[str, Any], str, list[str]]:
    backend = draw(st.sampled_from(["prime-rl", "trl"]))
    kind = draw(st.sampled_from(["opd", "opsd", "grpo"]))
    chaos = draw(st.integers(0, 4)) == 0
    method: dict[str, Any] = {"type": kind}
    if kind == "opd":
        method["teacher"] = draw(st.sampled_from([
            "vllm:a/b@http://localhost:8001/v1", "vllm:a/b@http://localhost:8001/v1?key=" + SECRETS[0],
            "vllm:a/b@http://u:" + SECRETS[4] + "@h/v1", "vllm:a/b@http://h:99999/v1"] if chaos else
            ["vllm:a/b@http://localhost:8001/v1", "vllm:c/d@https://teacher.example:9000/v1"]))
    if kind == "opsd" and draw(st.booleans()):
        method["template"] = draw(st.sampled_from(
            ["😀 {demonstration} 👍", "{{literal}} {demonstration}\n", "{{demonstration}}",
             "key: {demonstration} # not a comment"]))
    spec: dict[str, Any] = {"taskset": "reverse-text", "model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT",
                            "steps": draw(st.integers(1, 12)), "prompts": 2, "method": method}
    for name in draw(st.lists(st.sampled_from(sorted(GOOD)), max_size=3)):
        spec[name] = draw(GOOD[name])
    sets: list[str] = []
    overrides: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(GOOD_SETS[backend])), max_size=3, unique=True)):
        value = draw(GOOD_SETS[backend][key])
        if draw(st.booleans()):
            overrides[key] = value
        else:
            sets.append(f"{key}={tomli_w.dumps({'v': value})[4:].strip()}")
    if chaos:  # and now anything at all: unknown fields, odd types, secrets, malformed keys
        where = draw(st.sampled_from(["spec", "method", "overrides", "sets"]))
        if where == "spec":
            spec[draw(st.sampled_from(SPEC_FIELDS))] = draw(values)
        elif where == "method":
            method[draw(st.sampled_from(METHOD_FIELDS))] = draw(values)
        elif where == "overrides":
            overrides[draw(st.sampled_from(KEYS[backend] + WORDS))] = draw(values)
        else:
            rhs = draw(st.sampled_from(["5", "0", "inf", "x", "[1]", SECRETS[1], "{a=1}", "99999",
                                        "1979-05-27T07:32:00Z"]))
            sets.append(f"{draw(st.sampled_from(KEYS[backend] + WORDS))}={rhs}")
    if draw(st.integers(0, 3)) == 0:  # plant a secret where a plain text would compile
        secret = draw(st.sampled_from(SECRETS))
        where = draw(st.sampled_from(["model", "output_dir", "monitor", "tags", "teacher", "template",
                                      "override", "set", "key"]))
        if where in ("model", "output_dir"):
            spec[where] = f"runs/{secret}"
        elif where in ("monitor", "tags"):
            spec["monitor"] = ({"project": secret} if where == "monitor"
                               else {"project": "p", "tags": ["a", secret]})
        elif where == "teacher" and kind == "opd":
            method["teacher"] = f"vllm:a/b@http://localhost:8001/v1/{secret.split()[-1]}"
        elif where == "template" and kind == "opsd":
            method["template"] = f"{{demonstration}} {secret}"
        elif where == "set":
            sets.append(f"{'run_name' if backend == 'trl' else 'orchestrator.env_vars.MY_FLAG'}={secret}")
        elif where == "key":
            overrides[f"{'env' if backend == 'trl' else 'orchestrator.env_vars'}.{secret.split()[-1]}"] = "1"
        else:
            overrides["env.NOTE" if backend == "trl" else "orchestrator.env_vars.NOTE"] = [secret][0]
        spec["planted"] = True
    if overrides:
        spec["overrides"] = overrides
    return spec, backend, sets


def _strip(x: Any) -> Any:
    """TOML has no null; a key holding None is left out."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_strip(v) for v in x if v is not None]
    return x


def _everything(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _no_secret(text: str) -> None:
    for s in SECRETS:
        assert s not in text and s.split()[-1][6:] not in text, s


def _yaml_agrees(c: dict[str, Any], folder: Path) -> None:
    """config.yaml loads (PyYAML, as TRL does) to the values the report says it holds."""
    loaded = yaml.safe_load((folder / "config.yaml").read_text())
    for r in c["reads"]:
        if "." not in r["path"] and not r["path"].startswith("<") and r["path"] in loaded:
            assert loaded[r["path"]] == r["value"] or (
                isinstance(r["value"], float) and math.isclose(loaded[r["path"]], r["value"])), r


@settings(FUZZ, max_examples=250 * SCALE)
@given(specs(), st.booleans())
def test_compile_fuzz(case: tuple[dict[str, Any], str, list[str]], as_json: bool) -> None:
    spec, backend, sets = case
    planted = bool(spec.pop("planted", False))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            (root / "s.toml").write_text(tomli_w.dumps(_strip(spec)), encoding="utf-8")
        except (TypeError, ValueError, UnicodeEncodeError):
            event("not TOML")
            return  # not expressible as TOML (the API fuzz covers such values)
        args = ["compile", str(root / "s.toml"), "-b", backend, "-o", str(root / "out")]
        args += [a for s in sets for a in ("--set", s)] + (["--json"] if as_json else [])
        r = runner.invoke(app, args, env={"COLUMNS": "120"})
        out, err = r.stdout, r.stderr
        assert r.exit_code in (0, 2), (r.exit_code, out, err, r.exception)
        event(f"{backend} exit {r.exit_code}")
        _no_secret(out + err)
        assert r.exit_code == 2 or not planted, "a planted secret was accepted"
        if r.exit_code == 2:
            assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
            assert not (root / "out").exists()  # nothing half-written
            return
        _no_secret(_everything(root / "out"))
        again = runner.invoke(app, [*args[:5], str(root / "again"), *args[6:]])
        assert again.exit_code == 0
        assert _files(root / "out") == _files(root / "again")
        if backend == "trl" and as_json:
            _yaml_agrees(json.loads(out), root / "out")


api_values = st.one_of(values, st.none(), st.binary(max_size=8), st.just(object()),
                       st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                               min_size=1, max_size=2))


@settings(FUZZ, max_examples=200 * SCALE)
@given(st.dictionaries(st.sampled_from(["steps", "prompts", "gpus", "lora", "overrides", "out", "seed",
                                        "model", "taskset", "method", "data", "reward", "monitor",
                                        "output_dir", "eval", "force"]), api_values, max_size=3),
       st.sampled_from(["prime-rl", "trl", "verl", 3]))
def test_api_raises_spec_error_only(kw: dict[str, Any], backend: Any) -> None:
    kw = {"taskset": "reverse-text", "method": "grpo", "model": "m"} | kw
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(kw.get("out"), str):
            kw["out"] = str(Path(tmp) / kw["out"][:40]) if kw["out"] else kw["out"]
        try:
            taskset, method = kw.pop("taskset"), kw.pop("method")
            if backend == "trl":
                c = wai.trl_config(taskset, method, **kw)
            else:
                c = wai.prime_rl_config(taskset, method, **kw)
                wai.compile(c.run, backend)
        except wai.SpecError as e:
            assert "\n" not in str(e)
            _no_secret(str(e))
            return
        _no_secret(json.dumps(c.to_dict()))


toml_values = st.recursive(
    st.one_of(st.integers(-5, 2**62), st.booleans(), st.text(max_size=12), st.floats(allow_nan=False)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
CHECK_KEYS = ["model", "trainer", "orchestrator", "inference", "deployment", "max_steps", "ckpt",
              "orchestrator.train", "source", "name", "batch_size", "algo", "teacher", "base_url"]


@settings(FUZZ, max_examples=200 * SCALE)
@given(st.dictionaries(st.sampled_from(CHECK_KEYS), toml_values | st.dictionaries(
    st.sampled_from(CHECK_KEYS), toml_values, max_size=4), max_size=5), st.booleans())
def test_check_fuzz(doc: dict[str, Any], garble: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "c.toml"
        data = tomli_w.dumps(doc).encode()
        p.write_bytes(data[:-3] + b"\xff\xfe" if garble and data else data)
        r = runner.invoke(app, ["check", str(p)])
        assert r.exit_code in (0, 2), (r.exit_code, r.stdout, r.stderr, r.exception)
        lines = r.stderr.splitlines()
        assert all(x.startswith("error: ") for x in lines) and "Traceback" not in r.stderr
        assert r.exit_code == 0 or lines


any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["😀", "\ud83d", "key\n", "yes", "no", "~", "null", "1e-06", "- x", "a: b", "#c", "'\"", "\t", ""])
yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False,
                                                                             allow_infinity=False)
    | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=10)


@settings(FUZZ, max_examples=300 * SCALE)
@given(st.dictionaries(any_text, yaml_values, max_size=5))
def test_yaml_round_trips_generated_values(doc: dict[str, Any]) -> None:
    """What the TRL backend writes, PyYAML (TRL's loader) reads back as the same values:
    emoji, lone surrogates, keys ending in a newline, YAML words, tiny and huge floats."""
    from whileai.targets.trl.compile import dumps

    assert yaml.safe_load(dumps(doc)) == doc
