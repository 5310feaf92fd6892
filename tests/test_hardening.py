"""Issue 10's reproducers, one test each: every bad input ends in one clear line and exit 2,
nothing hangs, nonsense is refused, reports tell the compiled truth, pipes close quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT, seed_run
from typer.testing import CliRunner

import whileai as wai
from whileai.cli.app import app
from whileai.targets.trl import compile as trl

runner = CliRunner()
HEAD = 'taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
GRPO = '[method]\ntype = "grpo"\n'


def cli(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def one_line(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def spec(tmp_path: Path, text: str, name: str = "s.toml") -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return str(tmp_path / name)


TRACEBACKS = [  # (spec text, extra args, words of the one line)
    (HEAD + "max-steps = 10\n" + GRPO, [], ["max-steps: unknown field", "did you mean 'steps'"]),
    (HEAD + GRPO + "max-tokens = 10\n", [], ["method.max-tokens: unknown field",
                                            "did you mean 'max_tokens'"]),
    (HEAD + "int = 1\n" + GRPO, [], ["int: unknown field"]),
    (HEAD + "[eval]\nlist = 1\n" + GRPO, [], ["eval.list: unknown field", "'interval', 'examples'"]),
    (HEAD + GRPO, ["-b", "trl", "--set", "num_generations=0"], ["num_generations", "at least 2"]),
    (HEAD + GRPO, ["--set", "inference.vllm.a..b=1"], ["malformed key", "a..b"]),
    (HEAD + GRPO, ["--set", "inference.vllm.a]=1"], ["malformed key", "a]"]),
    (HEAD + GRPO, ["--set", "inference.vllm.x=2", "--set", "inference.vllm.x.y=1"],
     ["inference.vllm.x.y", "cannot also be a table"]),
    (HEAD + GRPO, ["-b", "trl", "--set", "model_init_kwargs={a=1979-05-27T07:32:00Z}"],
     ["model_init_kwargs.a", "datetime"]),
    (HEAD + GRPO, ["-o", "x" * 300 + ".toml"], ["out:", "at most 255 bytes"]),
    (HEAD + '[method]\ntype = "opd"\n[method.teacher]\nurl = "http://h:8001/v1"\nmodel = "m"\n'
     "str = 1\n", [], ["method.teacher.str: unknown field", "'url', 'model' and 'api_key_env'"]),
    (HEAD + "[monitor]\nproject = 'p'\nlist = 1\n" + GRPO, [], ["monitor.list: unknown field"]),
    (HEAD + 'method = "grpo"\n', [], ["method: 'grpo'", "a table: [method] with type"]),
]


@pytest.mark.parametrize("text,args,words", TRACEBACKS, ids=[t[2][0] for t in TRACEBACKS])
def test_former_tracebacks_are_one_line(tmp_path: Path, text: str, args: list[str],
                                        words: list[str]) -> None:
    code, _, err = cli("compile", spec(tmp_path, text), *args)
    one_line(code, err, *words)


@pytest.mark.parametrize("content", [
    b"\xff\xfe[model]\n", b"orchestrator = 1\n", b"[trainer]\n[orchestrator.train]\nsource = 5\n",
    b"[trainer]\n[orchestrator]\n[model]\nname = [1]\n", b"[orchestrator]\nbatch_size = 'x'\n",
    b"[trainer]\n[orchestrator.algo]\nteacher = 3\n",
    b"max_steps = 1000000000000000000000000000000\n[trainer]\n[orchestrator]\n",
])
def test_check_never_tracebacks(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "c.toml"
    p.write_bytes(content)
    code, _, err = cli("check", str(p))
    assert code == 2 and err and "Traceback" not in err
    assert all(line.startswith("error: ") for line in err.splitlines())


@pytest.mark.parametrize("where", ["data", "check"])
def test_fifos_and_devices_are_refused_not_read(tmp_path: Path, where: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        if where == "data":
            argv = ["compile", spec(tmp_path, HEAD + f'data = "{target}"\n[method]\ntype = "opsd"\n'),
                    "-b", "trl"]
        else:
            argv = ["check", target]
        r = subprocess.run([sys.executable, "-m", "whileai", *argv], capture_output=True, text=True,
                           timeout=60)
        one_line(r.returncode, r.stderr, "regular")


@pytest.mark.parametrize("text,words", [
    (HEAD.replace('reverse-text"', 'reverse-text\\n"') + GRPO, ["taskset", "one line"]),
    (HEAD + "steps = 1000000000000000000000000000000\n" + GRPO, ["steps", "64-bit"]),
    (HEAD + "prompts = 9223372036854775807\n" + GRPO, ["prompts", "less than or equal"]),
    (HEAD + '[method]\ntype = "opd"\nlearning_rate = inf\nteacher = "vllm:a/b@http://h:8001/v1"\n',
     ["learning_rate", "finite"]),
    (HEAD + '[method]\ntype = "opd"\nteacher = "vllm:a/b@http://localhost:99999/v1"\n',
     ["teacher.url", "1 to 65535"]),
    (HEAD + '[method]\ntype = "opsd"\ntemplate = "{{demonstration}} only"\n',
     ["method.template", "placeholder {demonstration}"]),
    (HEAD + '[method]\ntype = "opsd"\ntemplate = "{demonstration!r}"\n', ["method.template", "plain"]),
    (HEAD + '[method]\ntype = "opsd"\nprivileged = "answer\\n"\n', ["method.privileged"]),
    (HEAD + 'reward = "m.f\\n"\n' + GRPO, ["reward"]),
    (HEAD + GRPO + "[overrides]\n'inference.server.port' = 99999\n", ["port", "65535"]),
    (HEAD + "seed = 4294967296\n" + GRPO, ["seed"]),
    (HEAD + '[method]\ntype = "opd"\n[method.teacher]\nurl = "http://h:8001/v1"\nmodel = "m"\n'
     'api_key_env = "VLLM_API_KEY\\n"\n', ["api_key_env"]),
])
def test_accepted_nonsense_is_refused(tmp_path: Path, text: str, words: list[str]) -> None:
    code, _, err = cli("compile", spec(tmp_path, text), "-o", str(tmp_path / "o.toml"))
    one_line(code, err, *words)
    assert not (tmp_path / "o.toml").exists()


@pytest.mark.parametrize("body,args", [
    ('model = "org/AKIAIOSFODNN7EXAMPLE"\n', []),
    ('output_dir = "/runs/glpat-abcdefghij1234567890"\n', []),
    ('[monitor]\nproject = "xoxb-1234567890-abcdefghij"\n', []),
    ('[overrides.orchestrator.env_vars]\nPASSWORD = "hunter2-not-a-name"\n', []),
    ("", ["--set", "orchestrator.model.client.headers.X-Key=sk_live_abcdefgh12345678"]),
    ("", ["-b", "trl", "--set", "lora_target_modules=['q_proj', 'gsk_abcdefghijklmnop12345678']"]),
    ("", ["-b", "trl", "--set", "env.PASSWORD=hunter2"]),
])
def test_secrets_are_refused_and_never_shown(tmp_path: Path, body: str, args: list[str]) -> None:
    text = HEAD + body + GRPO if not body.startswith("[") else HEAD + GRPO + body
    code, out, err = cli("compile", spec(tmp_path, text), "-o", str(tmp_path / "out"), *args)
    one_line(code, err)
    for s in ("AKIAIOSFODNN7EXAMPLE", "glpat-abcdefghij", "xoxb-1234567890", "hunter2",
              "sk_live_abcdefgh", "gsk_abcdefghijklmnop"):
        assert s not in out + err
    assert not (tmp_path / "out").exists()


def test_a_byte_order_mark_is_not_a_syntax_error(tmp_path: Path) -> None:
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + (EXAMPLES / "grpo.toml").read_bytes())
    assert cli("compile", str(p))[0] == 0


def test_emoji_and_odd_strings_reach_trl_intact(tmp_path: Path) -> None:
    import yaml

    odd = {"run_name": "😀 run: #1 - yes", "env.NOTE😀": "line\nbreak 👍🏽", "logging_steps": 1,
           "learning_rate": 1e-06, "lora_target_modules": ["q_proj", "ünïcødé"]}
    c = trl.compile(wai.RunSpec(taskset="reverse-text", model="m", overrides=odd,
                                method=wai.OPSD(template="😀 {demonstration} 🎉")))
    loaded = yaml.safe_load(c.files["config.yaml"])
    assert loaded["run_name"] == odd["run_name"] and loaded["env"]["NOTE😀"] == "line\nbreak 👍🏽"
    assert loaded["learning_rate"] == 1e-06 and isinstance(loaded["learning_rate"], float)
    assert loaded["lora_target_modules"] == ["q_proj", "ünïcødé"]
    assert "😀 {privileged_context} 🎉" in loaded["teacher_prompt_template"]
    assert "\\ud83d" not in c.files["config.yaml"]  # no escaped surrogate halves


def test_the_summary_tells_the_compiled_values(tmp_path: Path) -> None:
    spec = tmp_path / "grpo.toml"
    spec.write_text('taskset = "reverse-text"\nmodel = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"\n'
                    'steps = 100\nprompts = 64\n[method]\ntype = "grpo"\n[eval]\ninterval = 25\n')
    code, out, _ = cli("compile", str(spec), "--set", "max_steps=5")
    assert code == 0 and "  5 steps x 64 prompts x 8 rollouts" in out
    assert "warning [eval-never-runs]: eval interval 25 > 5 steps" in out
    code, out, _ = cli("compile", str(EXAMPLES / "grpo.toml"), "--set", "orchestrator.batch_size=128",
                       "--set", "trainer.model.lora.alpha=16")
    assert "x 16 prompts x 8 rollouts = 128 rollouts per step" in out and "LoRA rank 32" in out


def test_without_out_the_report_says_not_written(tmp_path: Path) -> None:
    code, out, _ = cli("compile", str(EXAMPLES / "grpo.toml"))
    assert out.splitlines()[0] == "prime-rl config: grpo.toml (not written)"
    assert "  run (once written with -o):\n    uv run rl @ grpo.toml" in out
    code, out, _ = cli("compile", str(EXAMPLES / "grpo.toml"), "-o", str(tmp_path / "g.toml"))
    assert out.splitlines()[0] == f"prime-rl config: {tmp_path / 'g.toml'}"
    assert "  run:\n    uv run rl @ g.toml" in out


def test_the_reward_module_travels_with_the_run_directory(tmp_path: Path) -> None:
    own = ROOT / "examples" / "own-data"
    out = tmp_path / "run"
    code, stdout, err = cli("compile", str(own / "grpo.toml"), "-b", "trl", "-o", str(out))
    assert code == 0, err
    assert (out / "rewards.py").read_text() == (own / "rewards.py").read_text()
    assert "rewards.py copied from" in stdout
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "score.py").write_text("def f(completions, **kw):\n    return [0.0]\n")
    text = HEAD + 'reward = "pkg.score.f"\n' + GRPO
    code, stdout, err = cli("compile", spec(tmp_path, text), "-b", "trl", "-o", str(tmp_path / "r2"))
    assert code == 0 and f"PYTHONPATH={tmp_path} trl grpo --config config.yaml" in stdout
    assert f"PYTHONPATH={tmp_path} trl grpo" in (tmp_path / "r2" / "README.md").read_text()


@pytest.mark.parametrize("reward,words", [
    ("nowhere.f", ["no module 'nowhere'"]), ("rewards.missing", ["'missing'", "rewards.py"]),
    ("broken.f", ["does not parse"]),
])
def test_a_reward_that_cannot_be_imported_is_an_error_at_compile(tmp_path: Path, reward: str,
                                                                 words: list[str]) -> None:
    (tmp_path / "rewards.py").write_text("def contains_answer(**kw):\n    return []\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "marker.py").write_text("raise SystemExit('executed')\n")
    code, _, err = cli("compile", spec(tmp_path, HEAD + f'reward = "{reward}"\n' + GRPO), "-b", "trl")
    one_line(code, err, "reward", *words)


def test_finding_a_reward_runs_none_of_its_code(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text("import os\nos._exit(9)\ndef f(**kw):\n    return []\n")
    code, _, err = cli("compile", spec(tmp_path, HEAD + 'reward = "boom.f"\n' + GRPO), "-b", "trl")
    assert code == 0, err


@pytest.mark.parametrize("argv", [
    ["compile", "examples/grpo.toml", "examples/opsd.toml", "examples/opd.toml"],
    ["compile", "examples/opd.toml", "--json"], ["compile", "examples/opd.toml", "--rich"],
    ["explain", "examples/opd.toml"], ["methods"], ["rules"], ["schema"],
])
def test_a_closed_pipe_ends_quietly(argv: list[str]) -> None:
    """`whileai ... | head -1`: stdout is a pipe whose reader has gone (made certain here by
    closing the read end first): exit 0, nothing on stderr, no traceback."""
    code = ("import os, sys\nr, w = os.pipe()\nos.close(r)\nos.dup2(w, 1)\n"
            f"sys.argv = ['whileai', *{argv!r}]\nfrom whileai.cli.app import main\nmain()\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80"))
    assert (r.returncode, r.stderr) == (0, "")


def test_api_raises_spec_error_only(chdir_tmp: Path) -> None:
    calls = [
        lambda: wai.compile(seed_run("grpo"), out=123),  # type: ignore[arg-type]
        lambda: wai.compile(seed_run("grpo"), out="a\x00b.toml"),
        lambda: wai.compile("not a spec", "prime-rl"),  # type: ignore[arg-type]
        lambda: wai.compile(seed_run("grpo"), target=["trl"]),  # type: ignore[arg-type]
        lambda: wai.prime_rl_config("reverse-text", 5, model="m"),
        lambda: wai.prime_rl_config("reverse-text", "grpo", model="m" * 5000),
        lambda: wai.prime_rl_config("reverse-text", "grpo", model="m", overrides={"a..b": 1}),
        lambda: wai.trl_config("reverse-text", "grpo", model="m", out="y" * 300),
        lambda: wai.OPSD(template="{{demonstration}}"),
    ]
    for call in calls:
        with pytest.raises(wai.SpecError) as e:
            call()
        assert "\n" not in str(e.value)
    assert list(chdir_tmp.iterdir()) == []
