"""What a stage runs in: the stand-in commands first on PATH, the environment, the tiny model
(built once per rehearsal in the prime-rl environment), the served teachers' tokenizers cached
under their ids, and the ports the stand-ins will take.

    bin_ = shims(where, python); env = stage_env(python, bin_, where, tiny_dir, gpus)
    tiny = tiny_model(python, "qwen3", "qwen3", root / "tiny", timeout)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from whileai.errors import SpecError
from whileai.vocab import tiny  # the standard library at import; run by path, not called, here

STANDINS = Path(__file__).parent / "standins"
TINY = Path(tiny.__file__)  # the tiny-model builder: `python tiny.py OUT FAMILY TEXTS.json TYPE`


def shims(folder: Path, python: Path) -> Path:
    bin_ = folder / "bin"
    bin_.mkdir(parents=True, exist_ok=True)
    for cmd, script in (("inference", "inference.py"), ("torchrun", "trainer.py")):
        p = bin_ / cmd
        p.write_text(f'#!/bin/sh\nexec "{python}" "{STANDINS / script}" "$@"\n')
        p.chmod(0o755)
    return bin_


def stage_env(python: Path, shims: Path, where: Path, tokenizer: Path, gpus: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.update(
        {
            "PATH": os.pathsep.join([str(shims), str(python.parent), env.get("PATH", "")]),
            "WHILEAI_REHEARSE_DIR": str(where),
            "WHILEAI_REHEARSE_TOKENIZER": str(tokenizer),
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "WANDB_MODE": "disabled",
            "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(gpus)),
            "PYTHONUNBUFFERED": "1",
        }
    )
    site = where / "site"  # the rehearsal's sitecustomize (standins/sitecustomize.py says why)
    site.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STANDINS / "sitecustomize.py", site / "sitecustomize.py")
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(site), env.get("PYTHONPATH", "")) if x)
    return env


def tiny_model(python: Path, fam: str, model_type: str, folder: Path, timeout: float) -> dict[str, Any]:
    """Build (once per folder) the tiny stand-in model in the prime-rl environment."""
    done = folder / "WHILEAI_TINY.json"
    if done.exists():
        facts: dict[str, Any] = json.loads(done.read_text())
        if facts.get("family") == fam and facts.get("model_type", fam) == model_type:
            return facts
        shutil.rmtree(folder)  # a kept folder's tiny model of another family
    from whileai.tasksets import reverse_text as rt

    texts = [
        rt.SYSTEM_PROMPT,
        "<reversed_text>",
        "</reversed_text>",
        "system user assistant",
        "Reverse the text character-by-character. Put your answer in <reversed_text> tags.",
    ]
    for p in rt.phrases(400):
        texts += [p, p[::-1]]
    folder.parent.mkdir(parents=True, exist_ok=True)
    (folder.parent / "texts.json").write_text(json.dumps(texts))
    _in_env(python, TINY, [str(folder), fam, str(folder.parent / "texts.json"), model_type],
            "an environment that builds the tiny model (tokenizers, transformers)", timeout)
    facts = json.loads(done.read_text())
    return facts


def arg_value(args: list[str], flag: str) -> str | None:
    """The value a run line gives a flag (`--flag V` or `--flag=V`), or None."""
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def model_of(args: list[str], files: dict[str, str] | None = None) -> str | None:
    value = arg_value(args, "--vllm.model")
    return value if value is not None else _from_file(args, files, "vllm", "model")


def _from_file(args: list[str], files: dict[str, str] | None, table: str, key: str) -> Any:
    """A value of the server config a line reads (`inference @ file`), or None."""
    if len(args) < 2 or args[0] != "@" or not files or args[1] not in files:
        return None
    from whileai.spec.load import loads_toml

    return (loads_toml(files[args[1]], where=args[1]).get(table) or {}).get(key)


def hub_cache(home: Path, ids: list[str], tiny_dir: Path) -> list[str]:
    """The tiny model's tokenizer and config, cached under each served model's hub id in a
    Hugging Face cache of the rehearsal's own (HF_HOME): what loads a teacher's tokenizer (the
    env server, for a sampling teacher) finds it offline. Returns the ids cached."""
    done = []
    for model_id in ids:
        if "/" not in model_id or Path(model_id).exists():
            continue
        repo = home / "hub" / ("models--" + model_id.replace("/", "--"))
        snap = repo / "snapshots" / "rehearsal"
        snap.mkdir(parents=True, exist_ok=True)
        for f in tiny_dir.iterdir():
            if f.is_file():
                shutil.copyfile(f, snap / f.name)
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text("rehearsal")
        done.append(model_id)
    return done


def port_of(args: list[str], default: int = 8000, files: dict[str, str] | None = None) -> int:
    value = arg_value(args, "--server.port") or _from_file(args, files, "server", "port")
    return default if value is None else int(value)


def policy_ports(doc: dict[str, Any]) -> set[int]:
    inf = doc.get("inference")
    if not isinstance(inf, dict):
        return set()
    port = int((inf.get("server") or {}).get("port") or 8000)
    return {port, int(inf.get("backend_port") or port + 100)}


def cache_rows(python: Path, cache: Path, spec: list[dict[str, Any]], timeout: float) -> None:
    """Local rows cached under their hub datasets' ids (`rows.CACHED`), written by the prime-rl
    environment's own `datasets` (standins/hubrows.py) into the rehearsal's datasets cache."""
    if not spec:
        return
    cache.mkdir(parents=True, exist_ok=True)
    (cache.parent / "rows.json").write_text(json.dumps(spec))
    _in_env(python, STANDINS / "hubrows.py", [str(cache), str(cache.parent / "rows.json")],
            "an environment whose `datasets` caches local rows offline", max(30.0, timeout))


def _in_env(python: Path, script: Path, args: list[str], allowed: str, timeout: float) -> None:
    """A script run by path in the prime-rl environment; its failure is one SpecError naming
    what that environment must do, with the script's last line of stderr."""
    r = subprocess.run([str(python), str(script), *args], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise SpecError("--python", str(python), allowed,
                        hint=(r.stderr.strip().splitlines() or ["no output"])[-1])
