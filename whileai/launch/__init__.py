"""Launch paired arms and collect what they report.

    m = plan({"grpo": c_grpo, "opd": c_opd}, tag="rt-1", out_dir="runs/rt-1")
    launch(m, LocalBackend())            # or backend("modal") after `modal deploy`
    code = collect(m, backend)           # 3 while any arm runs, 0 when none does

modal is never imported here; `backend("modal")` imports `whileai.launch.modal_app` on demand.
"""

from __future__ import annotations

from typing import Any

from whileai.errors import SpecError
from whileai.launch.backend import (
    EXIT_DONE,
    EXIT_INFRA,
    EXIT_RUNNING,
    Backend,
    InfraError,
    Outcome,
    collect,
    launch,
    summary,
)
from whileai.launch.local import LocalBackend
from whileai.launch.manifest import (
    ArmRecord,
    ArmSpec,
    Manifest,
    arm_from_compiled,
    load_manifest,
    plan,
)
from whileai.launch.metrics import Metrics, read_metrics, write_metrics
from whileai.launch.runner import call_argv


def backend(name: str, **kwargs: object) -> Backend:
    """'local' or 'modal' (the latter imports modal)."""
    if name == "local":
        return LocalBackend(**kwargs)  # type: ignore[arg-type]
    if name == "modal":
        return modal_module().ModalBackend(**kwargs)  # type: ignore[no-any-return]
    raise ValueError(f"unknown backend {name!r}; expected 'local' or 'modal'")


def modal_module() -> Any:
    """`whileai.launch.modal_app`, or one clear error where the modal extra is not installed."""
    try:
        import importlib

        app = importlib.import_module("whileai.launch.modal_app")
    except ModuleNotFoundError as e:
        if e.name != "modal" and not (e.name or "").startswith("modal."):
            raise
        raise SpecError("--on", "modal", "the Modal launch needs the modal package: pip install "
                        "-e '.[modal]' in a clone of whileai (or --on local / --dry-run / "
                        "--validate, which do not)") from None
    return app


__all__ = [
    "EXIT_DONE", "EXIT_INFRA", "EXIT_RUNNING", "ArmRecord", "ArmSpec", "Backend", "InfraError",
    "LocalBackend", "Manifest", "Metrics", "Outcome", "arm_from_compiled", "backend", "call_argv",
    "collect", "launch", "load_manifest", "modal_module", "plan", "read_metrics", "summary", "write_metrics",
]
