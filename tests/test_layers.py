"""The house's plan, held by the suite: the import-linter layers in pyproject.toml, and no import
circle among whileai's modules (imports under TYPE_CHECKING included)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
grimp = pytest.importorskip("grimp", reason="import-linter (the [dev] extra) builds the import graph")


_LINT = ("import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's own entry (the one `lint-imports` runs) on the package under `root`, in a
    process whose path starts at `root`, so a copy of the package is linted instead of this one."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", _LINT, str(root / "pyproject.toml")], cwd=root,
                          capture_output=True, text=True, env=env)


def test_layers_contract_is_kept() -> None:
    """An arrow that runs back up fails here with the modules and the line that import it."""
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout[r.stdout.find("Broken contracts"):] or r.stdout + r.stderr
    assert "Contracts:" in r.stdout and " 0 broken" in r.stdout, r.stdout + r.stderr


def test_a_planted_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The test above can fail: a copy of the package whose spec imports the CLI (an arrow from
    the bottom of the house to its top, forming no circle) is refused by the same call."""
    shutil.copytree(ROOT / "whileai", tmp_path / "whileai",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    assert lint(tmp_path).returncode == 0
    planted = tmp_path / "whileai" / "spec" / "planted.py"
    planted.write_text("import whileai.cli.fail  # noqa: F401\n", encoding="utf-8")
    r = lint(tmp_path)
    assert r.returncode != 0, r.stdout
    assert "BROKEN" in r.stdout and "whileai.spec.planted -> whileai.cli.fail" in r.stdout, r.stdout


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter
                counter += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(edges.get(nxt, ())))))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
    return out


def test_circles_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    # imports under TYPE_CHECKING count too (a circle of types is a circle a reader walks), and the
    # graph is built afresh: grimp's cache can hold the imports of files since changed
    graph = grimp.build_graph("whileai", exclude_type_checking_imports=False, cache_dir=None)
    modules = {m for m in graph.modules if m.startswith("whileai")}
    edges = {m: {d for d in graph.find_modules_directly_imported_by(m) if d in modules} for m in modules}
    # a package's __init__ importing its own submodule is how packages work, not a circle
    for m, deps in edges.items():
        deps -= {d for d in deps if m.startswith(d + ".")}
    assert circles(edges) == []


def test_root_holds_few_modules_and_no_name_families() -> None:
    """At most 8 modules loose at whileai/'s root; no 3+ sibling files sharing a name prefix."""
    pkg = ROOT / "whileai"
    loose = sorted(p.name for p in pkg.glob("*.py"))
    assert len(loose) <= 8, loose
    for folder in [pkg, *[d for d in pkg.rglob("*") if d.is_dir() and (d / "__init__.py").exists()]]:
        stems = [p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")]
        prefixes: dict[str, list[str]] = {}
        for s in stems:
            if "_" in s:
                prefixes.setdefault(s.split("_")[0], []).append(s)
        assert all(len(v) < 3 for v in prefixes.values()), (folder, prefixes)


def test_layout_doc_names_every_package() -> None:
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    pkg = ROOT / "whileai"
    for d in sorted(p for p in pkg.iterdir() if (p / "__init__.py").exists()):
        assert f"whileai/{d.name}/" in text, d.name


def _name_switches(source: str, names: set[str]) -> list[int]:
    """Lines comparing a value with a target's name: `x == "trl"`, `x in ("prime-rl", ...)`,
    `x.startswith("prime-rl")`."""
    import ast

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(named(x) for x in (node.left, *node.comparators)):
            found.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and any(named(a) for a in node.args)):
            found.append(node.lineno)
    return found


def test_no_face_switches_on_a_target_name() -> None:
    """Outside whileai/targets/ a target is asked through the registry, never compared by name
    (adding a target is one package and one registry line: docs/layout.md)."""
    from whileai.targets.registry import TARGETS

    assert _name_switches('if b == "trl" or b in ("prime-rl",) or b.startswith("trl"): pass',
                          set(TARGETS)) == [1, 1, 1]
    pkg = ROOT / "whileai"
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(pkg.rglob("*.py"))
             if "targets" not in p.relative_to(pkg).parts[:1]
             for line in _name_switches(p.read_text(encoding="utf-8"), set(TARGETS))]
    assert found == [], found


def _absolute_imports(path: Path) -> set[str]:
    import ast

    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_only_the_targets_import_a_target_package() -> None:
    """Faces, run work and the recipes ask a target through the registry (`registry.get(name)`
    and its hooks), never by importing its package (docs/layout.md; scripts/measure_seam.py)."""
    from whileai.targets.registry import TARGETS

    packages = {m.rsplit(".", 1)[0] for m in TARGETS.values()}
    assert _absolute_imports(ROOT / "tests" / "test_layers.py") >= {"pathlib.Path", "pytest"}  # it reads
    found = [str(p.relative_to(ROOT)) for p in sorted([*(ROOT / "whileai").rglob("*.py"),
                                                        *(ROOT / "recipes").rglob("*.py")])
             if p.relative_to(ROOT).parts[:2] != ("whileai", "targets")
             and any(m == pkg or m.startswith(pkg + ".") for m in _absolute_imports(p) for pkg in packages)]
    assert found == [], found


def test_no_two_classes_share_a_name() -> None:
    import ast
    from collections import Counter

    names = Counter(node.name for p in (ROOT / "whileai").rglob("*.py")
                    for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                    if isinstance(node, ast.ClassDef))
    assert [n for n, k in names.items() if k > 1] == []
