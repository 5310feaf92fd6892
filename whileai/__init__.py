"""whileai: compile OPD / OPSD / GRPO / SFT specs into prime-rl and TRL run files.

    import whileai as wai
    teacher = wai.Endpoint(url="http://localhost:8001/v1", model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
    cfg = wai.prime_rl_config("reverse-text", wai.OPSD(privileged="answer"),
                              model="PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", out="opsd.toml")
    print(cfg)

Importing whileai pulls in pydantic only: never torch, transformers, trl or modal.
"""

__version__ = "0.1.0"

from whileai.api import compile, compile_all, prime_rl_config, trl_config  # noqa: E402
from whileai.errors import SpecError  # noqa: E402
from whileai.report import Compiled  # noqa: E402
from whileai.spec import GRPO, OPD, OPSD, SFT, Endpoint, RunSpec, Source, Stage  # noqa: E402

__all__ = [
    "GRPO", "OPD", "OPSD", "SFT", "Compiled", "Endpoint", "RunSpec", "Source", "SpecError", "Stage",
    "compile", "compile_all", "prime_rl_config", "trl_config", "__version__",
]
