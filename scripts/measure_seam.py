"""How well the targets keep to their seam, measured from the code (what docs/layout.md promises;
tests/test_layers.py holds the numbers that must be zero).

    python scripts/measure_seam.py     # from anywhere: it reads this checkout

Prints: imports of a target's package from outside whileai/targets/ (the recipes included),
class names defined more than once in whileai/, the file names every target package has, the
modules of launch/, and import circles (imports under TYPE_CHECKING included; needs grimp, from
the [dev] extra).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "whileai"
sys.path.insert(0, str(ROOT))

from whileai.targets.registry import TARGETS  # noqa: E402

PACKAGES = {module.rsplit(".", 1)[0] for module in TARGETS.values()}  # whileai.targets.prime_rl, ...


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a file, `from a import b` as a.b too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def outside_imports() -> list[str]:
    """`file:line module` for each import of a target's package from outside whileai/targets/."""
    found = []
    for path in sorted([*PKG.rglob("*.py"), *(ROOT / "recipes").rglob("*.py")]):
        rel = path.relative_to(ROOT)
        if rel.parts[:2] == ("whileai", "targets"):
            continue
        lines = {line for line, mod in imported(path)
                 if any(mod == p or mod.startswith(p + ".") for p in PACKAGES)}
        found += [f"{rel}:{line}" for line in sorted(lines)]
    return found


def repeated_classes() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(ROOT)))
    return {name: files for name, files in where.items() if len(files) > 1}


def shared_file_names() -> tuple[list[str], int]:
    """The names every target package has (files and sub-packages), and how many names there are."""
    folders = [ROOT / Path(*p.split(".")) for p in sorted(PACKAGES)]
    names = [{p.name for p in d.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
             for d in folders]
    return sorted(set.intersection(*names)), len(set.union(*names))


def circles() -> list[list[str]] | None:
    try:
        import grimp
    except ImportError:
        return None
    sys.path.insert(0, str(ROOT / "tests"))
    from test_layers import circles as tarjan

    graph = grimp.build_graph("whileai", exclude_type_checking_imports=False, cache_dir=None)
    mods = {m for m in graph.modules if m.startswith("whileai")}
    edges = {m: {d for d in graph.find_modules_directly_imported_by(m)
                 if d in mods and not m.startswith(d + ".")} for m in mods}
    return tarjan(edges)


def main() -> None:
    found = outside_imports()
    print(f"imports of a target's package from outside whileai/targets/: {len(found)}")
    print("".join(f"    {f}\n" for f in found), end="")
    recipes = sorted({f.split(":")[0] for f in found if f.startswith("recipes/")})
    print(f"recipe files importing a target's package: {len(recipes)}")
    repeated = repeated_classes()
    print(f"class names defined more than once in whileai/: {len(repeated)}")
    print("".join(f"    {k}: {', '.join(v)}\n" for k, v in sorted(repeated.items())), end="")
    common, total = shared_file_names()
    print(f"file names every target package has: {len(common)} of {total}: {', '.join(common)}")
    launch = sorted(p.stem for p in (PKG / "launch").glob("*.py") if p.stem != "__init__")
    print(f"launch/ modules: {len(launch)}: {', '.join(launch)}")
    found_circles = circles()
    if found_circles is None:
        print("import circles: not measured (grimp is in the [dev] extra)")
    else:
        print(f"import circles (TYPE_CHECKING imports included): {len(found_circles)}")
        print("".join(f"    {' <-> '.join(c)}\n" for c in found_circles), end="")


if __name__ == "__main__":
    main()
