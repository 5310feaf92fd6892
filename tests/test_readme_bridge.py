"""The README bridges to a real run: the prime-rl checkout at the pin, the CPU torch index on an
ordinary machine, the article the examples follow, and the project's own research page."""

from __future__ import annotations

from helpers import ROOT

from whileai.targets.prime_rl.pin import COMMIT as PRIME_RL_COMMIT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_says_where_uv_run_rl_runs() -> None:
    assert "git clone https://github.com/PrimeIntellect-ai/prime-rl.git" in README
    assert f"git checkout {PRIME_RL_COMMIT} && uv sync --all-extras" in README
    assert "`uv run rl @ file.toml` runs inside a prime-rl checkout at the pinned commit" in README


def test_readme_names_the_cpu_wheel_index_and_the_article() -> None:
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in README
    assert "[On-Policy Distillation](https://thinkingmachines.ai/blog/on-policy-distillation/)" in README
    assert "[docs/research.md](docs/research.md)" in README and (ROOT / "docs" / "research.md").is_file()
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]  # the two commands stay as they were
    assert "pip install . && whileai compile examples/*.toml" in quick
    assert ("pip install torch==2.13.0 && pip install -e '.[dev,trl,modal,results]' && "
            "python -m pytest") in quick
