"""The repository's own copy of the prime-rl reference (tests/fixtures/reference) holds what the
reference tests read, and matches ../shared/reference wherever that is beside the checkout."""

from __future__ import annotations

import pytest
from helpers import FIXTURE_REFERENCE, SHARED_REFERENCE


def test_the_fixture_holds_what_the_tests_read() -> None:
    pr = FIXTURE_REFERENCE / "prime-rl"
    assert len(sorted((pr / "configs").glob("*.toml"))) >= 12
    assert (pr / "model-renderers.json").is_file() and (pr / "schema" / "rl.schema.json").is_file()


def test_the_fixture_matches_the_shared_reference() -> None:
    if not SHARED_REFERENCE.is_dir():
        pytest.skip("no ../shared/reference beside this checkout to compare with (the fixture is used)")
    for f in sorted((FIXTURE_REFERENCE / "prime-rl").rglob("*")):
        if f.is_file():
            rel = f.relative_to(FIXTURE_REFERENCE)
            assert f.read_bytes() == (SHARED_REFERENCE / rel).read_bytes(), rel
