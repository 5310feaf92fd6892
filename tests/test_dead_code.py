"""No unused function, method or class in whileai/: vulture reads the package with what users run
(recipes, scripts, benchmarks), not the tests, so a helper that only a deleted caller or only a
test reaches fails here with its file and line.

What vulture cannot see is named once below: functions registered by a decorator (the loader
mirror's rule sets, typer commands, Modal functions, pydantic validators) and methods that
Python or a library calls by name (a module's __getattr__ and __dir__, pydantic's model_post_init,
rich's on_broken_pipe, http.server's do_GET / do_POST / log_message, click's
collect_usage_pieces, format_options and get_short_help_str).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CALLED_BY_DECORATOR = [
    "@RL", "@MODEL", "@SFT", "@ORCH", "@TRAINER", "@TRAINER_ONLY", "@ALGO", "@INFERENCE", "@EVAL",
    "@EVALS", "@STEPS", "@SOURCE", "@RESUME",  # the loader mirror's rule sets (targets/prime_rl/loader)
    "@app.command", "@command", "@app.function",  # typer commands; Modal functions
    "@field_validator", "@model_validator",  # pydantic
]
CALLED_BY_NAME = ["__getattr__", "__dir__", "model_post_init", "on_broken_pipe",
                  "do_GET", "do_POST", "log_message",  # http.server's request handler protocol
                  "collect_usage_pieces", "format_options", "get_short_help_str",  # click's help
                  "launch_servers", "init_colocated"]  # verl calls them on the rehearsal's replica stand-ins


def test_vulture_finds_no_unused_function_method_or_class_in_whileai() -> None:
    pytest.importorskip("vulture", reason="the dev extra (pip install -e '.[dev]'): vulture")
    done = subprocess.run(
        [sys.executable, "-m", "vulture", "whileai", "recipes", "scripts", "benchmarks",
         "--min-confidence", "60", "--exclude", "*/.anchor-venv/*",
         "--ignore-decorators", ",".join(CALLED_BY_DECORATOR),
         "--ignore-names", ",".join(CALLED_BY_NAME)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode in (0, 3), done.stderr  # 3: vulture found something (listed below)
    kinds = ("unused function ", "unused method ", "unused class ")
    unused = [line for line in done.stdout.splitlines()
              if line.startswith("whileai/") and any(k in line for k in kinds)]
    assert unused == [], "\n".join(unused)
