"""The app module imported again as Modal's container entry imports it: in a fresh process, without
the launcher's environment, with the image's environment and the marker modal sets in a container
(MODAL_IS_REMOTE=1, modal/config.py `_is_remote`). Each function's dependencies there must be the
deployed ones, or the container refuses to start (modal/_container_entrypoint.py:377-387)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("modal", reason="the modal extra (pip install -e '.[modal]')")

ROOT = Path(__file__).resolve().parents[2]

# what the container entry computes (modal/_runtime/user_code_imports.py:525), and the ENV lines
# the image's layers send to the builder (each layer's own Dockerfile function)
PROBE = r"""
import json, shlex
import modal
from modal._utils.async_utils import synchronizer
import whileai.launch.modal_app as m

def deps(fn):
    f = synchronizer._translate_in(fn)
    return [f"{type(d).__name__}: {d._rep}" for d in f._deps_(only_explicit_mounts=True)]

def image_env(image):
    env, seen, todo = {}, set(), [synchronizer._translate_in(image)]
    while todo:
        im = todo.pop()
        if id(im) in seen:
            continue
        seen.add(id(im))
        for cell in im._load.__closure__ or ():
            fn = cell.cell_contents
            if callable(fn) and getattr(fn, "__name__", "") == "build_dockerfile":
                for cmd in fn("2024.10").commands:
                    if cmd.startswith("ENV "):
                        k, _, v = cmd[4:].partition("=")
                        env.setdefault(k, shlex.split(v)[0] if v else "")
        todo += [d for d in (im._deps() if im._deps else []) if type(d).__name__ == "_Image"]
    return env

fns = {n: deps(getattr(m, n)) for n in ("train", "validate")
       if isinstance(getattr(m, n, None), modal.Function)}
print(json.dumps({"deps": fns, "env": image_env(m.image), "gpus": m.GPUS, "timeout": m.TIMEOUT}))
"""


def probe(env: dict[str, str]) -> dict:
    base = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", PROBE], env=base | env, capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", ["prime-rl", "verl"])
def test_container_sees_the_deployed_dependencies(target: str) -> None:
    launcher = {"WHILEAI_MODAL_TARGET": target, "WHILEAI_MODAL_SECRETS": "huggingface,wandb",
                "WHILEAI_MODAL_VOLUME": "runs-elsewhere", "WHILEAI_MODAL_GPUS": "H100:8",
                "WHILEAI_MODAL_TIMEOUT": "7200"}
    deployed = probe(launcher)
    assert any("huggingface" in d for d in deployed["deps"]["train"])
    # the container: the image's environment and modal's marker, none of the launcher's
    container = probe(deployed["env"] | {"MODAL_IS_REMOTE": "1"})
    assert container["deps"] == deployed["deps"]
    assert (container["gpus"], container["timeout"]) == (["H100:8"], 7200)
    assert deployed["env"]["WHILEAI_MODAL_SECRETS"] == "huggingface,wandb"  # names, never values
