"""The reference docs regenerate with no diff, and cover every field, field map and rule."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from whileai.spec.fields import spec_fields
from whileai.spec.run import METHODS, RunSpec
from whileai.targets import registry

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_regenerate_with_no_diff(tmp_path: Path) -> None:
    gen = gen_docs()
    assert gen.main(["--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(gen.PAGES)
    for name in written:
        committed = DOCS / name
        assert committed.exists(), f"{committed} missing: run python scripts/gen_docs.py"
        assert committed.read_text(encoding="utf-8") == (tmp_path / name).read_text(encoding="utf-8"), \
            f"{committed} is stale: run python scripts/gen_docs.py"
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0


def test_methods_page_lists_every_field_with_its_source() -> None:
    text = (DOCS / "methods.md").read_text(encoding="utf-8")
    for name, model in METHODS.items():
        section = text.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
        for field in spec_fields(model):
            assert f"| `{field}` |" in section, f"methods.md: {name} lacks {field}"
    for field in spec_fields(RunSpec):
        if not field.startswith(("method", "then.method.", "sources.method.")) and field != "schema_":
            assert f"| `{field}` |" in text, f"methods.md lacks {field}"
    assert "| `then.method` |" in text  # a stage's method: any method table above
    assert "| `sources.method` |" in text  # a source's method likewise
    assert "Li 2026 (arXiv:2604.13016)" in text  # sources come through from spec.py


def test_field_map_page_accounts_for_every_field() -> None:
    text = (DOCS / "field-maps.md").read_text(encoding="utf-8")
    assert "not exercised" not in text, "a spec field is neither read nor ignored by the sample runs"
    sections = re.split(r"\n## ", text)[1:]
    assert [s.splitlines()[0] for s in sections][:1] == ["prime-rl"]
    for section in sections:
        for field in [*spec_fields(RunSpec), "then.method", "sources.method"]:  # *.method.* as method.*
            if not field.startswith(("method", "then.method.", "sources.method.")) and field != "schema_":
                assert f"| `{field}` |" in section, f"{section.splitlines()[0]}: no row for {field}"


def test_rules_page_lists_every_rule() -> None:
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    for rule in registry.rules():
        assert f"| `{rule.id}` |" in text


def test_concepts_page_is_there_and_cites_its_sources() -> None:
    text = (DOCS / "concepts.md").read_text(encoding="utf-8")
    for method in ("OPD", "OPSD", "GRPO"):
        assert f"## {method}" in text
    assert len(re.findall(r"arXiv:\d{4}\.\d{5}", text)) >= 8


def test_results_page_lists_every_health_rule_and_field() -> None:
    from whileai.results.document import Results
    from whileai.results.health import RULES

    text = (DOCS / "results.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"| `{rule.id}` |" in text
    for field in Results.model_fields:
        assert f"| `{field}` |" in text


def test_readme_and_docs_show_the_taskset_example_as_compiled() -> None:
    """The non-reverse-text example end to end (spec, report, TOML) in docs/guide.md and
    docs/tasksets.md is exactly the example file and its golden report and TOML."""
    spec = (ROOT / "examples" / "tasksets" / "gsm8k-opd.toml").read_text(encoding="utf-8")
    golden = ROOT / "tests" / "golden" / "prime-rl" / "tasksets"
    report = (golden / "gsm8k-opd.report.txt").read_text(encoding="utf-8")
    toml = (golden / "gsm8k-opd.toml").read_text(encoding="utf-8")
    for page in (DOCS / "guide.md", DOCS / "tasksets.md"):
        text = page.read_text(encoding="utf-8")
        assert f"```toml\n{spec}```" in text, page.name
        assert f"```text\n{report}```" in text, page.name
        assert f"```toml\n{toml}```" in text, page.name


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_the_pages_resolves() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and where.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", where.read_text(encoding="utf-8"), flags=re.M)
                if anchor not in {_slug(h) for h in heads}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
