"""The run spec: one method (whileai.spec.methods) on a taskset for a student model, optionally
followed by a second stage (`then`) whose student is the first stage's final weights.

Every field is described once, here; `whileai methods`, the JSON schemas and the docs read
these descriptions, and `source` names where each default comes from.
"""


from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from whileai.catalogs import paths
from whileai.errors import SpecError, raw
from whileai.spec import layout, values
from whileai.spec.layout import Slurm
from whileai.spec.methods import (  # noqa: F401  (re-exported: the public spec names)
    GRPO,
    METHODS,
    OPD,
    OPSD,
    SFT,
    Divergence,
    Endpoint,
    Method,
    _Spec,
    anchor_rate,
    parse_endpoint,
    src,
    validate_raw,
)
from whileai.spec.tables import (  # noqa: F401  (re-exported: the public spec names)
    _ARGS,
    _TASKSET,
    MAX_GPUS,
    MAX_NODES,
    MAX_RATIO,
    MAX_STEPS,
    PATH_LEN,
    RATIO,
    RATIO_SOURCE,
    REWARD_PATTERN,
    Checkpoint,
    Eval,
    Inspect,
    Monitor,
    OnTaskset,
    Source,
    Stage,
    _taskset_id,
    check_roles,
    flatten_overrides,
    leaves,
)

# The fewest prompt tokens a run can work with: a chat template wraps even a one-word prompt in
# role markers (Qwen3's makes it 9 tokens, <|im_start|>user ... <|im_start|>assistant; Llama 3's
# default system header with its dates is about 30), and a taskset's system prompt comes on top. A
# budget below it leaves no room for the task itself.
MIN_PROMPT_TOKENS = 32
# A Hugging Face Hub repo id, as the Hub and huggingface_hub's validate_repo_id (2.4.0,
# utils/_validators.py:94-150) accept it: 'name' or 'owner/name', ASCII letters, digits, '-',
# '_' and '.', neither part starting or ending with '-' or '.', each at most 96 characters, no
# '--' or '..', not ending in '.git'. A model that starts with '/', '.', '~' or '$', or holds a
# second '/', is a local path and is not checked against it.
_HUB_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]{0,94}[A-Za-z0-9_])?"
HUB_ID = rf"(?:{_HUB_PART}/)?{_HUB_PART}"


def is_local_path(model: str) -> bool:
    return model.startswith(("/", ".", "~", "$")) or model.count("/") > 1


def check_hub_id(model: str) -> str | None:
    """Why `model` is no Hub repo id a hub accepts, or None (a local path: None)."""
    import re

    if is_local_path(model):
        return None
    if not re.fullmatch(HUB_ID, model):
        return ("a Hugging Face model id: 'name' or 'owner/name' in ASCII letters, digits, '-', '_' "
                "and '.', neither part starting or ending with '-' or '.', at most 96 characters "
                "each; a local path starts with /, ./ or ~")
    if "--" in model or ".." in model or model.endswith(".git"):
        return "a Hugging Face model id: the Hub refuses '--', '..' and a '.git' ending"
    return None


def default_eval_interval(steps: int) -> int:
    """The eval interval when eval.interval is unset: steps / k for the k nearest 4 (ties: the
    larger) among 1..8 that divide the steps. prime-rl and TRL evaluate when step % interval
    == 0, so a divisor evaluates the final step too (steps // 4 would skip it at 50 steps)."""
    k = min((k for k in range(1, 9) if steps % k == 0), key=lambda k: (abs(k - 4), -k))
    return steps // k


class RunSpec(OnTaskset):
    """One training run: a method on a taskset for a student model."""

    schema_: str | None = Field(
        default=None, alias="$schema", description="Path or URL of this file's JSON Schema (editors).",
        max_length=PATH_LEN,
        json_schema_extra={"source": ""},
    )
    taskset: str = src(
        "The taskset (environment) id, e.g. 'reverse-text', optionally 'owner/name@version'.", "",
        max_length=256,
    )
    taskset_args: dict[str, Any] = src(
        "Arguments of the taskset, e.g. {min_turns = 3} for alphabet-sort or {split = \"train\"} "
        "for gsm8k, for the train and the eval source. " + _ARGS, "", default_factory=dict,
    )
    roles: list[str] | None = src(
        "Agent roles (seats) of a taskset the pinned catalogue does not know, e.g. ['player']; "
        "each gets a local runtime and no harness. Known tasksets take theirs from the catalogue "
        "(wordle: player; kuhn-poker: player0, player1; proposer-solver: proposer, solver).",
        "verifiers' single-agent env: ['agent']", default=None, min_length=1, max_length=16,
    )
    model: str = src("The student: a Hugging Face model id ('owner/name', ASCII) or a local path "
                     "(starting with /, ./ or ~).", "", min_length=1,
                     max_length=PATH_LEN)
    method: Method = Field(description="The training method: a table with type = opd | opsd | grpo "
                           "| sft.")
    sources: list[Source] = src(
        "Extra training sources: a mixture ([[sources]] tables). The run's taskset, taskset_args, "
        "roles, ratio and method are source 0; each entry adds a source with its own taskset, "
        "arguments, sampling ratio and method, e.g. GRPO on one taskset and OPD on another. "
        "What each target does with a mixture: docs/mixtures.md (prime-rl: any; verl: OPD sources "
        "with a teacher each).",
        "prime-rl configs/debug/algo/mixed_grpo_opd.toml (per-source algo)", default_factory=list,
        max_length=64,
    )
    ratio: float | None = src(
        "The run's own taskset's (source 0's) weight in a mixture; unset: 1.0. Read only with "
        "sources. " + RATIO,
        RATIO_SOURCE, default=None, gt=0.0, le=MAX_RATIO,
    )
    steps: int = src("Optimizer steps.", "prime-rl/anchor default 100", default=100, ge=1,
                     le=MAX_STEPS)
    prompts: int = src(
        "Prompts per step; rollouts per step = prompts x samples.",
        "Lu 2025; tinker-cookbook (64 for small runs)", default=64, ge=1, le=1 << 16,
    )
    gpus: int | None = src(
        "GPUs for the run (inference + trainer; an OPD teacher is served separately). Unset: 2 "
        "on one node for prime-rl (1 inference + 1 trainer, its least), one process for TRL (1 "
        "works: TRL generates in the training process), one GPU for verl (its rollout shares the "
        "actor's GPUs); with nodes, every GPU of every node "
        "(nodes x gpus_per_node).",
        "prime-rl default layout: 2", default=None, ge=1, le=MAX_GPUS,
    )
    inference_gpus: int | None = src(
        "GPUs given to inference on one node; the rest train. Unset: half, rounded down.",
        "prime-rl deployment defaults (1 + 1)", default=None, ge=1, le=MAX_GPUS,
    )
    nodes: int | None = src(
        "Machines for the run. Unset: one. More than one: prime-rl's multi_node deployment on "
        "SLURM (trainer and inference on whole nodes); TRL: accelerate on that many machines.",
        "whileai (one node)", default=None, ge=1, le=MAX_NODES,
    )
    gpus_per_node: int = src(
        "GPUs in each machine.", f"prime-rl deployment default gpus_per_node = "
        f"{layout.DEFAULT_GPUS_PER_NODE} (an HGX node)", default=layout.DEFAULT_GPUS_PER_NODE, ge=1,
        le=64,
    )
    inference_nodes: int | None = src(
        "With nodes > 1: the nodes that serve the policy for sampling; the rest train. Unset: "
        "half the nodes, rounded down (at least one). 0 runs no inference, only a trainer "
        "benchmark on fake data, and needs an explicit trainer.data.fake override.",
        "prime-rl examples/advanced: inference takes half the nodes or more (qwen3-30b-a3b 2 + 2, "
        "nemotron-3-super 4 + 4)", default=None, ge=0, le=MAX_NODES,
    )
    inference_replicas: int | None = src(
        "With nodes > 1: independent inference servers the inference nodes form, all behind "
        "one router; each takes inference_nodes / inference_replicas whole nodes. Unset: one "
        "per inference node.",
        "prime-rl examples/advanced nemotron-3-super and glm-4.5-air (1 node per replica)",
        default=None, ge=1, le=MAX_NODES,
    )
    inference_tp: int | None = src(
        "Tensor-parallel GPUs per inference engine (vLLM tensor_parallel_size); engines fill the "
        "inference GPUs. Unset: the fewest GPUs, a power of two, that hold the student's bf16 "
        "weights plus KV headroom (from the model's size; 1 when the size is unknown).",
        "whileai.sizes (docs/cost.md)", default=None, ge=1, le=64,
    )
    nodes_per_fsdp_group: int | None = src(
        "With nodes > 1: trainer nodes per FSDP island; the trainer replicates across islands "
        "(prime-rl sets trainer.model.dp_replicate = trainer nodes / this). Unset: one island "
        "over all trainer nodes.",
        "prime-rl default (no islands)", default=None, ge=1, le=MAX_NODES,
    )
    slurm: Slurm | None = src(
        "SLURM submission. Needed by prime-rl for several nodes (unset there: a [slurm] table "
        "with the job name only); on one node it submits a single-node job.",
        "", default=None,
    )
    lora: bool = src("Train LoRA adapters (true) or full weights (false).", "anchor default", default=True)
    lora_rank: int = src(
        "LoRA rank when lora is true (set with lora = false: an error).",
        "Lu 2025: rank 32 trails full FT by ~6% after OPD",
        default=32, ge=1, le=4096,
    )
    seed: int = src("Run seed (numpy, which TRL seeds too, takes at most 2**32 - 1).", "whileai",
                    default=0, ge=0, le=2**32 - 1)
    prompt_tokens: int = src(
        "Token budget for a prompt (sequence length = prompt_tokens + max_tokens).",
        "whileai", default=2048, ge=MIN_PROMPT_TOKENS, le=1 << 20,
    )
    max_off_policy_steps: int = src(
        "How many steps behind the trainer a rollout may be (asynchrony).",
        "prime-rl orchestrator default 8", default=8, ge=0, le=1024,
    )
    eval: Eval = src("Evaluation on the holdout.", "", default_factory=Eval)
    checkpoint: Checkpoint = src("Resumable checkpoints.", "", default_factory=Checkpoint)
    monitor: Monitor | None = src("Weights & Biases logging; omit for none.", "", default=None)
    inspect: Inspect | None = src("Per-token exports for `whileai inspect --run`; omit for none.", "",
                                  default=None)
    output_dir: str = src("Where the run writes checkpoints and logs.", "prime-rl default",
                          default="outputs", min_length=1, max_length=PATH_LEN)
    data: str | None = src(
        "A local JSONL file of tasks for backends that train from files (TRL; prime-rl trains on "
        "taskset packages and refuses it): one object per "
        "line with a 'prompt' (text or chat messages) and the fields the method reads (e.g. "
        "OPSD's privileged key); rows with \"split\": \"test\" are the holdout (default: the "
        "last tenth). Unset: the taskset's built-in data.",
        "", default=None, min_length=1, max_length=PATH_LEN,
    )
    reward: str | None = src(
        "GRPO's reward as an importable 'module.function' (TRL's reward_funcs signature); "
        "needed for GRPO on your own data; prime-rl scores with the taskset's rubric and refuses "
        "it. Unset: the taskset's own reward.",
        "", default=None, max_length=512, pattern=REWARD_PATTERN,
    )
    overrides: dict[str, Any] = src(
        "Target-specific settings as dotted keys, checked against the target's pinned schema. "
        "One that contradicts the spec is refused, naming the spec field to set instead.",
        "", default_factory=dict,
    )
    accept: dict[str, str] = src(
        "Warnings judged and accepted for this run: rule id (see `whileai rules`) -> why it does "
        "not apply here, e.g. {\"opsd-small-model\" = \"a 0.6B demo on purpose\"}. An accepted "
        "warning is still reported, marked accepted with the reason, and does not fail --strict.",
        "whileai (--strict)", default_factory=dict, max_length=64,
    )
    then: Stage | None = src(
        "A second stage trained from this one's final weights (full weights: lora must be "
        "false), e.g. an SFT cold start, then OPD. whileai writes both stages, their order and "
        "the command that hands the weights on.",
        "Li 2026 (arXiv:2604.13016) §5.1: a student that cannot produce the teacher's tokens "
        "needs an SFT cold start before OPD", default=None,
    )

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True,
                              allow_inf_nan=False)
    _origin: str | None = PrivateAttr(default=None)  # the spec file's folder, when read from one

    @field_validator("model")
    @classmethod
    def _hub_id(cls, v: str) -> str:
        why = check_hub_id(v)
        if why:
            raise SpecError("model", v, why)
        return v

    @model_validator(mode="after")
    def _contradictions(self) -> "RunSpec":
        """Fields that contradict each other: an error, never a note under "ignores"."""
        methods = [("method", self.method)] + [(f"sources[{i}].method", s.method)
                                               for i, s in enumerate(self.sources)]
        for at, m in methods:
            if isinstance(m, OPD) and m.teacher.model.casefold() == self.model.casefold():
                raise SpecError(f"{at}.teacher.model", m.teacher.model, "a model other than the "
                                "student: OPD trains on the teacher's log-probs minus the "
                                "student's, exactly zero when they are one model (serve a "
                                "fine-tuned teacher under its own name; for the student taught "
                                "by itself with privileged information, use type = \"opsd\")")
        inherits = self.then is not None and self.then.lora and self.then.lora_rank is None
        if not self.lora and "lora_rank" in self.model_fields_set and not inherits:
            raise SpecError("lora_rank", self.lora_rank, "unset when lora = false: full weights "
                            "have no LoRA rank", hint="remove lora_rank, or set lora = true")
        if self.then is not None and self.then.lora is False and self.then.lora_rank is not None:
            raise SpecError("then.lora_rank", self.then.lora_rank, "unset when then.lora = false: "
                            "full weights have no LoRA rank", hint="remove then.lora_rank, or set "
                            "then.lora = true")
        return self

    @field_validator("accept")
    @classmethod
    def _reasons(cls, v: dict[str, str]) -> dict[str, str]:
        return values.check_accept(v)

    @field_validator("overrides", mode="before")
    @classmethod
    def _flatten(cls, v: Any) -> Any:
        return flatten_overrides(v)

    @model_validator(mode="after")
    def _split(self) -> "RunSpec":
        layout.check(self)
        return self

    @model_validator(mode="after")
    def _taskset_tables(self) -> "RunSpec":
        """Taskset arguments and roles against the pinned taskset catalogue."""
        from whileai.catalogs import tasksets as tc

        sources = [("", self.taskset, self.taskset_args, self.roles)] + [
            (f"sources[{i}].", s.taskset, s.taskset_args, s.roles) for i, s in enumerate(self.sources)]
        tables = [(f"{at}taskset_args", args) for at, _, args, _ in sources]
        for label, table in [*tables, ("eval.taskset_args", self.eval.taskset_args)]:
            for segs, value in leaves(table):
                values.check_override(segs, paths.join(segs), value, label=label)
        named = [(f"{at}taskset", t) for at, t, _, _ in sources] + [("eval.taskset", self.eval.taskset)]
        own = {"taskset"} if self.data is not None else set()  # with data it is a label
        own |= {f"sources[{i}].taskset" for i, s in enumerate(self.sources) if s.data is not None}
        for label, taskset in named if self.data is None else []:
            if label in own:
                continue
            why = tc.typo(taskset) if taskset is not None else None
            if why:
                raise SpecError(label, taskset, why)
        for at, taskset, args, roles in sources:
            known = tc.roles(taskset)
            if known is not None and roles is not None:
                raise SpecError(f"{at}roles", roles, f"unset: {taskset}'s roles come from the "
                                f"pinned taskset catalogue ({', '.join(known)})")
            tc.check_args(taskset, args, f"{at}taskset_args")
        tc.check_args(self.eval_taskset, self.eval_args, "eval.taskset_args")
        return self

    @model_validator(mode="after")
    def _stages(self) -> "RunSpec":
        if self.then is not None and self.sources:
            raise SpecError("then", raw("a second stage"), "unset in a mixture (sources): a "
                            "two-stage run trains one taskset per stage; compile the mixture as "
                            "its own run from the first stage's weights")
        if self.then is not None and self.lora:
            raise SpecError("lora", True, "false when a second stage (then) follows: its student "
                            "is this stage's final full weights (a LoRA adapter would need merging "
                            "into the base first)", hint="set lora = false")
        return self

    @property
    def layout(self) -> layout.Layout:
        """Nodes, GPUs and the trainer / inference split (whileai.spec.layout)."""
        return layout.layout(self)

    @property
    def total_gpus(self) -> int:
        return self.layout.gpus

    @property
    def infer_gpus(self) -> int:
        return self.layout.inference_gpus

    @property
    def train_gpus(self) -> int:
        return self.layout.trainer_gpus

    @property
    def rollouts(self) -> int:
        return self.prompts * self.method.samples

    @property
    def eval_interval(self) -> int:
        return self.eval.interval or default_eval_interval(self.steps)

    @property
    def eval_taskset(self) -> str:
        return self.eval.taskset or self.taskset

    @property
    def eval_same_taskset(self) -> bool:
        from whileai.catalogs.targets import plugin_key

        return self.eval.taskset is None or plugin_key(self.eval.taskset) == plugin_key(self.taskset)

    @property
    def eval_args(self) -> dict[str, Any]:
        """The eval source's taskset arguments: the run's with eval's on top (same taskset)."""
        if not self.eval_same_taskset:
            return dict(self.eval.taskset_args)
        return self.taskset_args | self.eval.taskset_args

    @property
    def learning_rate(self) -> float:
        return self.method.learning_rate or self.method.default_lr(self.lora)
