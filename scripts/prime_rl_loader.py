"""Run prime-rl's own config loader on many TOML files in one process; print JSON verdicts.

Needs a Python with prime-rl-configs at 559b447 (its `src/` on the path for the entry points),
the verifiers commit it pins with the example environments prime-rl's workspace lists, and
prime-pydantic-config; see ../shared/reference/prime-rl/README.md. It never builds anything.

    LOADER=/path/to/that/python
    $LOADER scripts/prime_rl_loader.py FILE_OR_DIR ...          # auto-detect each file's entry point
    $LOADER scripts/prime_rl_loader.py --entry rl a.toml b.toml   # force one entry point
    $LOADER scripts/prime_rl_loader.py --json docs.json --out verdicts.json

`--json` reads {name: toml_text} or {name: {"toml": text, "entry": "rl", "args": [...]}}
("-" reads stdin). Each document is loaded exactly as `uv run <entry> @ file.toml [args]` parses
it: `pydantic_config.cli(<Config>, args=["@", path, *args])`, where <Config> is the class the
entry point module hands to `cli` (rl: RLConfig, sft: SFTConfig, inference: InferenceConfig,
orchestrator: OrchestratorConfig, trainer: TrainerConfig, evals: EvalsConfig, env-server:
EnvServerConfig). No torch, vLLM or network is touched: the entry points import those only after
parsing.

Verdict per name (keys sorted, output deterministic):
    entry        the entry point used (auto: the first that accepts, else the likeliest)
    accepted     the loader's verdict
    error        normalized first lines of the loader's error ("" when accepted): one
                 "dotted.path[i]: message" line per pydantic error, or "ExcType: message"
                 for errors raised outside pydantic (e.g. an uninstalled taskset); memory
                 addresses, temp paths and the random run-name suffix are masked
    accepted_by  (auto only) every entry point that accepts the document
    warnings     warnings the validators emitted while loading (normalized)
    launch_error checks the entry point's launcher applies right after parsing that need no
                 GPU, disk or network (rl: policy client port = inference.server.port;
                 sft: NCCL weight broadcast needs [inference]); "" when none fails
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import tomllib

# entry point -> (config module, class); auto-detection tries them in this order.
ENTRIES: dict[str, tuple[str, str]] = {
    "rl": ("prime_rl.configs.rl", "RLConfig"),
    "sft": ("prime_rl.configs.sft", "SFTConfig"),
    "evals": ("prime_rl.configs.evals", "EvalsConfig"),
    "inference": ("prime_rl.configs.inference", "InferenceConfig"),
    "orchestrator": ("prime_rl.configs.orchestrator", "OrchestratorConfig"),
    "trainer": ("prime_rl.configs.trainer", "TrainerConfig"),
    "env-server": ("prime_rl.configs.env_server", "EnvServerConfig"),
}
MAX_LINES = 8
MAX_CHARS = 400


def config_class(entry: str) -> Any:
    module, name = ENTRIES[entry]
    return getattr(importlib.import_module(module), name)


def _clean(text: str, tmp: str) -> str:
    text = text.replace(tmp + "/", "").replace(tmp, "")
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)
    text = re.sub(r"--[0-9a-f]{8}\b", "--<run-id>", text)  # the random suffix of an unset run.name
    text = re.sub(r"(/[\w.+-]+)+/(site-packages|src|lib)/", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for seg in loc:
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += ("." if out else "") + str(seg)
    return out or "<root>"


def normalize_error(exc: BaseException, tmp: str) -> str:
    """The loader's error as 'path: message' lines (pydantic) or 'Type: message'."""
    from pydantic import ValidationError

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__
    if isinstance(cause, ValidationError):
        lines = [f"{_loc(tuple(e.get('loc', ())))}: {_clean(e.get('msg', ''), tmp)}" for e in cause.errors()]
        more = len(lines) - MAX_LINES
        lines = lines[:MAX_LINES] + ([f"... {more} more"] if more > 0 else [])
        return "\n".join(lines)
    message = getattr(exc, "message", None) or str(exc)
    first = _clean(message.splitlines()[0] if message else "", tmp)
    return f"{type(exc).__name__}: {first}"


def launch_error(entry: str, config: Any) -> str:
    """Pure pre-launch checks of the entry point's launcher (no GPU, disk or network)."""
    if entry == "rl" and config.inference is not None and config.slurm is None and not config.dry_run:
        port = urlparse(config.orchestrator.model.client.base_url).port
        if port != config.inference.server.port:
            return (
                f"orchestrator.model.client.base_url port ({port}) does not match "
                f"inference.server.port ({config.inference.server.port})"
            )
    if entry == "sft":
        wb = config.weight_broadcast
        if wb is not None and wb.type == "nccl" and config.inference is None:
            return "NCCL weight broadcast requires launcher-managed inference ([inference] block)"
    return ""


def load_one(entry: str, path: Path, args: list[str], tmp: str) -> dict[str, Any]:
    from pydantic_config import cli

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config = cli(config_class(entry), args=["@", str(path), *args])
        except SystemExit as e:  # argument errors print and exit in some paths
            return {"accepted": False, "error": f"SystemExit: {e.code}", "warnings": []}
        except Exception as e:  # noqa: BLE001 - every loader failure is a verdict
            return {"accepted": False, "error": normalize_error(e, tmp), "warnings": []}
    seen = dict.fromkeys(_clean(str(w.message), tmp) for w in caught)
    return {"accepted": True, "error": "", "warnings": list(seen), "_config": config}


def likeliest(doc: dict[str, Any]) -> str:
    """The entry point whose top-level fields cover the document's keys best."""
    keys = set(doc)

    def score(entry: str) -> tuple[int, int]:
        fields = set(config_class(entry).model_fields)
        return (len(keys - fields), list(ENTRIES).index(entry))

    return min(ENTRIES, key=score)


def verdict(name: str, text: str, entry: str, args: list[str], workdir: Path) -> dict[str, Any]:
    safe = re.sub(r"[^\w.-]+", "_", name).strip("_")[-80:] or "doc"
    path = workdir / f"{safe}.toml"
    path.write_text(text)
    tmp = str(workdir)
    if entry != "auto":
        out = load_one(entry, path, args, tmp)
        config = out.pop("_config", None)
        out["entry"] = entry
        out["launch_error"] = launch_error(entry, config) if config is not None else ""
        return out
    results = {e: load_one(e, path, args, tmp) for e in ENTRIES}
    accepted_by = [e for e, r in results.items() if r["accepted"]]
    if accepted_by:
        chosen = accepted_by[0]
    else:
        try:
            chosen = likeliest(tomllib.loads(text))
        except tomllib.TOMLDecodeError:
            chosen = "rl"
    out = results[chosen]
    config = out.pop("_config", None)
    out["entry"] = chosen
    out["accepted_by"] = accepted_by
    out["launch_error"] = launch_error(chosen, config) if config is not None else ""
    return out


def collect(paths: list[str], base: Path) -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for p in map(Path, paths):
        files = sorted(p.rglob("*.toml")) if p.is_dir() else [p]
        for f in files:
            try:
                name = f.resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                name = f.as_posix()
            docs[name] = {"toml": f.read_text()}
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="TOML files or folders (searched recursively)")
    ap.add_argument("--json", help="a JSON file {name: toml_text | {toml, entry, args}}; - for stdin")
    ap.add_argument("--entry", default="auto", choices=["auto", *ENTRIES])
    ap.add_argument("--base", type=Path, default=Path.cwd(), help="names are paths relative to this")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of stdout")
    ap.add_argument("--timing", action="store_true", help="print load times to stderr")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    import verifiers.v1  # noqa: F401 - imported once, before the first file is timed

    for entry in ENTRIES:
        config_class(entry)
    t_import = time.perf_counter() - t0

    docs = collect(args.paths, args.base)
    if args.json:
        raw = json.load(sys.stdin if args.json == "-" else open(args.json))
        for name, item in raw.items():
            docs[name] = item if isinstance(item, dict) else {"toml": item}

    verdicts: dict[str, Any] = {}
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="prl-loader-") as tmp:
        for name in sorted(docs):
            item = docs[name]
            t = time.perf_counter()
            entry = item.get("entry") or args.entry
            verdicts[name] = verdict(name, item["toml"], entry, list(item.get("args", [])), Path(tmp))
            times.append(time.perf_counter() - t)
    text = json.dumps(verdicts, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    if args.timing:
        mean = sum(times) / len(times) if times else 0.0
        print(
            f"imports {t_import:.1f}s; {len(times)} documents in {sum(times):.1f}s "
            f"(mean {mean * 1000:.0f} ms, max {max(times, default=0) * 1000:.0f} ms)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
