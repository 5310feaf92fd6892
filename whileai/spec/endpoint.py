"""`Endpoint`: an OpenAI-compatible server (vLLM) that serves a frozen teacher, as a table or
the string `vllm:<model>@<url>`."""


import re
from typing import Any

from pydantic import field_validator, model_validator

from whileai.spec.base import _Spec, src

# every pattern is matched in full (re.fullmatch): a trailing newline is not a match; each is
# compiled on first use (re's own cache), so a run that never meets one never compiles it
_URL = r"https?://[A-Za-z0-9.\-]+(?::(\d{1,5}))?(?:/[^\s@]*)?"
_ENV_VAR = r"[A-Za-z_][A-Za-z0-9_]*"


class Endpoint(_Spec):
    """An OpenAI-compatible server (vLLM) that serves a frozen teacher."""

    url: str = src("Base URL of the server, e.g. http://localhost:8001/v1.", "", max_length=2048)
    model: str = src("Model name the server serves (the Hugging Face id).", "", min_length=1,
                     max_length=1024)
    api_key_env: str = src(
        "Name of the environment variable that holds the server's API key. Only the name is "
        "written anywhere; the key itself never is.",
        "prime-rl's teacher client default",
        default="VLLM_API_KEY", max_length=256,
    )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return parse_endpoint(data)
        return data

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        m = re.fullmatch(_URL, v)
        if not m:
            raise ValueError("expected http(s)://host[:port]/v1 with no credentials in it")
        if m.group(1) is not None and not 1 <= int(m.group(1)) <= 65535:
            raise ValueError("expected a port from 1 to 65535")
        if v.split("://", 1)[1].rstrip("/").count("/") == 0:
            raise ValueError("expected the OpenAI-compatible base URL with its path, e.g. "
                             "http://localhost:8001/v1 (requests to the bare host get 404 from vLLM)")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, v: str) -> str:
        if not re.fullmatch(_ENV_VAR, v):
            raise ValueError("expected the NAME of an environment variable, like VLLM_API_KEY")
        return v

    @property
    def port(self) -> int | None:
        m = re.fullmatch(_URL, self.url)
        return int(m.group(1)) if m and m.group(1) else None


def parse_endpoint(text: str) -> dict[str, str]:
    """`vllm:<model>@<url>` → Endpoint fields."""
    m = re.fullmatch(r"vllm:(?P<model>[^@\s]+)@(?P<url>\S+)", text)
    if not m:
        raise ValueError("expected 'vllm:<model>@<url>', e.g. 'vllm:Qwen/Qwen3-8B@http://localhost:8001/v1'")
    return {"model": m.group("model"), "url": m.group("url")}
