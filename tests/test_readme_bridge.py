"""The README bridges to a real run: the prime-rl checkout at the pin, the CPU torch index on an
ordinary machine, the article the examples follow, and the project's own research page."""

from __future__ import annotations

import importlib.util
import re

import pytest
from helpers import ROOT

from whileai.targets.prime_rl.pin import COMMIT as PRIME_RL_COMMIT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_says_where_uv_run_rl_runs() -> None:
    assert "git clone https://github.com/PrimeIntellect-ai/prime-rl.git" in README
    assert f"git checkout {PRIME_RL_COMMIT} && uv sync --all-extras" in README
    assert "`uv run rl @ file.toml` runs inside a prime-rl checkout at the pinned commit" in README


TEST_COMMAND = ("pip install torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu && "
                "pip install -e '.[dev,trl,modal,results]' && python -m pytest")


def quick_start() -> list[str]:
    """The quick start's code blocks, in order."""
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", quick, flags=re.S)


def test_the_quick_start_comes_first_and_names_the_cpu_wheel_index() -> None:
    assert re.findall(r"^## (.*)$", README, flags=re.M)[0] == "Quick start"  # the first section
    assert quick_start() == ["pip install . && whileai compile examples/*.toml", TEST_COMMAND]
    assert "[On-Policy Distillation](https://thinkingmachines.ai/blog/on-policy-distillation/)" in README
    assert "[docs/research.md](docs/research.md)" in README and (ROOT / "docs" / "research.md").is_file()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == TEST_COMMAND


def test_ci_makes_verls_python_with_the_documented_commands_before_the_test_command(tmp_path) -> None:
    """CI runs the tests against verl: .ci/run makes verl's own Python (scripts/verl_env.py) and
    exports WHILEAI_VERL_PYTHON before the README's command, with the pip lines that
    `whileai rehearse --setup DIR -t verl` prints, in their order."""
    from whileai.targets.verl.rehearse.env import SETUP

    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()
    made = next(i for i, line in enumerate(ci) if "scripts/verl_env.py" in line and not line.startswith("#"))
    exported = next(i for i, line in enumerate(ci) if line.startswith("export WHILEAI_VERL_PYTHON"))
    assert made < exported < len(ci) - 1 and ci[made].startswith("WHILEAI_VERL_PYTHON=$(")
    spec = importlib.util.spec_from_file_location("verl_env", ROOT / "scripts" / "verl_env.py")
    assert spec and spec.loader
    verl_env = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verl_env)
    pip = str(tmp_path / "bin" / "pip")
    documented = [" ".join(line.split("  #")[0].split()) for line in SETUP.replace("\\\n", " ").splitlines()
                  if line.startswith("pip install")]
    run = [" ".join(c.split()).replace(pip, "pip", 1) for c in verl_env.commands(tmp_path)]
    assert run[1:len(documented) + 1] == documented
    assert run[0].endswith(f"-m venv {tmp_path}") and "typer" in run[-1]  # whileai's own dependencies


def test_the_readme_is_a_short_map() -> None:
    assert len(README.splitlines()) <= 200  # the long reference lives in docs/guide.md
    for command in ("compile", "explain", "check", "inspect", "preflight", "arms", "rehearse", "migrate",
                    "schema"):
        assert f"`whileai {command}" in README, command


def missing_extras() -> list[str]:
    """The distributions of the test command's extras (pyproject.toml) that are not installed."""
    import importlib.metadata

    from packaging.requirements import Requirement

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    extras = re.search(r"\.\[([a-z,]+)\]", TEST_COMMAND).group(1).split(",")  # type: ignore[union-attr]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out = []
    for extra in extras:
        for req in map(Requirement, project["optional-dependencies"][extra]):
            try:
                importlib.metadata.version(req.name)
            except importlib.metadata.PackageNotFoundError:
                out.append(req.name)
    return out


def test_the_readmes_test_count_is_the_suites() -> None:
    """The count is measured (`python scripts/measure_suite.py --count-only`), never typed."""
    spec = importlib.util.spec_from_file_location("measure_suite", ROOT / "scripts" / "measure_suite.py")
    assert spec and spec.loader
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    missing = missing_extras()
    if missing:  # the README counts the suite with every extra its test command installs
        pytest.skip(f"the README's count is with every extra of its test command; not installed: {missing}")
    count, last = measure.collected()
    shown = measure.COUNT.search(README)
    assert shown, "no measured block: run python scripts/measure_suite.py"
    assert int(shown.group(1).replace(",", "")) == count, (
        f"README says {shown.group(1)} tests, pytest collects {count}: "
        "run python scripts/measure_suite.py --count-only")
    real, _ = measure.collected("real_tool")  # those against the real tools, counted apart
    shown_real = measure.REAL.search(README)
    assert shown_real and int(shown_real.group(1).replace(",", "")) == real, (
        f"README: {shown_real and shown_real.group(1)} against the real tools, pytest -m real_tool "
        f"collects {real}: run python scripts/measure_suite.py --count-only")
