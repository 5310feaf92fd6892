"""One story per file: an override may not contradict the spec it sits in.

Three checks, each data a target already holds, each refusing with one line that names the
override and the spec field to use instead (`check_story`):

- a spec field that turns keys off (`Off` rows: lora = false writes no LoRA key, checkpoint.enabled
  = false no [ckpt]): an override that sets one of them is refused;
- a key the field map reads a spec field into, verbatim (`steps` -> max_steps): the field map is
  applied again with the spec field set to the override's value, and if anything else whileai
  writes or states moves with it (eval.interval follows steps, the adapter's name and vLLM's
  max_lora_rank follow lora_rank, the teacher's server follows teacher.model), the override alone
  would leave those at the old value: refused, naming the field (else carried: the report says
  what it replaced);
- a length whileai derives as a sum (`Floor`: seq_len = prompt_tokens + max_tokens): an override
  below it would cut the prompts and completions the spec asks for: refused, naming the fields.

`story(run)` is the target's own account of a run with no overrides: its keys (nested tables and
lists) and anything else the run's files or lines hold (a teacher server's file, the commands),
as one dict; two stories are compared key by key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from whileai.catalogs import paths
from whileai.errors import SpecError
from whileai.spec.run import RunSpec
from whileai.targets.fieldmap import Applied, Off, field_value, spec_field, with_field

Story = Callable[[RunSpec], dict[str, Any]]
SHOWN = 4  # keys named in a refusal


class Floor(NamedTuple):
    """Keys whileai derives as a sum of spec fields (or that must hold it): `least(run, doc)`
    is the sum and its terms in words, `fields` the spec fields to change."""

    paths: tuple[str, ...]
    least: Callable[[RunSpec, dict[str, Any]], tuple[int, str]]
    fields: str


def check_story(run: RunSpec, applied: Applied, story: Story, *, off: Sequence[Off] = (),
                floors: Sequence[Floor] = ()) -> None:
    """SpecError for the first override that contradicts the spec (see the module). `applied`:
    the field map's document and records, before the overrides."""
    keys = {path: paths.parse(path) for path in run.overrides}
    for path, value in run.overrides.items():
        _off(run, path, value, off)
        for floor in (f for f in floors if path in f.paths):
            least, how = floor.least(run, applied.doc)
            if isinstance(value, int) and not isinstance(value, bool) and value < least:
                raise SpecError(f"overrides.{path}", value, f"at least {least} ({how}): a "
                                f"shorter one cuts what the spec asks for; set {floor.fields} in "
                                "the spec instead")
        for r in applied.reads:
            field = spec_field(run, r.field)
            if r.path != path or field is None or field_value(run, field) != r.value \
                    or field_value(run, field) == value:
                continue
            stale = _moved(run, field, path, value, story, keys)
            if stale:
                shown = ", ".join(k.strip("<>") for k in stale[:SHOWN]) + (f" and {len(stale) - SHOWN} more"
                                                    if len(stale) > SHOWN else "")
                raise SpecError(f"overrides.{path}", value, f"set {r.field} = {toml(value)} in "
                                f"the spec instead: whileai derives {shown} from {r.field}, which "
                                "this override alone would leave at the spec's value")


def _off(run: RunSpec, path: str, value: Any, off: Sequence[Off]) -> None:
    segs = paths.parse(path)
    for o in off:
        hit = next((p for p in o.paths if paths.under(segs, paths.parse(p))
                    or paths.under(paths.parse(p), segs)), None)
        if hit is not None and o.when(run):
            raise SpecError(f"overrides.{path}", value, f"the spec's {o.field} = "
                            f"{toml(field_value(run, o.field))} writes no {hit}; to have it, set "
                            f"{o.fix} in the spec instead")


def toml(value: Any) -> str:
    """A value as a spec (TOML) writes it: `false`, "text", [1, 2]."""
    import tomli_w

    return tomli_w.dumps({"v": value}).partition("=")[2].strip()


def _moved(run: RunSpec, field: str, path: str, value: Any, story: Story,
           keys: dict[str, tuple[paths.Seg, ...]]) -> list[str]:
    """What else changes when the spec says `field = value`: keys outside every override. None
    where the spec field cannot say it: the value is not one the field holds (prime-rl's "None"
    for a URL), or the field's value is not what the key gets (the key is worked out from it,
    and only matched by chance): then the override is the only way to say it, and it is
    carried."""
    bare = run.model_copy(update={"overrides": {}})
    try:
        before, after = story(bare), story(with_field(bare, field, value))
    except (ValueError, TypeError, LookupError, AttributeError):  # SpecError is a ValueError
        return []
    if after.get(path) != value:
        return []
    moved = [k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k)]
    return [k for k in moved if not any(paths.under(_segs(k), s) for s in keys.values())]


def _segs(key: str) -> tuple[paths.Seg, ...]:
    """A story key's segments: a file key parsed, anything else (`<...>`) as one segment."""
    try:
        return (key,) if key.startswith("<") else paths.parse(key)
    except SpecError:
        return (key,)


def flat(doc: Any, prefix: tuple[paths.Seg, ...] = ()) -> Iterator[tuple[str, Any]]:
    """A document's leaves as (canonical key, value): tables and lists walked."""
    if isinstance(doc, dict) and doc:
        for k, v in doc.items():
            yield from flat(v, (*prefix, str(k)))
    elif isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        for i, v in enumerate(doc):
            yield from flat(v, (*prefix, i))
    else:
        yield paths.join(prefix), doc
