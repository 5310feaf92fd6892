"""whileai: compile OPD / OPSD / GRPO / SFT specs into the run files of training frameworks (the
targets, listed once in `whileai.targets.registry`).

    import whileai as wai
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
    cfg = wai.prime_rl_config("reverse-text", wai.OPSD(privileged="answer"),
                              model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", out="opsd.toml")
    print(cfg)

Importing whileai pulls in pydantic only: never torch, transformers, trl or modal. The public
names below are imported on first use, so a command loads only the rooms it needs.
"""

from typing import TYPE_CHECKING, Any

from whileai.version import __version__

# public name -> the module that defines it
_PUBLIC = {
    "compile": "whileai.api", "compile_all": "whileai.api", "prime_rl_config": "whileai.api",
    "trl_config": "whileai.api", "SpecError": "whileai.errors", "Compiled": "whileai.targets.compiled",
    **{name: "whileai.spec.run" for name in ("GRPO", "OPD", "OPSD", "SFT", "Endpoint", "RunSpec",
                                             "Source", "Stage")},
}

__all__ = [
    "GRPO", "OPD", "OPSD", "SFT", "Compiled", "Endpoint", "RunSpec", "Source", "SpecError", "Stage",
    "compile", "compile_all", "prime_rl_config", "trl_config", "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        import importlib

        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'whileai' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from whileai.api import compile, compile_all, prime_rl_config, trl_config
    from whileai.errors import SpecError
    from whileai.spec.run import GRPO, OPD, OPSD, SFT, Endpoint, RunSpec, Source, Stage
    from whileai.targets.compiled import Compiled
