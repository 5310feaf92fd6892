"""Launch paired arms and collect what they report.

    m = plan({"grpo": c_grpo, "opd": c_opd}, tag="rt-1", out_dir="runs/rt-1")
    launch(m, LocalExecutor())           # or executor("modal", target="verl") after `modal deploy`
    code = collect(m, ex)                # 3 while any arm runs, 0 when none does

modal is never imported here; `executor("modal")` imports `whileai.launch.modal_app` on demand.
"""

from __future__ import annotations

from typing import Any

from whileai.errors import SpecError
from whileai.launch.executor import (
    EXIT_DONE,
    EXIT_INFRA,
    EXIT_RUNNING,
    Executor,
    InfraError,
    Outcome,
    collect,
    launch,
    summary,
)
from whileai.launch.local import LocalExecutor
from whileai.launch.manifest import (
    ArmRecord,
    ArmSpec,
    Manifest,
    arm_from_compiled,
    load_manifest,
    plan,
)
from whileai.launch.runner import call_argv
from whileai.targets.run import Metrics, read_metrics, write_metrics


def executor(name: str, *, target: str = "prime-rl", **kwargs: object) -> Executor:
    """'local' or 'modal' (the latter imports modal, and builds `target`'s app)."""
    if name == "local":
        return LocalExecutor(**kwargs)  # type: ignore[arg-type]
    if name == "modal":
        return modal_module(target).ModalExecutor(**kwargs)  # type: ignore[no-any-return]
    raise ValueError(f"unknown executor {name!r}; expected 'local' or 'modal'")


def modal_module(target: str = "prime-rl") -> Any:
    """`whileai.launch.modal_app` built for `target`'s Modal app, or one clear error where the
    modal extra is not installed."""
    import importlib
    import os
    import sys

    os.environ["WHILEAI_MODAL_TARGET"] = target
    try:
        app = sys.modules.get("whileai.launch.modal_app")
        if app is not None and app.TARGET != target:  # built for another target: build it afresh
            del sys.modules["whileai.launch.modal_app"]
        app = importlib.import_module("whileai.launch.modal_app")
    except ModuleNotFoundError as e:
        if e.name != "modal" and not (e.name or "").startswith("modal."):
            raise
        raise SpecError("--on", "modal", "the Modal launch needs the modal package: pip install "
                        "-e '.[modal]' in a clone of whileai (or --on local / --dry-run / "
                        "--validate, which do not)") from None
    return app


__all__ = [
    "EXIT_DONE", "EXIT_INFRA", "EXIT_RUNNING", "ArmRecord", "ArmSpec", "Executor", "InfraError",
    "LocalExecutor", "Manifest", "Metrics", "Outcome", "arm_from_compiled", "call_argv", "collect",
    "executor", "launch", "load_manifest", "modal_module", "plan", "read_metrics", "summary",
    "write_metrics",
]
