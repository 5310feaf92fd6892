"""How the loader's rules read a document: values as prime-rl's classes would hold them.

A `View` is a table of the document (the whole file, `trainer.model`, a train source...) with
the catalogue node of its class. `view["a.b"]` is the value the loader would see: the
document's own value (the string "None" read as null, as prime-rl's BaseConfig does), else the
field's default from the pinned catalogue, following the branch the document's `type`/`name`
tag (or the union's default type) selects. `view.has("a")` is pydantic's `model_fields_set`:
whether the key is written. Rules are plain functions registered in a `RuleSet` with an id and
the pinned source line they mirror; each returns the problems it finds as (key, message).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from whileai.catalogs.paths import Seg, get_path, join, parse
from whileai.catalogs.targets import Catalog, Node, Problem, _narrow
from whileai.errors import SpecError, raw

MISSING: Any = object()
# whether the schema accepted the document: a rule then never meets a value of the wrong type
STRICT: contextvars.ContextVar[bool] = contextvars.ContextVar("whileai_strict_rules", default=False)
# the tests collect which rules found something ("<rule set>: <rule id>") over the battery
FIRED: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("whileai_fired", default=None)
# what a rule returns: a message at the table itself, (key, message), Problems with full
# paths (from rules it delegates to), or a list of these; nothing when the rule holds
Found = str | tuple[str, str] | Problem | list[Any] | None
Check = Callable[["View"], Found]


class View:
    def __init__(self, doc: Any, catalog: Catalog, node: Node, prefix: tuple[Seg, ...] = ()) -> None:
        self.doc = doc  # the table itself (a dict, or MISSING when the document leaves it out)
        self.catalog = catalog
        self.node = node
        self.prefix = prefix

    @classmethod
    def root(cls, doc: dict[str, Any], catalog: Catalog) -> View:
        return cls(doc, catalog, catalog.top)

    def path(self, rel: str = "") -> str:
        return join((*self.prefix, *parse(rel))) if rel else join(self.prefix)

    def raw(self, rel: str) -> Any:
        """The document's own value (MISSING where it writes none)."""
        return get_path(self.doc, rel, MISSING)

    def has(self, rel: str) -> bool:
        return self.raw(rel) is not MISSING

    def __getitem__(self, rel: str) -> Any:
        value = self.raw(rel)
        if value is not MISSING:
            return None if value == "None" else value
        return default(self.catalog, self.node, list(parse(rel)), self.doc)

    def get(self, rel: str, kind: type | tuple[type, ...], fallback: Any = None) -> Any:
        """The value when it has the expected type (a wrong type is the schema's to report)."""
        value = self[rel]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            return fallback
        return value if isinstance(value, kind) else fallback

    def at(self, rel: str) -> View:
        segs = parse(rel)
        value = self.raw(rel)
        return View(value if value != "None" else None, self.catalog,
                    child_node(self.catalog, self.node, list(segs), self.doc), (*self.prefix, *segs))

    def present(self, rel: str) -> bool:
        """The table holds a value that is not null (written, or a non-null default)."""
        return self[rel] is not None

    def items(self, rel: str) -> list[View]:
        value = self.raw(rel)
        if not isinstance(value, list):
            return []
        return [self.at(f"{rel}[{i}]") for i, item in enumerate(value) if isinstance(item, dict)]


def _branch(catalog: Catalog, node: Node, value: Any) -> Node | None:
    """The object branch of `node` that `value` (a table, or MISSING) is validated against."""
    narrowed = _narrow(catalog.resolve(node).get("x-prime-rl-narrow"), value)
    if narrowed:
        node = {"$ref": f"#/$defs/{narrowed}"}
    objects = [b for b in catalog.branches(node) if "properties" in b]
    if not objects:
        return None
    tags: list[Any] = []
    if isinstance(value, dict):
        tags += [("type", value.get("type")), ("name", value.get("name"))]
    fallback_tag = catalog.resolve(node).get("x-prime-rl-default-type", node.get("x-prime-rl-default-type"))
    default = node.get("default", catalog.resolve(node).get("default"))
    tags.append(("type", fallback_tag))
    if isinstance(default, dict):
        tags.append(("type", default.get("type")))
        tags.append(("name", default.get("name")))
    for tag, want in tags:
        if want is None:
            continue
        hit = [b for b in objects if b["properties"].get(tag, {}).get("const") == want]
        if hit:
            return hit[0]
    return objects[0]


def child_node(catalog: Catalog, node: Node, segs: list[Seg], value: Any) -> Node:
    for seg in segs:
        if isinstance(seg, int):
            items = [b.get("items") for b in catalog.branches(node) if b.get("type") == "array"]
            node = items[0] if items and isinstance(items[0], dict) else {}
            value = value[seg] if isinstance(value, list) and seg < len(value) else MISSING
            continue
        branch = _branch(catalog, node, value)
        node = (branch or {}).get("properties", {}).get(seg, {})
        value = value.get(seg, MISSING) if isinstance(value, dict) else MISSING
    return node


def default(catalog: Catalog, node: Node, segs: list[Seg], value: Any) -> Any:
    """The loader's default at `segs` below `node`, whose document value is `value`."""
    for i, seg in enumerate(segs):
        if isinstance(seg, int):
            return None
        branch = _branch(catalog, node, value)
        if branch is None:
            return None
        prop = branch["properties"].get(seg)
        if prop is None:
            return None
        sub = value.get(seg, MISSING) if isinstance(value, dict) else MISSING
        if sub is MISSING or sub == "None" or sub is None:
            if sub is not MISSING:  # written as null: nothing below it
                return None
            found = prop.get("default", catalog.resolve(prop).get("default", MISSING))
            if found is not MISSING:
                return dig(found, segs[i + 1:])
        node, value = prop, sub
    return None if value is MISSING else value


def dig(value: Any, segs: list[Seg]) -> Any:
    for seg in segs:
        if not isinstance(value, dict) or seg not in value:
            return None
        value = value[seg]
    return value


class LoaderRule(NamedTuple):
    id: str
    source: str  # the pinned validator it mirrors, or "whileai" for a deliberate addition
    check: Callable[[View], Found]


class RuleCrash(SpecError):
    """A loader rule raised: a whileai bug, said in one line naming the rule (exit 2), never
    skipped, the same for users and tests."""

    def __init__(self, rule_set: str, rule: LoaderRule, error: Exception) -> None:
        self.rule = f"{rule_set}: {rule.id}"
        super().__init__("internal error", raw(
            f"whileai's mirror of the prime-rl loader rule '{self.rule}' ({rule.source}) raised "
            f"{type(error).__name__}: {error}"), "this is a whileai bug, not a problem in the file "
            "(the file was not fully checked): please report it")


class RuleSet:
    """The rules of one prime-rl config class, applied to a View of that class."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rules: list[LoaderRule] = []

    def __call__(self, rule_id: str, source: str) -> Callable[[Check], Check]:
        def register(fn: Check) -> Check:
            self.rules.append(LoaderRule(rule_id, source, fn))
            return fn
        return register

    def run(self, view: View) -> list[Problem]:
        out: list[Problem] = []
        for rule in self.rules:
            try:
                found = rule.check(view)
            except RuleCrash:
                raise  # a rule set this rule delegates to named the rule that crashed
            except (TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError) as e:
                if STRICT.get():
                    raise RuleCrash(self.name, rule, e) from e  # the schema accepted every value
                continue  # a value of the wrong shape: the schema check names it
            except Exception as e:
                raise RuleCrash(self.name, rule, e) from e
            found_here = [x if isinstance(x, Problem) else Problem(view.path(x[0]), x[1])
                          for x in _items(found)]
            fired = FIRED.get()
            if found_here and fired is not None:
                fired.add(f"{self.name}: {rule.id}")
            out += found_here
        return out


def _items(found: Found) -> Iterable[Any]:
    if not found:
        return []
    if isinstance(found, str):
        return [("", found)]
    if isinstance(found, tuple):  # a Problem is a tuple too
        return [found]
    return found
