"""Which renderer prime-rl should use for a model, from the renderers package's own data.

prime-rl renders every rollout through the `renderers` package (0.1.10.dev10 at the pin). Its
`auto` renderer looks the tokenizer's name up in `MODEL_RENDERER_MAP` by exact key and never
by prefix, and prime-rl refuses `auto` at load time for a name that is no key. whileai
therefore always writes an explicit renderer, chosen in this order and reported with where
the choice came from:

1. exact map entry: the model is a key of the map (catalogue `x-prime-rl.model_renderers`);
2. the package's rule: a documented rule of the package for a family the map leaves out
   (`PACKAGE_RULES`, each with its citation), e.g. DeepSeek-R1-Distill models use their base
   model's tokenizer, not the `deepseek-r1` renderer;
3. the base model of a fine-tune named in the map: the model's name is a map key (or a map
   key's model name under another owner) followed by a suffix, as
   `PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT` is a fine-tune of `PrimeIntellect/Qwen3-0.6B`
   (the pin's own configs use `prime-qwen3` for it);
4. the chat-template fallback: `default`, which applies the tokenizer's own chat template
   (the package's choice for a text model it does not know).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from whileai.targets.prime_rl.catalog import catalog as prime_rl_catalog

FALLBACK = "default"
# Rules the renderers package states in its documentation for models its map leaves out.
PACKAGE_RULES: list[dict[str, Any]] = [
    {
        "family": "DeepSeek-R1-Distill",
        "match": "deepseek-r1-distill-",  # in the model's name (lowercase), any owner or mirror
        "renderer": {"name": "default", "reasoning_parser": "think"},
        "wrong": ["deepseek-r1"],
        "why": "R1-Distill models use their base model's tokenizer and chat template; the "
               "deepseek-r1 renderer is for full DeepSeek-R1 / R1-0528 only, so whileai uses "
               "the model's own chat template ('default') with the think reasoning parser, as "
               "the pin's hendrycks-sanity config does",
        "source": "renderers 0.1.10.dev10 deepseek_r1.py (module docstring) and "
                  "configs.py:743; prime-rl 559b447 configs/basic/hendrycks-sanity/rl.toml",
    },
]


TABLE_KEYS = ("name", *dict.fromkeys(k for r in PACKAGE_RULES for k in r["renderer"] if k != "name"))


class Choice(NamedTuple):
    table: dict[str, Any]  # the [orchestrator.renderer] table: name (+ parser settings)
    origin: str  # "exact map entry" | "the package's rule" | "base model of a fine-tune" | ...
    reason: str  # the report's sentence

    @property
    def name(self) -> str:
        return str(self.table["name"])


def model_map() -> dict[str, str]:
    found: dict[str, str] = prime_rl_catalog().top.get("x-prime-rl", {}).get("model_renderers", {})
    return found


def choose(model: str, renderers: dict[str, str] | None = None) -> Choice:
    """The renderer for `model`, never 'auto', with where the choice came from."""
    return _choose(model, model_map() if renderers is None else renderers)


def _choose(model: str, table: dict[str, str]) -> Choice:
    if model in table:
        return Choice({"name": table[model]}, "exact map entry",
                      f"{model} is a key of the renderers package's model map")
    rule = package_rule(model)
    if rule is not None:
        return Choice(dict(rule["renderer"]), "the package's rule",
                      f"{rule['family']}: {rule['why']} ({rule['source']})")
    base = fine_tune_base(model, table)
    if base is not None:
        return Choice({"name": table[base]}, "base model of a fine-tune",
                      f"{model} is named as a fine-tune of {base}, the map's entry; if its chat "
                      f"template differs from {base}'s, set renderer name = 'default'")
    return Choice({"name": FALLBACK}, "chat-template fallback",
                  f"{model} is no key of the renderers package's model map and no fine-tune of "
                  "one: 'default' renders with the model's own chat template")


def package_rule(model: str) -> dict[str, Any] | None:
    name = model.rstrip("/").split("/")[-1].lower()
    return next((r for r in PACKAGE_RULES if r["match"] in name), None)


def fine_tune_base(model: str, table: dict[str, str]) -> str | None:
    """The longest map key the model's name extends with a separator ('-', '_' or '.'): the
    full id first (`PrimeIntellect/Qwen3-0.6B-X`), else the key's model name under any owner
    (`someone/Qwen3-1.7B-math` extends `Qwen/Qwen3-1.7B`)."""
    def extends(name: str, key: str) -> bool:
        return name.startswith(key) and name[len(key):][:1] in ("-", "_", ".")

    full = [k for k in table if extends(model, k)]
    if full:
        return max(full, key=len)
    name = model.rstrip("/").split("/")[-1]
    by_name = [k for k in table if extends(name, k.split("/")[-1])]
    if not by_name:
        return None
    longest = max(len(k.split("/")[-1]) for k in by_name)
    tied = sorted(k for k in by_name if len(k.split("/")[-1]) == longest)
    # one base name under several owners (Qwen/Qwen3-1.7B, PrimeIntellect/Qwen3-1.7B): the
    # renderer most of the map uses, as a fine-tune under a third owner most likely descends
    # from the original release
    uses = {r: list(table.values()).count(r) for r in {table[k] for k in tied}}
    return max(tied, key=lambda k: (uses[table[k]], k == tied[0]))


def misused(model: str, renderer: Any) -> str | None:
    """A renderer the package's documentation calls wrong for this model, and why."""
    rule = package_rule(model)
    if rule is not None and isinstance(renderer, str) and renderer in rule["wrong"]:
        return (f"renderer {renderer!r} is wrong for {model}: {rule['why']} "
                f"({rule['source']}); write name = {rule['renderer']['name']!r}"
                + "".join(f", {k} = {v!r}" for k, v in rule["renderer"].items() if k != "name"))
    return None
