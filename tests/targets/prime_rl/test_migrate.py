"""`whileai migrate` on prime-rl's own history (tests/fixtures/prime-rl/migrate-history.json:
every rl config of configs/ and examples/ at v0.6.0, v0.7.0 and v0.8.0 that still exists at
the pin, followed through renames; scripts/gen_migrate_fixture.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import tomllib
from helpers import ROOT

from whileai.targets.prime_rl.check import check_document
from whileai.targets.prime_rl.migrate.core import migrate
from whileai.targets.prime_rl.migrate.hint import old_release_hint

FIXTURE = ROOT / "tests" / "fixtures" / "prime-rl" / "migrate-history.json"
PAIRS = json.loads(FIXTURE.read_text())
ACCEPTED_BY_LOADER = 92  # of 131: all 92 whose pin version the loader accepts (the other 39 name
# prime-envs tasksets the loader environment lacks): 32/32 v0.8.0, 31/31 v0.7.0, 29/29 v0.6.0
# the pin's own edits of a value the old file had (smaller debug deployments, context
# parallelism 8 -> 4, a smaller group): migrate keeps the user's value, as it should
PIN_EDITED = {("v0.7.0", "configs/debug/concurrency.toml"), ("v0.8.0", "configs/debug/concurrency.toml"),
              ("v0.7.0", "examples/advanced/glm-4.5-air/search.toml"),
              ("v0.7.0", "examples/advanced/glm-4.5-air/swe.toml"),
              ("v0.8.0", "examples/advanced/glm-4.5-air/swe.toml"),
              ("v0.7.0", "examples/advanced/glm-4.5-air/terminal.toml")}


def digest(text: str) -> str:
    """The migrated document's digest, as scripts/gen_migrate_fixture.py records it with each
    loader verdict: of the parsed content, so layout alone never makes a verdict stale."""
    import hashlib

    doc = json.dumps(tomllib.loads(text), sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


def flat(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from flat(v, (*path, k))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            yield from flat(v, (*path, i))
    else:
        yield path, node


def test_fixture_covers_three_releases_and_follows_renames() -> None:
    tags = {p["tag"] for p in PAIRS}
    assert tags == {"v0.6.0", "v0.7.0", "v0.8.0"}
    renamed = [p for p in PAIRS if p["old_path"] != p["pin_path"]]
    assert any(p["old_path"] == "configs/ci/integration/reverse_text/start.toml" for p in renamed)


def test_every_old_file_is_refused_at_the_pin_and_check_names_the_release() -> None:
    olds = [p for p in PAIRS if p["tag"] == "v0.7.0"]
    refused = [p for p in olds if check_document(tomllib.loads(p["old_toml"]))]
    assert len(refused) == len(olds)
    hinted = [p for p in olds if old_release_hint(tomllib.loads(p["old_toml"])) is not None]
    assert len(hinted) >= len(olds) * 0.9
    assert "v0.7.0" in (old_release_hint(tomllib.loads(olds[0]["old_toml"])) or "")
    assert "v0.6.0 or v0.7.0" in (old_release_hint(tomllib.loads(olds[0]["old_toml"])) or "")


def test_reverse_text_v07_migrates_to_the_pins_own_file() -> None:
    pair = next(p for p in PAIRS if p["tag"] == "v0.7.0"
                and p["pin_path"] == "configs/ci/integration/reverse-text/start.toml")
    m = migrate(pair["old_toml"])
    # v0.6.0 knows every key of it too: the oldest is migrated from, both are named
    assert (m.release, m.also) == ("v0.6.0", ("v0.7.0",)) and m.detected
    new, pin = tomllib.loads(m.text), tomllib.loads(pair["pin_toml"])
    assert new["orchestrator"]["train"]["source"] == pin["orchestrator"]["train"]["source"]
    assert check_document(new) == []
    assert "# TEMP: NCCL weight broadcast" in m.text  # comments of surviving keys survive
    kinds = {c.kind for c in m.changes}
    assert {"converted", "defaulted"} <= kinds


def test_migrated_files_keep_every_value_the_pin_kept_and_most_pass_the_pin() -> None:
    ok, kept_wrong = 0, []
    for p in PAIRS:
        m = migrate(p["old_toml"])
        new = dict(flat(tomllib.loads(m.text)))
        pin = dict(flat(tomllib.loads(p["pin_toml"])))
        old = dict(flat(tomllib.loads(p["old_toml"])))
        old_values = {repr(v) for v in old.values()}
        # a value the pin kept from the old file, at a path the migrated file also has
        wrong = [k for k, v in pin.items()
                 if k in new and repr(v) in old_values and new[k] != v and repr(new[k]) in old_values]
        kept_wrong += [(p["tag"], p["pin_path"], wrong[0])] if wrong else []
        ok += not check_document(tomllib.loads(m.text))
    assert {(tag, path) for tag, path, _ in kept_wrong} == PIN_EDITED, kept_wrong
    assert ok >= 120  # of 131 pass the pin's schema and rules (122 measured); the rest: docs/migrate.md


def test_migrating_all_fixture_files_in_one_call_writes_each_and_says_how_long(tmp_path: Path) -> None:
    """One call over the whole history (its speed, under 2 s, is benchmarks/bench_migrate.py's)."""
    for i, p in enumerate(PAIRS):
        (tmp_path / f"{i:03d}.toml").write_text(p["old_toml"])
    files = sorted(map(str, tmp_path.glob("*.toml")))
    done = subprocess.run([sys.executable, "-m", "whileai", "migrate", *files, "-o", str(tmp_path / "new"),
                           "--allow-drops", "--force"], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "new").glob("*.toml"))) == len(PAIRS)
    said = " ".join(done.stdout.split())  # wrapped or not
    assert f"wrote {len(PAIRS)} file(s)" in said, said
    said = said.rsplit(" in ", 1)[1].split()
    assert float(said[0]) > 0 and said[1].startswith("s"), said


def test_decision_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    src = tmp_path / "old.toml"
    src.write_text('[trainer]\n[orchestrator]\ntraining_mode = "rl"\n[orchestrator.advantage]\n')
    done = subprocess.run([sys.executable, "-m", "whileai", "migrate", str(src), "--from", "v0.6",
                           "-o", str(tmp_path / "new.toml")], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "error: " in done.stderr and "needs a decision" in done.stderr
    assert not (tmp_path / "new.toml").exists()
    done = subprocess.run([sys.executable, "-m", "whileai", "migrate", str(src), "--from", "v0.6",
                           "-o", str(tmp_path / "new.toml"), "--allow-drops"], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and (tmp_path / "new.toml").exists()  # written without the key
    assert "error" not in done.stderr and "needs a decision" in done.stderr
    assert "(written undecided)" in done.stderr


def test_check_on_an_old_file_names_the_release_and_suggests_migrate(tmp_path: Path) -> None:
    pair = next(p for p in PAIRS if p["tag"] == "v0.7.0"
                and p["pin_path"] == "configs/ci/integration/reverse-text/start.toml")
    old = tmp_path / "start.toml"
    old.write_text(pair["old_toml"])
    done = subprocess.run([sys.executable, "-m", "whileai", "check", str(old)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "looks written for prime-rl v0.6.0 or v0.7.0 (the pin is 559b447)" in done.stderr
    # each old key's line says what became of it
    assert "orchestrator.train.env: unknown key: renamed to [[orchestrator.train.source]]; " \
        "orchestrator.train.env[0].id: converted to " in done.stderr
    assert f"run `whileai migrate {old}`" in done.stderr


def test_migrated_files_the_loader_accepted_are_still_what_migrate_writes() -> None:
    """The loader's verdicts on the migrated files (scripts/gen_migrate_fixture.py --verdicts)
    hold for today's output: each verdict names the sha of the text it judged."""
    verdicts = json.loads((FIXTURE.parent / "migrate-verdicts.json").read_text())
    assert len(verdicts) == len(PAIRS)
    stale = []
    for p in PAIRS:
        text = migrate(p["old_toml"]).text
        v = verdicts[f"{p['tag']}:{p['pin_path']}"]
        if digest(text) != v["migrated_doc_sha"]:
            stale.append(p["pin_path"])
    assert stale == []
    accepted = sum(v["accepted"] for v in verdicts.values())
    assert accepted >= ACCEPTED_BY_LOADER


def test_old_tables_reshape_to_the_pins_clients_roles_and_spellings() -> None:
    """v0.6.0's sft teacher is the model sft samples from; preserve_all_thinking became
    thinking_retention; a v0.7.0 env's harness and runtime are its role's tables; a VLM
    trained with impl 'auto' gets 'custom'; a taskset argument the pin dropped is dropped."""
    v06 = migrate('[model]\nname = "m"\n[model.vlm]\nvision_encoder_attr = "v"\n[trainer]\n'
                  '[orchestrator]\ntraining_mode = "sft"\n[orchestrator.teacher.model]\nname = "t"\n'
                  '[orchestrator.teacher.client]\nbase_url = ["http://h:8001/v1"]\n', release="v0.6.0")
    doc = tomllib.loads(v06.text)
    assert doc["orchestrator"]["algo"] == {"type": "sft", "sampling": {"source": {
        "name": "t", "base_url": "http://h:8001/v1"}}}
    assert doc["orchestrator"]["renderer"] == {"name": "default"}
    assert doc["trainer"]["model"]["impl"] == "custom"
    v07 = migrate('[orchestrator.renderer]\nname = "qwen3"\npreserve_all_thinking = true\n'
                  '[[orchestrator.train.env]]\nname = "w"\ntaskset = { id = "wordle-v1", num_examples = 5 }\n'
                  'harness = { id = "null", runtime = { type = "subprocess" } }\n', release="v0.7.0")
    doc = tomllib.loads(v07.text)
    assert doc["orchestrator"]["renderer"] == {"name": "qwen3", "thinking_retention": "all"}
    assert doc["orchestrator"]["train"]["source"][0]["env"] == {
        "taskset": {"id": "wordle"}, "player": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}}
    assert any(c.kind == "dropped" and c.old.endswith("taskset.num_examples") for c in v07.changes)
