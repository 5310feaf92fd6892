"""The prime-rl commit every prime-rl file whileai writes is for (the catalogues, the loader mirror,
the Modal image and the report all name this one)."""

COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
VERSION = "0.8.0"  # packages/prime-rl-configs' project version at COMMIT is 0.4.0; prime-rl's is 0.8.0
TARGET = f"prime-rl {COMMIT[:7]} ({VERSION})"
# The day verifiers' harness scripts resolve their dependencies as of (UV_EXCLUDE_NEWER): the pinned
# commit's day (2026-08-21, -07:00). verifiers a60a606 runs each harness as a PEP 723 uv script
# (v1/runtimes/base.py:237-290, `uv sync --script ... --no-config`) whose dependencies are unpinned
# (harnesses/null/program.py: openai, httpx), so without it uv resolves the newest releases on the
# day of the run: on 2026-12-05 openai 3.63 (built on httpx2) failed every rollout at the pin.
HARNESS_DAY = "2026-08-22T00:00:00Z"
