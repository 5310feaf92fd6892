"""The pinned taskset catalogue: what each taskset prime-rl ships or its pinned verifiers bundles
is made of (schemas/prime-rl-<commit>.tasksets.json, generated from the loaded packages by
scripts/gen_prime_rl_tasksets.py).

Per taskset it gives the agent roles (the env's seats: `agent`, wordle's `player`, kuhn-poker's
`player0`/`player1`, ...), the arguments of its `env.taskset` table (checked here against the
prime-rl catalogue's `taskset[<id>]` schema, with a did-you-mean), and which split the train
and eval sources read. `split_plan` turns that split data into what whileai writes: train on
the train split and evaluate on a held-out one where the taskset offers both, and otherwise an
honest account of the rows eval shares with training. A taskset the catalogue does not know
(`owner/name@version` from a hub) passes through unchecked, and every caller says so.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, NamedTuple

from whileai.catalogs.paths import get_path
from whileai.catalogs.targets import Catalog, pinned, plugin_key, schemas_dir
from whileai.errors import SpecError, raw

SINGLE_AGENT = ("agent",)  # the role of verifiers' single-agent env, the default env class
HELD_OUT_ORDER = ("test", "validation", "val", "dev", "eval")  # preferred held-out split names


@cache
def data() -> dict[str, Any]:
    files = sorted(schemas_dir().glob("prime-rl-*.tasksets.json"))
    if not files:
        raise FileNotFoundError(f"no prime-rl taskset catalogue in {schemas_dir()}")
    out: dict[str, Any] = json.loads(files[-1].read_text())
    out["file"] = files[-1].name
    return out


def entry(taskset: str) -> dict[str, Any] | None:
    """The catalogue's entry for a taskset id (owner/ and @version dropped, as the loader
    resolves it), or None when the pinned catalogue does not know it."""
    found: dict[str, Any] | None = data()["tasksets"].get(plugin_key(taskset))
    return found


def roles(taskset: str) -> tuple[str, ...] | None:
    e = entry(taskset)
    return tuple(e["roles"]) if e else None


def unknown_reason(taskset: str) -> str:
    """Why a taskset is not checked: not in the pinned workspace, or there but not loadable."""
    name = plugin_key(taskset)
    d = data()
    if name in d.get("not_loadable", {}):
        return (f"{name} is a member of prime-rl's workspace at the pin that the catalogue could "
                "not load (its package is not available offline)")
    return f"{taskset} is not in the pinned taskset catalogue ({d['file']})"


def known(taskset: str) -> bool:
    """In the pinned workspace: catalogued, or a member the catalogue could not load."""
    d = data()
    return plugin_key(taskset) in d["tasksets"] or plugin_key(taskset) in d.get("not_loadable", {})


def typo(taskset: str) -> str | None:
    """Why a bare taskset id is refused, or None: an id without an owner that the pinned
    workspace does not have is a typo (prime-rl could not import it); a hub id
    (`owner/name@version`) passes, unchecked, with its warning."""
    from whileai.errors import close_matches

    if "/" in taskset or known(taskset):
        return None
    d = data()
    near = close_matches(plugin_key(taskset), [*d["tasksets"], *d.get("not_loadable", {})])
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return (f"a taskset of the pinned prime-rl workspace ({d['file']}; "
            f"docs/tasksets.md lists them) or a hub id owner/name@version{hint}")


def argument_names(taskset: str) -> list[str]:
    node = _workspace().defs.get(f"taskset[{plugin_key(taskset)}]", {})
    return sorted(k for k in node.get("properties", {}) if k != "id")


def check_args(taskset: str, args: dict[str, Any], field: str) -> None:
    """SpecError unless `args` is a valid `env.taskset` table for a known taskset (unknown
    tasksets pass: the loader imports them at load time, whileai cannot)."""
    if entry(taskset) is None or not args:
        return
    if "id" in args:
        raise SpecError(f"{field}.id", args["id"], "no id here: the taskset field names the taskset")
    cat = _workspace()
    node = {"$ref": f"#/$defs/taskset[{plugin_key(taskset)}]"}
    const = cat.resolve(node)["properties"]["id"].get("const", plugin_key(taskset))
    problems = cat.check({"id": const, **args}, node, field)
    if not problems:
        return
    p = problems[0]
    known = argument_names(taskset)
    if p.message.startswith("unknown key"):
        near = p.message.partition("did you mean ")[2].strip("'?").rpartition(".")[2]
        raise SpecError(p.path, raw("unknown argument"),
                        f"an argument of {plugin_key(taskset)}: {', '.join(known)}",
                        hint=f"did you mean {near!r}?" if near else "")
    inner = p.path[len(field) + 1:] if p.path.startswith(field + ".") else ""
    value = get_path(args, inner) if inner else raw("the table")
    raise SpecError(p.path, value, f"what {plugin_key(taskset)} accepts ({p.message})")


class SplitPlan(NamedTuple):
    """Which rows the train and eval sources read, and what whileai writes for it."""

    arg: str | None  # the taskset argument that selects a split (None: it has none)
    train: Any  # the split train reads
    eval: Any  # the split eval reads
    train_reason: str  # why whileai writes `train` ("" when it writes nothing)
    eval_reason: str  # why whileai writes `eval` ("" when it writes nothing)
    same_rows: bool | None  # eval reads training's rows (None: not known)
    advice: str  # what selects a held-out split, for the warning


def split_plan(taskset: str, train_args: dict[str, Any], eval_taskset: str | None,
               eval_args: dict[str, Any]) -> SplitPlan:
    """Train on the train split and evaluate on a held-out one where the taskset offers both
    (e.g. gsm8k: split is 'train' | 'test', default 'test' for both sources); otherwise leave
    each source on its default and say whether eval reads training's rows. `eval_taskset` None
    means eval uses the run's taskset, with `eval_args` laid over `train_args` (the spec's
    eval.taskset_args)."""
    e = entry(taskset)
    other = eval_taskset is not None and plugin_key(eval_taskset) != plugin_key(taskset)
    if e is None:
        return SplitPlan(None, None, None, "", "", False if other else None,
                         "whileai cannot tell which rows an unknown taskset reads")
    split = e.get("split", {})
    arg, choices, default = split.get("arg"), split.get("choices"), split.get("default")
    name = plugin_key(taskset)
    if arg is None:
        return SplitPlan(None, None, None, "", "", not other, advice(taskset, None))
    train = train_args.get(arg, default)
    evaluate = None if other else eval_args.get(arg, train)
    train_reason = eval_reason = ""
    held = held_out(taskset)
    if held and "train" in (choices or []):
        if arg not in train_args and default != "train":
            train = "train"
            train_reason = (f"{name} offers {arg} {' | '.join(map(repr, choices))} and reads "
                            f"{default!r} by default: whileai trains on 'train'")
        if not other and arg not in eval_args and train == "train":
            evaluate = held[0]
            eval_reason = f"the held-out {arg} {held[0]!r} of {name} (training reads 'train')"
    return SplitPlan(arg, train, evaluate, train_reason, eval_reason,
                     False if other else overlap(train, evaluate), advice(taskset, train))


_SLICE = r"^([^\[\]+]+?)(?:\[(-?\d*)(%?):(-?\d*)(%?)\])?$"  # Hugging Face: 'train[:90%]', 'train[90%:]'


def overlap(a: Any, b: Any) -> bool:
    """Whether two values of a split argument can read the same rows. A dataset read with
    `datasets.load_dataset(split=...)` takes Hugging Face's split slicing: 'train[:90%]' and
    'train[90%:]' are disjoint, each overlaps 'train'; parts joined with '+' overlap where
    any two do. What cannot be told apart (mixed units, negative bounds) counts as overlapping."""
    if a == b or not isinstance(a, str) or not isinstance(b, str):
        return a == b
    if "+" in a or "+" in b:
        return any(overlap(x.strip(), y.strip()) for x in a.split("+") for y in b.split("+"))
    ma, mb = re.match(_SLICE, a.replace(" ", "")), re.match(_SLICE, b.replace(" ", ""))
    if ma is None or mb is None:
        return False
    if ma[1] != mb[1]:
        return False  # another split
    if ma[2] is None or mb[2] is None:
        return True  # a whole split holds every slice of it
    bounds = [ma[2], ma[4], mb[2], mb[4]]
    if len({u for u, v in ((ma[3], ma[2]), (ma[5], ma[4]), (mb[3], mb[2]), (mb[5], mb[4])) if v}) > 1 \
            or any(v.startswith("-") for v in bounds):
        return True
    big = 100 if "%" in a + b else float("inf")
    lo_a, hi_a = int(ma[2] or 0), int(ma[4]) if ma[4] else big
    lo_b, hi_b = int(mb[2] or 0), int(mb[4]) if mb[4] else big
    return max(lo_a, lo_b) < min(hi_a, hi_b)


def reads(taskset: str, args: dict[str, Any]) -> Any:
    """The split a source with these `env.taskset` arguments reads (None: no split argument)."""
    split = (entry(taskset) or {}).get("split", {})
    return args.get(split["arg"], split.get("default")) if split.get("arg") else None


def held_out(taskset: str) -> list[str]:
    """The taskset's split choices besides 'train', most held-out-like first."""
    split = (entry(taskset) or {}).get("split", {})
    return [c for c in sorted(split.get("choices") or [], key=_held_rank) if c != "train"]


def advice(taskset: str, train: Any) -> str:
    """What selects rows training does not read, as the honest-holdout warning says it."""
    split = (entry(taskset) or {}).get("split", {})
    arg, choices, name = split.get("arg"), split.get("choices"), plugin_key(taskset)
    if arg is None:
        return (f"{name} has no split argument, so every source reads the same tasks; evaluate "
                "on another taskset with eval.taskset")
    others = [c for c in held_out(taskset) + (["train"] if "train" in (choices or []) else [])
              if c != train]
    if choices and not others:
        return (f"{name} has no held-out split ({arg} accepts only "
                f"{', '.join(map(repr, choices))}); evaluate on another taskset with eval.taskset")
    if choices:
        return f"set eval.taskset_args.{arg} to {' or '.join(map(repr, others))}"
    if split.get("dataset"):
        whole = train if isinstance(train, str) and "[" not in train else split.get("default")
        return (f"train on a slice and evaluate on the rest, taskset_args.{arg} = "
                f"'{whole}[:90%]' and eval.taskset_args.{arg} = '{whole}[90%:]' (Hugging Face "
                f"split slicing: {name} reads {split['dataset']} with load_dataset(split=...)), "
                f"or set eval.taskset_args.{arg} to another split of {split['dataset']} ({arg} "
                "is free text: whileai cannot list the dataset's splits offline)")
    return (f"set eval.taskset_args.{arg} to a held-out split ({arg} is free text: whileai "
            "cannot list the splits offline)")


def _held_rank(split: str) -> int:
    return HELD_OUT_ORDER.index(split) if split in HELD_OUT_ORDER else len(HELD_OUT_ORDER)


def _workspace() -> Catalog:
    """The pinned prime-rl catalogue, whose `taskset[<id>]` definitions are each taskset's
    arguments (the same cached read as whileai.targets.prime_rl.catalog)."""
    return pinned("prime-rl", lax_bools=True)
