"""One paired-arms recipe over the registry: each recipes/04-train/<target>/run.py is a usage
docstring and `main("<target>", __doc__)`; what every target shares (launch/, the recipe's face,
results/) imports no target's package, only the registry and targets/run.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from whileai.results import versions
from whileai.targets import registry

ROOT = Path(__file__).resolve().parents[2]
TARGET_PACKAGES = ("whileai.targets.prime_rl", "whileai.targets.trl", "whileai.targets.verl")


def imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


@pytest.mark.parametrize("target", ["prime-rl", "trl", "verl"])
def test_each_recipe_is_a_docstring_and_one_call(target: str) -> None:
    path = ROOT / "recipes" / "04-train" / target / "run.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree) and f"recipes/04-train/{target}/run.py" in ast.get_docstring(tree)
    assert [m for m in imports(path) if m.startswith("whileai")] == ["whileai.cli.recipe",
                                                                     "whileai.cli.recipe.main"]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "main"]
    assert len(calls) == 1 and isinstance(calls[0].args[0], ast.Constant)
    assert calls[0].args[0].value == target and registry.get(target).launcher is not None


def test_shared_run_code_imports_no_target_package() -> None:
    shared = [*(ROOT / "whileai" / "launch").glob("*.py"), ROOT / "whileai" / "cli" / "recipe.py",
              *(ROOT / "whileai" / "results").glob("*.py"), *(ROOT / "recipes").rglob("*.py")]
    found = {f"{p.relative_to(ROOT)}: {m}" for p in shared for m in imports(p)
             if m.startswith(TARGET_PACKAGES)}
    assert found == set()


def test_results_name_each_targets_pinned_revision() -> None:
    v = versions()  # an installed library of a target's name (trl) reports its own version
    assert {n for n in registry.names() if registry.get(n).launcher is not None} <= set(v)
    assert v["prime-rl"].startswith("559b4477") and v["verl"] == "0.9.1"


def test_trl_reads_back_the_record_its_scoring_wrote(tmp_path: Path) -> None:
    from whileai.targets.run import write_metrics

    write_metrics(tmp_path / "metrics.json", {"series": {"eval_reward": [[4, 0.5]]}, "per_task": {"t": 0.5}})
    m = registry.get("trl").launcher.read_metrics(tmp_path)  # type: ignore[union-attr]
    assert m.series == {"eval_reward": [(4, 0.5)]} and m.per_task == {"t": 0.5}
