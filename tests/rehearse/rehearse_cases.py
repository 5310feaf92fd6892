"""The real rehearsals of tests/rehearse/test_rehearse_real.py and scripts/gen_rehearse_fixture.py: each
case's arguments to `whileai rehearse` and what its verdict must say."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TWO_STAGE = """taskset = "reverse-text"
model = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
steps = 10
prompts = 8
lora = false

[method]
type = "sft"
teacher = "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"

[then.method]
type = "opd"
teacher = "vllm:PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"
"""

# specs beyond the bundled examples: another taskset and other model families
INLINE = {
    "kuhn-poker": 'taskset = "kuhn-poker"\nmodel = "Qwen/Qwen3-0.6B"\nsteps = 100\nprompts = 16\n'
                  '[method]\ntype = "grpo"\n',
    "llama-3.1": 'taskset = "reverse-text"\nmodel = "meta-llama/Llama-3.1-8B-Instruct"\nsteps = 100\n'
                 'prompts = 16\n[method]\ntype = "grpo"\n',
    "qwen2.5": 'taskset = "reverse-text"\nmodel = "Qwen/Qwen2.5-1.5B-Instruct"\nsteps = 100\n'
               'prompts = 16\n[method]\ntype = "grpo"\n',
}


@dataclass(frozen=True)
class Case:
    name: str
    spec: str  # a path under the repository, "twostage" or an INLINE key (written to the folder given)
    sets: tuple[str, ...] = ()
    toml_edit: tuple[str, str] | None = None  # a compiled TOML with this text replaced (a hand edit)
    expect: str = ""  # in the verdict's cause (broken cases)

    def args(self, tmp: Path) -> list[str]:
        if self.spec == "twostage" or self.spec in INLINE:
            p = tmp / f"{self.name}.toml"
            p.write_text(TWO_STAGE if self.spec == "twostage" else INLINE[self.spec])
            return [str(p)]
        if self.toml_edit is not None:
            import whileai as wai
            from whileai.spec.load import load_spec

            text = wai.compile(load_spec(ROOT / self.spec), "prime-rl").text
            old, new = self.toml_edit
            assert old in text, old
            p = tmp / f"{self.name}.toml"
            p.write_text(text.replace(old, new))
            return [
                str(p),
                "--serve",
                "inference --vllm.model PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL --server.port 8001",
            ]
        return [str(ROOT / self.spec), *(a for s in self.sets for a in ("--set", s))]


ARMS = [Case(k, f"examples/{k}.toml") for k in ("opd", "opsd", "grpo", "sft")]  # LoRA, as bundled
GOOD = [
    *ARMS,
    Case("mixture", "examples/mixtures/grpo-opd.toml"),
    Case("twostage", "twostage"),
    Case("gsm8k-opd", "examples/tasksets/gsm8k-opd.toml"),  # rows cached under openai/gsm8k
    *(Case(k, k) for k in INLINE),  # two seats per episode; the llama and qwen2 stand-ins
]
BROKEN = [
    Case(
        "wrong-teacher",
        "examples/opd.toml",
        sets=("orchestrator.algo.teacher.name=PrimeIntellect/Qwen3-0.6B-Reverse-Text-RLL",),
        expect="was not found in the inference pool",
    ),
    Case(
        "teacher-port",
        "examples/opd.toml",
        sets=("orchestrator.algo.teacher.base_url=http://localhost:8002/v1",),
        expect="8002",
    ),
    Case(
        "taskset-typo",
        "examples/grpo.toml",
        toml_edit=(
            '[orchestrator.train.source.env.taskset]\nid = "reverse-text"\n',
            '[orchestrator.train.source.env.taskset]\nid = "reverse-text"\ndataset_splt = "train"\n',
        ),
        expect="dataset-splt",
    ),
    Case("seq-len", "examples/grpo.toml", sets=("seq_len=64",), expect="seq_len"),
    # GRPO with groups of one: every advantage is reward - group mean = 0 (orchestrator/algo/grpo.py:30).
    # Kept (filter_zero_advantages off), the batches arrive with no credit: the trainer stand-in's
    # verdict; prime-rl's loss would train on them in silence.
    Case(
        "grpo-no-advantage",
        "examples/grpo.toml",
        sets=("orchestrator.group_size=1", "orchestrator.train.filter_zero_advantages=false"),
        expect="every trained token's advantage is 0",
    ),
    # the same with prime-rl's default filter: it prunes every sample (train_sink.py:361-366) and
    # ends the run itself
    Case("grpo-group-1", "examples/grpo.toml", sets=("orchestrator.group_size=1",),
         expect="consecutive empty train batches"),
    # a mixture with groups of one: the GRPO source's samples are pruned after the batch is cut
    # (train_sink.py:342-366), the OPD source's still fill it, so prime-rl goes on with fewer samples
    # than batch_size: the trainer stand-in counts them against the plan
    Case(
        "mixture-batch",
        "examples/mixtures/grpo-opd.toml",
        sets=("orchestrator.group_size=1", "orchestrator.train.source[1].group_size=1"),
        expect="fewer than the plan's",
    ),
]
