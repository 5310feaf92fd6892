"""The report's words (issue 40, item 13): counts agree with their nouns, units are named, TOML
values read as TOML, and no line contradicts another."""

from __future__ import annotations

from helpers import EXAMPLES
from typer.testing import CliRunner

from whileai.api import compile_all
from whileai.cli.app import app
from whileai.cli.pairs import result_lines
from whileai.errors import SpecError
from whileai.spec.load import load_spec
from whileai.words import counted, plural

runner = CliRunner()


def cli(*args: str) -> str:
    r = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.stderr
    return r.stdout


def test_counted_agrees_with_its_noun() -> None:
    assert counted(1, "samples") == "1 sample"
    assert counted("~1", "prompts") == "~1 prompt"
    assert counted(2, "samples") == "2 samples"
    assert plural(1, "GPUs") == "GPU" and plural(4, "GPUs") == "GPUs"


def test_a_teacher_on_one_gpu_is_served_on_gpu_n(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for model, want in (("Qwen3-14B", "served on GPU 2 of this node"),
                        ("Qwen3-32B", "served on GPUs 2,3 of this node")):
        spec = tmp_path / "t.toml"
        spec.write_text((EXAMPLES / "opd.toml").read_text().replace(
            "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@", f"vllm:Qwen/{model}@"))
        out = " ".join(cli("compile", str(spec)).split())
        assert want in out


def test_verl_names_the_other_node_once() -> None:
    two = cli("compile", str(EXAMPLES / "scale/grpo-32b-2nodes.toml"), "--target", "verl")
    assert "# on the other node" in two and "other 1 nodes" not in two
    four = cli("compile", str(EXAMPLES / "scale/grpo-32b-4nodes.toml"), "--target", "verl")
    assert "# on each of the other 3 nodes" in four


def test_a_comparison_says_paired_by_task_or_unpaired() -> None:
    row = {"arm": "opd", "baseline": "grpo", "ci95": None, "delta": None, "p_text": "n/a",
           "verdict": "too few tasks"}
    res = {"arms": {}, "comparisons": [{**row, "n_tasks": 1, "paired": False},
                                       {**row, "n_tasks": 30, "paired": True}]}
    lines = result_lines(res)
    assert "1 task (unpaired)" in lines[0] and "30 tasks (paired by task)" in lines[1]
    assert "False" not in " ".join(lines) and "True" not in " ".join(lines)


def test_a_boolean_is_named_as_toml_writes_it() -> None:
    assert "lora: true is not allowed" in str(SpecError("lora", True, "false when then follows"))
    assert "lora: false is not allowed" in str(SpecError("lora", False, "true"))


def test_methods_says_what_unset_means() -> None:
    r = runner.invoke(app, ["methods"], env={"COLUMNS": "80"})
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "= None" not in text
    assert "learning_rate unset: LoRA 1e-4" in text


def test_a_met_grpo_arm_is_not_also_unused() -> None:
    specs = [load_spec(EXAMPLES / "opd.toml"), load_spec(EXAMPLES / "grpo.toml")]
    opd = compile_all(specs, "prime-rl", names=["opd", "grpo"])[0]
    header = " ".join(opd.header())
    assert "needs-grpo-arm is met" in header
    assert "accepted needs-grpo-arm but it does not apply" not in header


def test_a_layout_names_its_units() -> None:
    one = cli("compile", str(EXAMPLES / "opd.toml"))
    assert "2 GPUs (1 inference GPU, 1 trainer GPU)" in " ".join(one.split())
    four = " ".join(cli("compile", str(EXAMPLES / "scale/grpo-32b-4nodes.toml")).split())
    assert "(2 trainer nodes, 2 inference nodes (1 replica of 2 nodes))" in four


def test_a_cpu_trl_report_costs_no_gpu() -> None:
    out = " ".join(cli("compile", str(EXAMPLES / "grpo.toml"), "--target", "trl", "--cpu").split())
    assert "on 1 GPU" not in out and "GPU-hours held" not in out
    assert "no GPU-hour estimate: compiled for the CPU (--cpu)" in out


def test_two_trl_specs_have_two_headers() -> None:
    out = cli("compile", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opd.toml"), "--target", "trl")
    heads = [line for line in out.splitlines() if line.startswith("trl config:")]
    assert heads == ["trl config: config.yaml for grpo (not written)",
                     "trl config: config.yaml for opd (not written)"]
