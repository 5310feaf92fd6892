"""Arms from spec files: names, baseline, the shared-holdout check, pairs, repeats, budgets,
the offline mapping onto tiny models, and `whileai arms`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES

from whileai.cost.budget import mismatch, parse_budget, per_step, steps_for
from whileai.errors import SpecError
from whileai.launch.arms import DEFAULT_PAIRS, comparisons, load_arms, match_budget, repeat, replace_run
from whileai.targets.prime_rl import compile as prime_rl
from whileai.targets.trl.launch import Offline
from whileai.tasksets.builtin import task_texts

ROOT = Path(__file__).resolve().parents[2]
MINE = ROOT / "tests" / "data" / "arms"
FOUR = sorted(MINE.glob("*.toml"))
BUNDLED = [EXAMPLES / f"{n}.toml" for n in ("grpo", "opd", "opsd")]


def spec(tmp: Path, name: str, **top: str) -> Path:
    fields = {"taskset": '"reverse-text"', "model": '"S"'} | top
    text = "".join(f"{k} = {v}\n" for k, v in fields.items())
    p = tmp / f"{name}.toml"
    p.write_text(text + '[method]\ntype = "grpo"\n')
    return p


def test_bundled_examples_are_arms_against_grpo() -> None:
    arms = load_arms(BUNDLED)
    assert arms.baseline == "grpo" and list(arms.runs) == ["grpo", "opd", "opsd"]
    assert arms.pairs == (("opd", "grpo"), ("opsd", "grpo"))


def test_four_own_specs_need_a_named_baseline_and_take_extra_pairs() -> None:
    assert len(FOUR) == 4
    with pytest.raises(SpecError, match="several GRPO arms"):
        load_arms(FOUR)
    arms = load_arms(FOUR, baseline="baseline", pairs=["distill:self-distill"])
    assert arms.baseline == "baseline"
    assert arms.pairs[-1] == ("distill", "self-distill") and len(arms.pairs) == 4
    assert arms.runs["distill"].data == str(MINE / "tasks.jsonl")  # relative to the spec file
    with pytest.raises(SpecError, match="--pair"):
        load_arms(FOUR, baseline="baseline", pairs=["distill:nope"])
    assert load_arms(FOUR, baseline=str(MINE / "small-group.toml")).baseline == "small-group"


@pytest.mark.parametrize("field, value, said", [
    ("model", '"other"', "student"), ("taskset", '"wordle"', "taskset"),
    ("data", f'"{MINE / "tasks.jsonl"}"', "data"),
])
def test_an_arm_off_the_baselines_holdout_is_refused_in_one_line(
        tmp_path: Path, field: str, value: str, said: str) -> None:
    base = spec(tmp_path, "grpo")
    other = spec(tmp_path, "odd", **{field: value})
    with pytest.raises(SpecError) as e:
        load_arms([base, other])
    msg = str(e.value)
    assert "\n" not in msg and f"has {said} " in msg and "odd" in msg and "baseline grpo" in msg


def test_eval_examples_are_part_of_the_holdout(tmp_path: Path) -> None:
    base = spec(tmp_path, "grpo")
    p = tmp_path / "small.toml"
    p.write_text('taskset = "reverse-text"\nmodel = "S"\n[eval]\nexamples = 8\n[method]\ntype = "opsd"\n')
    with pytest.raises(SpecError, match="eval.examples 8"):
        load_arms([base, p])


def test_names_and_bad_arms(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    a, b = spec(tmp_path, "grpo"), spec(tmp_path / "b", "grpo")
    with pytest.raises(SpecError, match="two specs named 'grpo'"):
        load_arms([a, b])
    assert list(load_arms([a, a]).runs) == ["grpo"]  # the same file twice is one arm
    with pytest.raises(SpecError, match="no GRPO arm"):
        load_arms([EXAMPLES / "opd.toml"])
    with pytest.raises(SpecError, match="--baseline"):
        load_arms(BUNDLED, baseline="ppo")


def test_default_pairs_compare_opd_with_sft_when_both_exist() -> None:
    assert ("opd", "sft") in DEFAULT_PAIRS
    methods = {"grpo": "grpo", "opd": "opd", "opsd": "opsd", "sft": "sft"}
    got = comparisons(methods, "grpo")
    assert got == [("opd", "grpo"), ("opsd", "grpo"), ("sft", "grpo"), ("opd", "sft")]
    assert comparisons({"grpo": "grpo", "opd": "opd"}, "grpo") == [("opd", "grpo")]
    assert comparisons(methods, "grpo", [("opd", "sft")]).count(("opd", "sft")) == 1


def test_budget_sets_steps_so_arms_spend_the_same() -> None:
    arms = load_arms(BUNDLED)

    def step_of(r: object) -> dict[str, object]:
        return per_step(prime_rl.compile(r))  # type: ignore[arg-type]

    runs = match_budget(arms.runs, parse_budget("rollouts=25600"), step_of)
    assert {n: r.steps for n, r in runs.items()} == {"grpo": 50, "opd": 100, "opsd": 400}
    spent = {n: r.steps * step_of(r)["rollouts"] for n, r in runs.items()}  # type: ignore[operator]
    assert set(spent.values()) == {25600}
    tokens = match_budget(arms.runs, parse_budget("tokens=1_000_000_000"), step_of)
    assert tokens["opd"].steps == round(1e9 / (256 * 8192))
    assert steps_for(parse_budget("rollouts=1"), {"rollouts": 512}) == 1  # at least one step
    assert step_of(arms.runs["grpo"])["gpus"] == 2  # the default layout, though `gpus` is unset
    for bad in ("rollouts", "rollouts=0", "gpu=5", "tokens=1e6", "rollouts=-3"):
        with pytest.raises(SpecError, match="--budget"):
            parse_budget(bad)


def test_mismatch_warns_beyond_twice() -> None:
    assert mismatch("rollouts", {"a": 100, "b": 190}) is None
    w = mismatch("rollouts", {"grpo": 51200, "opsd": 6400})
    assert w is not None and "8.0x" in w and "--budget" in w


def test_repeats_vary_the_seed_and_replace_run_validates() -> None:
    arms = load_arms(BUNDLED)
    runs = repeat(arms.runs, 3)
    assert list(runs)[:3] == ["grpo", "grpo@2", "grpo@3"]
    assert [runs[n].seed for n in ("opd", "opd@2", "opd@3")] == [0, 1, 2]
    assert replace_run(arms.runs["opd"], steps=7).method == arms.runs["opd"].method
    with pytest.raises(SpecError, match="steps"):
        replace_run(arms.runs["opd"], steps=0)
    with pytest.raises(SpecError, match="--repeats"):
        repeat(arms.runs, 0)


def test_offline_maps_any_spec_onto_the_tiny_models_and_says_what_changed() -> None:
    arms = load_arms(FOUR, baseline="baseline")
    off = Offline(prompts=4, max_tokens=16, samples=4, holdout=8, lr=1e-3)
    models = {"student": "/m/student", "teacher": "/m/teacher"}
    run, subs = off.apply("distill", arms.runs["distill"], models)
    assert run.model == "/m/student" and run.method.teacher.model == "/m/teacher"  # type: ignore[union-attr]
    assert run.method.divergence == "forward_kl" and run.method.top_k is None  # type: ignore[union-attr]
    assert run.data == arms.runs["distill"].data and run.eval.examples == 8 and not run.lora
    fields = {s["field"]: (s["spec"], s["run"]) for s in subs}
    assert fields["model"] == ("acme/student-1b", "/m/student")
    assert fields["method.max_tokens"] == (512, 16) and fields["prompts"] == (32, 4)
    run, subs = off.apply("self-distill", arms.runs["self-distill"], models)
    assert run.overrides == {} and run.method.anchor == "initial"  # type: ignore[union-attr]
    dropped = [s for s in subs if s["field"] == "overrides.trainer.optim.weight_decay"]
    assert dropped and "not a TRL key" in dropped[0]["reason"]
    texts, pairs = task_texts(arms.runs["baseline"])
    assert ("Write backwards: light green\nBackwards:", "neerg thgil") in pairs
    assert any("Backwards:" in t for t in texts)
    bad = replace_run(arms.runs["baseline"], data=None, taskset="wordle")
    with pytest.raises(SpecError, match="offline arms need tasks on this machine"):
        off.check("baseline", bad)


def whileai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai", *args], capture_output=True, text=True,
                          timeout=60)


def test_arms_verb_plans_checks_and_writes_a_manifest(tmp_path: Path) -> None:
    mine = ("arms", *map(str, FOUR), "--baseline", "baseline", "--budget", "rollouts=4096", "--json")
    p = whileai(*mine)  # the user's own tasks and reward: prime-rl would train on others
    assert p.returncode == 2 and p.stderr.startswith("error: data: ") and "-t trl" in p.stderr
    three = [str(f) for f in FOUR if f.stem != "self-distill"]  # its prime-rl override: not TRL's
    p = whileai("arms", *three, "--baseline", "baseline", "--budget", "rollouts=4096", "--json",
                "-b", "trl")
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["baseline"] == "baseline" and plan["budget"] == "rollouts=4096"
    spent = {n: a["steps"] * a["per_step"]["rollouts"] for n, a in plan["arms"].items()}
    assert spent == {"baseline": 4096, "distill": 4096, "small-group": 4096}
    p = whileai("arms", *map(str, BUNDLED), "-o", str(tmp_path / "plan"), "--repeats", "2")
    assert p.returncode == 0, p.stderr
    assert "warning: budgets differ 8.0x in rollouts" in p.stdout
    manifest = json.loads((tmp_path / "plan" / "manifest.json").read_text())
    assert sorted(manifest["arms"]) == ["grpo", "grpo@2", "opd", "opd@2", "opsd", "opsd@2"]
    assert manifest["meta"]["comparisons"] == [["opd", "grpo"], ["opsd", "grpo"]]
    p = whileai("arms", str(BUNDLED[1]), str(MINE / "baseline.toml"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert "taskset" in p.stderr and p.stdout == ""


def test_the_tiny_model_cache_key_covers_what_determines_the_models(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai.vocab import tiny

    texts, pairs, warm = ["a b", "c"], [("a", "b")], {"teacher": 3, "student": 1}
    key = tiny.cache_key(texts, pairs, warm)
    assert tiny.cache_key(list(texts), list(pairs), dict(warm)) == key  # stable
    changed = [tiny.cache_key(texts + ["d"], pairs, warm), tiny.cache_key(texts, [("a", "c")], warm),
               tiny.cache_key(texts, pairs, warm | {"teacher": 4}),
               tiny.cache_key(texts, pairs, warm, seed=1),
               tiny.cache_key(texts, pairs, warm, sizes={"student": {"hidden_size": 32}})]
    assert len({key, *changed}) == 6
    monkeypatch.setenv("WHILEAI_CACHE", str(tmp_path))
    assert tiny.cache_dir(key) == tmp_path / "tiny" / key
    monkeypatch.delenv("WHILEAI_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tiny.cache_root() == tmp_path / "xdg" / "whileai"


def test_per_step_and_budgets_read_what_was_written_overrides_included(tmp_path: Path) -> None:
    """An override that halves the step (prime-rl's orchestrator.batch_size, TRL's accumulation)
    or caps the completions halves what an arm is planned to spend: the report, per_step, the
    budget-matched steps and `whileai arms` all read the compiled document."""
    from whileai.targets.trl import compile as trl

    grpo = load_arms(BUNDLED).runs["grpo"]  # 64 prompts x 8 samples: 512 a step as written
    halved = replace_run(grpo, overrides={"orchestrator.batch_size": 256})
    c = prime_rl.compile(halved)
    assert "32 prompts x 8 rollouts = 256 rollouts per step" in c.header()[1]
    step = per_step(c)
    assert (step["rollouts"], step["prompts"], step["samples"]) == (256, 32, 8)
    runs = match_budget({"grpo": halved}, parse_budget("rollouts=25600"),
                        lambda r: per_step(prime_rl.compile(r)))
    assert runs["grpo"].steps == 100
    t = trl.compile(replace_run(grpo, overrides={"gradient_accumulation_steps": 32,
                                                 "max_completion_length": 1024}))
    assert (per_step(t)["rollouts"], per_step(t)["prompts"], per_step(t)["max_tokens"]) == (256, 32, 1024)
    p = tmp_path / "grpo.toml"
    p.write_text((EXAMPLES / "grpo.toml").read_text() + '\n[overrides]\n"orchestrator.batch_size" = 256\n')
    cli = whileai("arms", str(p), "--budget", "rollouts=25600", "--json")
    assert cli.returncode == 0, cli.stderr
    arm = json.loads(cli.stdout)["arms"]["grpo"]
    assert arm["steps"] == 100 and arm["per_step"]["rollouts"] == 256
    p.write_text((EXAMPLES / "grpo.toml").read_text().replace("[eval]\n", "[eval]\ninterval = 7\n")
                 + '\n[overrides]\nmax_steps = 7\n')  # the interval stated: else it follows steps
    cli = whileai("arms", str(p), "--json")
    assert cli.returncode == 0 and json.loads(cli.stdout)["arms"]["grpo"]["steps"] == 7  # as written
    cli = whileai("arms", str(p), "--budget", "rollouts=25600")
    assert cli.returncode == 2 and "max_steps" in cli.stderr and cli.stderr.count("\n") == 1


def test_the_bundled_arms_warning_says_they_read_the_same_prompts() -> None:
    """The bundled arms differ 8x in rollouts by design (samples per prompt: grpo 8, opsd 1);
    the warning says what they share (the prompts) and what differs, not only that they differ."""
    seen = {"grpo": 6400, "opd": 6400, "opsd": 6400}
    w = mismatch("rollouts", {"grpo": 51200, "opd": 25600, "opsd": 6400}, prompts=seen,
                 samples={"grpo": 8, "opd": 4, "opsd": 1})
    assert w is not None and "8.0x" in w and "the same 6,400 prompts" in w
    assert "(grpo 8, opd 4, opsd 1)" in w and "matched in prompts, not in compute" in w
    other = mismatch("rollouts", {"grpo": 51200, "opsd": 6400}, prompts={"grpo": 6400, "opsd": 100},
                     samples={"grpo": 8, "opsd": 1})
    assert other is not None and "same" not in other and "--budget" in other


def test_bundled_arms_a_target_cannot_run_are_skipped_with_why_but_named_ones_refused() -> None:
    # verl 0.9.1 has no OPSD: the default arms drop it with verl's reason; naming it is an error
    p = subprocess.run([sys.executable, "-m", "whileai", "arms", "-b", "verl", "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert sorted(plan["arms"]) == ["grpo", "opd", "sft"]
    (note,) = plan["skipped"]
    assert "opsd.toml" in note and "#6827" in note
    p = whileai("arms", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opsd.toml"), "-b", "verl")
    assert p.returncode == 2 and "#6827" in p.stderr and "Traceback" not in p.stderr
    p = whileai("arms", "-b", "prime-rl", "--json")  # a target that runs them all skips none
    assert p.returncode == 0 and json.loads(p.stdout)["skipped"] == []


@pytest.mark.parametrize("target", ["prime-rl", "trl", "verl"])
def test_repeats_files_differ_exactly_in_the_seed(tmp_path: Path, target: str) -> None:
    """`arms --repeats 2 -o DIR`: each repeat's files carry its own seed (prime-rl's vLLM seed,
    TRL's seed, verl's loader and rollout seeds), and nothing else differs (issue 40, item 5)."""
    import difflib
    import re

    from typer.testing import CliRunner

    from whileai.cli.app import app

    out = tmp_path / "arms"
    argv = ["arms", str(EXAMPLES / "grpo.toml"), str(EXAMPLES / "opd.toml"), "--repeats", "2",
            "-t", target, "-o", str(out)] + (["--cpu"] if target == "trl" else [])
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    for arm in ("grpo", "opd"):
        one, two = out / arm, out / f"{arm}@2"
        names = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
        assert names == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
        changed = []
        for name in names:
            a, b = (one / name).read_text().splitlines(), (two / name).read_text().splitlines()
            changed += [(name, d) for d in difflib.ndiff(a, b) if d[:2] in ("+ ", "- ")]
        assert all("seed" in d and re.search(r"\b[01]\b", d) for _, d in changed), changed
        assert any(d.startswith("+ ") for _, d in changed), f"{target} {arm}: identical repeats"
    sampling = {"prime-rl": ("opd.toml", "[inference.vllm]"), "trl": ("config.yaml", "seed: 1"),
                "verl": ("run.sh", "actor_rollout_ref.rollout.seed=1")}[target]  # the sampler's seed
    text = (out / "opd@2" / sampling[0]).read_text()
    assert sampling[1] in text and (target != "prime-rl" or "\nseed = 1\n" in text)
    seeds = {n: a["spec"]["seed"] for n, a in json.loads((out / "manifest.json").read_text())["arms"].items()}
    assert seeds == {"grpo": 0, "grpo@2": 1, "opd": 0, "opd@2": 1}
