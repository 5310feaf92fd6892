"""The project's own research page: every citation of it names a rule or section it has, the
rule ids it names exist, and no text cites a research.md the repository does not have."""

from __future__ import annotations

import re

from helpers import ROOT

from whileai.targets import registry

PAGE = ROOT / "docs" / "research.md"
TEXTS = [*sorted((ROOT / "whileai").rglob("*.py")), *sorted((ROOT / "docs").glob("*.md")),
         ROOT / "README.md", *sorted((ROOT / "schemas").glob("spec.schema.json"))]


def test_every_citation_names_docs_research_md_and_a_rule_it_has() -> None:
    page = PAGE.read_text(encoding="utf-8")
    rules = set(re.findall(r"^- \*\*(R\d+)\*\*", page, flags=re.M))
    assert rules == {f"R{n}" for n in range(1, 18)}
    cited: set[str] = set()
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"research(\.md)? rule \d", text), f"{path}: cites a file the repo lacks"
        if path == PAGE:
            continue
        for m in re.finditer(r"research\.md", text):
            before = text[max(0, m.start() - 5):m.start()]
            assert before == "docs/" or before.endswith("("), (path, text[m.start() - 20:m.end()])
        cited |= set(re.findall(r"docs/research\.md\)?,? (R\d+|defaults)", text))
    assert {c for c in cited if c.startswith("R")} <= rules and "R17" in cited and "defaults" in cited
    assert "## Defaults" in page and "student temperature" in page and "OPSD 5e-6" in page


def test_the_rule_ids_the_page_names_exist() -> None:
    named = set(re.findall(r"\[`([a-z0-9-]+)`", PAGE.read_text(encoding="utf-8")))
    assert named and named <= {r.id for r in registry.rules()}


def test_methods_page_gives_top_k_its_real_type() -> None:
    row = next(x for x in (ROOT / "docs" / "methods.md").read_text().splitlines()
               if x.startswith("| `top_k` |"))
    assert row.split(" | ")[1] == 'integer ≥ 1, ≤ 1048576 or `"full"`'
