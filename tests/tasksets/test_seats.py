"""Multi-seat tasksets: prime-rl's batch_size counts trainable traces (orchestrator/train_sink.py),
and an episode of kuhn-poker yields two (player0, player1). The batch holds the prompts the
spec asked for; the summary, the budget and the cost count traces."""

from __future__ import annotations

import tomllib

import whileai as wai
from whileai.cost.budget import per_step
from whileai.tasksets import seats


def run(taskset: str, **fields: object) -> wai.RunSpec:
    return wai.RunSpec(taskset=taskset, model="Qwen/Qwen3-1.7B", prompts=32,
                       method=wai.GRPO(samples=4), **fields)  # type: ignore[arg-type]


def test_kuhn_poker_batch_holds_the_prompts_asked_for() -> None:
    c = wai.compile(run("kuhn-poker"), "prime-rl")
    assert tomllib.loads(c.text)["orchestrator"]["batch_size"] == 256  # 32 x 4 x 2 traces
    assert c.facts.prompts == 32 and c.facts.seats == 2
    assert "100 steps x 32 prompts x 4 samples x 2 seats = 256 traces per step" in c.header()[1]
    assert per_step(c)["rollouts"] == 256
    assert c.cost is not None and c.cost.rollouts_per_step == 256


def test_one_seat_tasksets_are_unchanged() -> None:
    for taskset in ("gsm8k", "wordle", "reverse-text"):  # wordle's one seat is 'player'
        c = wai.compile(run(taskset), "prime-rl")
        assert tomllib.loads(c.text)["orchestrator"]["batch_size"] == 128
        assert c.header()[1].startswith("100 steps x 32 prompts x 4 rollouts = 128 rollouts per step")


def test_every_catalogue_taskset_counts_its_seats() -> None:
    from whileai.catalogs import tasksets as tc

    for name, e in tc.data()["tasksets"].items():
        s = seats.of(name)
        assert s.traces >= len(e["roles"]) and set(s.roles) <= set(e["roles"]), name


def test_proposer_solver_counts_its_solver_runs_and_follows_overrides() -> None:
    assert seats.of("proposer-solver").traces == 5  # 1 proposer + n=4 solver runs
    c = wai.compile(run("proposer-solver", overrides={
        "orchestrator.train.source[0].env.train_solver": False}), "prime-rl")
    # the override leaves batch_size at 640 traces: the summary says what that is
    assert c.facts.seats == 1 and c.facts.prompts == 160


def test_an_unknown_taskset_counts_the_spec_roles() -> None:
    assert seats.of("me/duel@0.1", ["a", "b"]).traces == 2
    assert seats.of("me/solo@0.1").traces == 1
