"""pydantic's validation errors → one SpecError line naming the user's key, with a did-you-mean
that knows which model the key is in. Imports no spec module: the specs import it.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from whileai.catalogs import paths
from whileai.errors import SpecError, raw, show

# why a bound holds, where pydantic's "greater than or equal to 2" alone leaves the user guessing
BOUND_WHY = {
    ("GRPO", "samples"): "GRPO's advantage compares each completion with the others sampled for "
                         "its prompt, and a group of one has nothing to compare",
    ("RunSpec", "prompt_tokens"): "a chat template wraps even a one-word prompt in role markers "
                                  "(Qwen3's makes a one-word prompt 9 tokens, Llama 3's default "
                                  "system header alone is about 30) and a taskset's system "
                                  "prompt comes on top; a smaller budget leaves no room for "
                                  "the task itself",
}


def from_validation(exc: ValidationError, model: type[BaseModel]) -> SpecError:
    errs = exc.errors(include_url=False)
    err = _first(errs)
    loc, where = clean_loc(model, err["loc"])
    field = paths.join(tuple(loc)) if loc else model.__name__
    kind, value = err["type"], err.get("input")
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, SpecError):  # raised by a validator: already one clear line
        if not loc or inner.field.startswith(field):
            return inner
        return SpecError(f"{field}.{inner.field}", inner.value, inner.allowed, hint=inner.hint)
    if kind == "extra_forbidden":
        known = fields_at(where)
        guess = near(str(loc[-1]), known)
        said = f"unknown field (did you mean {guess!r}?)" if guess else "unknown field"
        return SpecError(field, raw(said), f"the fields here are {quoted(known)}")
    if kind == "union_tag_not_found" and isinstance(value, dict):
        return _untagged(model, loc, field, value)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        ctx = err.get("ctx") or {}
        tag = ctx.get("tag", value)
        tags = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",") if t.strip()]
        guess = near(tag, tags) if isinstance(tag, str) else None
        return SpecError(field if field.endswith("type") else f"{field}.type", tag,
                         f"one of {', '.join(tags)}", hint=f"did you mean {guess!r}?" if guess else "")
    if kind == "model_attributes_type" and loc == ["method"]:
        return SpecError(field, value, "a table: [method] with type = \"opd\", \"opsd\", \"grpo\" or \"sft\" "
                         "and the method's fields")
    if kind == "missing":
        return SpecError(field, raw("missing"), "this field is required")
    msg = err["msg"].removeprefix("Value error, ")
    why = BOUND_WHY.get((where.__name__, str(loc[-1]) if loc else ""))
    if why and kind.startswith("greater_than"):  # a lower bound with a reason to give
        msg = f"{msg}: {why}"
    if isinstance(value, dict):
        value = raw("a table")
    elif isinstance(value, list) and len(show(value)) > 60:
        value = raw(f"a list of {len(value)} items")
    return SpecError(field, value, msg[0].lower() + msg[1:] if msg else "see the docs")


def _first(errs: list[Any]) -> Any:
    """The error to show: pydantic's first, except that a table missing beside an unknown key
    spelt like it (`[methd]` for `[method]`) is the unknown key's error, which names the typo."""
    err = errs[0]
    if err["type"] == "missing" and err["loc"]:
        name, parent = str(err["loc"][-1]), err["loc"][:-1]
        for other in errs[1:]:
            loc = other["loc"]
            if other["type"] == "extra_forbidden" and loc[:-1] == parent and near(str(loc[-1]), [name]):
                return other
    return err


def _untagged(model: type[BaseModel], loc: list[Any], field: str, table: dict[str, Any]) -> SpecError:
    """A union table with no `type` key: the key that is wrong (a misspelt `type` or field, a
    sub-table named after a member) when there is one, else `type` missing with every tag."""
    members = _union_at(model, loc)
    tags = sorted(str(t) for t in map(_tag, members) if isinstance(t, str))
    one_of = f"one of {', '.join(tags)}" if tags else "see the docs"
    known = sorted({k for m in members for k in fields_at(m)})
    for key in table:
        if key in tags:  # [method.opd]: the method named as a sub-table
            return SpecError(f"{field}.{key}", raw("a table named after a type"),
                             f'{field} is one table with type = "{key}" and its fields in it')
        if key not in known:
            guess = near(str(key), known)
            if guess:
                return SpecError(f"{field}.{key}", raw(f"unknown field (did you mean {guess!r}?)"),
                                 f"{field} needs type = {' | '.join(tags)}")
    return SpecError(f"{field}.type", raw("missing"), one_of)


def _union_at(model: type[BaseModel], loc: list[Any]) -> list[Any]:
    """The models of the tagged union at the user's key path `loc` (none when it is not one)."""
    cur: Any = model
    for seg in loc:
        cur = _bare(cur)
        if isinstance(cur, type) and issubclass(cur, BaseModel):
            info = _field(cur, seg)
            cur = info.annotation if info is not None else None
        elif get_origin(cur) in (list, tuple, dict):
            args = get_args(cur)
            cur = args[-1] if args else None
        else:
            return []
    return [m for m in _members(_bare(cur)) if isinstance(m, type) and issubclass(m, BaseModel)]


def quoted(names: list[str]) -> str:
    """'a', 'b' and 'c': names a user can copy, in one clean clause."""
    q = [repr(n) for n in names]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + f" and {q[-1]}"


def clean_loc(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[Any], type[BaseModel]]:
    """pydantic's error location → the user's key path, without the union members pydantic
    names (`method.opd.top_k.constrained-int` → method.top_k), and the model whose fields the
    last key is among (for the did-you-mean)."""
    out: list[Any] = []
    cur: Any = model
    owner = model
    for seg in loc:
        cur = _bare(cur)
        if isinstance(cur, type) and issubclass(cur, BaseModel):
            owner = cur
            out.append(seg)
            info = _field(cur, seg)
            cur = info.annotation if info is not None else None
            continue
        members = _members(cur)
        if len(members) > 1:  # pydantic names the member it tried: not a key of the user's
            cur = next((m for m in members if isinstance(m, type) and issubclass(m, BaseModel)
                        and seg in (m.__name__, _tag(m))), None)
            continue
        if get_origin(cur) in (list, tuple, dict):
            args = get_args(cur)
            cur = args[-1] if args else None
        else:
            cur = None
        out.append(seg)
    return out, owner


def _bare(ann: Any) -> Any:
    """Strip Annotated[...] and a lone `| None`."""
    while get_origin(ann) is Annotated:
        ann = get_args(ann)[0]
    members = _members(ann)
    return _bare(members[0]) if len(members) == 1 and members[0] is not ann else ann


def _members(ann: Any) -> list[Any]:
    if get_origin(ann) in (Union, types.UnionType):
        return [a for a in get_args(ann) if a is not type(None)]
    return [ann]


def _field(model: type[BaseModel], name: Any) -> Any:
    for n, info in model.model_fields.items():
        if name in (n, info.alias):
            return info
    return None


def _tag(model: type[BaseModel]) -> Any:
    info = model.model_fields.get("type")
    return info.default if info is not None else None


def fields_at(model: type[BaseModel]) -> list[str]:
    return [(i.alias or n) for n, i in model.model_fields.items() if n != "schema_"]


def near(word: str, options: list[str]) -> str | None:
    """The closest option to a misspelt name ('max-steps' → 'steps'), or None."""
    from whileai.errors import close_matches

    by_norm = {o.replace("-", "_").lower(): o for o in options}
    hits = close_matches(word.replace("-", "_").lower(), list(by_norm), n=1, cutoff=0.6)
    return by_norm[hits[0]] if hits else None
