"""The process that wraps a local run: `python -m whileai.launch.runner wrap|call ...`.

`wrap <run_dir> -- argv...` runs argv in run_dir with `WHILEAI_METRICS` pointing at
`<run_dir>/metrics.run.json`; when the child exits it writes `<run_dir>/metrics.json` (the
child's metrics plus returncode and seconds; only if the child wrote some) and then
`<run_dir>/exit_code`. The child's pid goes to `<run_dir>/pid` for people (state never reads it).

`call <module:function> <json kwargs>` calls a Python function and writes the dict it returns
to `$WHILEAI_METRICS`; an exception becomes an error record (status "error") and exit code 1.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

from whileai.files.atomic import atomic_write as atomic_write_text
from whileai.targets.run import Metrics, describe_returncode, error_record, tail, write_metrics

CHILD_METRICS = "metrics.run.json"
METRICS = "metrics.json"
EXIT_CODE = "exit_code"
LOG = "run.log"
PID = "pid"


def wrap(run_dir: Path, argv: list[str]) -> int:
    env = dict(os.environ, WHILEAI_METRICS=str(run_dir / CHILD_METRICS),
               WHILEAI_RUN_DIR=str(run_dir))
    start = time.monotonic()
    with open(run_dir / LOG, "ab") as log:
        try:
            child = subprocess.Popen(argv, cwd=run_dir, env=env, stdout=log,
                                     stderr=subprocess.STDOUT)
        except OSError as e:
            log.write(f"whileai runner: cannot start {argv!r}: {e}\n".encode())
            code = 127
        else:
            atomic_write_text(run_dir / PID, f"{child.pid}\n")
            code = child.wait()
    seconds = round(time.monotonic() - start, 3)
    child_metrics = run_dir / CHILD_METRICS
    if child_metrics.exists():
        try:
            m = Metrics.model_validate_json(child_metrics.read_text(encoding="utf-8"))
        except ValueError as e:
            m = Metrics(status="error", error=f"unreadable metrics file: {e}".splitlines()[0])
        upd: dict[str, object] = {"returncode": code}
        if m.seconds is None:
            upd["seconds"] = seconds
        if m.image is None:
            upd["image"] = f"local: python {platform.python_version()} ({platform.machine()})"
        if code != 0 and m.status == "ok":
            upd |= {"status": "error", "error": describe_returncode(code)}
        if m.status == "error" or code != 0:
            upd["log_tail"] = m.log_tail or tail(run_dir / LOG)
        write_metrics(run_dir / METRICS, m.model_copy(update=upd))
    atomic_write_text(run_dir / EXIT_CODE, f"{code}\n")
    return code


def call(target: str, kwargs_json: str) -> int:
    out = os.environ.get("WHILEAI_METRICS", CHILD_METRICS)
    try:
        module, _, fn = target.partition(":")
        result = getattr(importlib.import_module(module), fn)(**json.loads(kwargs_json))
        write_metrics(out, result)
        return 0
    except Exception as e:  # the wrapped run reports, never raises
        traceback.print_exc()
        write_metrics(out, error_record(f"{type(e).__name__}: {e}"))
        return 1


def call_argv(target: str, **kwargs: object) -> list[str]:
    """argv that runs `module:function(**kwargs)` in a subprocess (for LocalExecutor arms)."""
    return [sys.executable, "-m", "whileai.launch.runner", "call", target, json.dumps(kwargs)]


def main(args: list[str]) -> int:
    if len(args) >= 3 and args[0] == "wrap" and args[2] == "--":
        return wrap(Path(args[1]), args[3:])
    if len(args) == 3 and args[0] == "call":
        return call(args[1], args[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
