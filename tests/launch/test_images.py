"""The Modal images as modal 1.6.4 records them, built offline (never hydrated): every layer's
Dockerfile commands, read the way modal's own loader reads them (`_Image._from_args` keeps a
`dockerfile_function(builder_version)` per layer, modal/_image.py:694-760), checked against the
real things they meet: prime-rl's files at the pin (tests/fixtures/prime-rl/image-facts.json, from
scripts/gen_prime_rl_image_facts.py) and verl 0.9.1's package metadata."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

modal = pytest.importorskip("modal")

from whileai.api import compile as compile_spec  # noqa: E402
from whileai.spec.load import load_spec  # noqa: E402
from whileai.targets.prime_rl import launch as prl  # noqa: E402
from whileai.targets.prime_rl.image import ATTN_ENV, GPU_SM, PACKAGES_ENV  # noqa: E402
from whileai.targets.prime_rl.pin import COMMIT  # noqa: E402
from whileai.targets.verl import launch as vl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FACTS = json.loads((ROOT / "tests" / "fixtures" / "prime-rl" / "image-facts.json").read_text())
BUILDER = "2025.06"  # a builder version modal 1.6.4 supports (modal/_image.py:75-86)
# the distribution each attention implementation's availability check asks for: FA2 `import
# flash_attn` (trainer/models/layers/attn.py:12-13), FA3 transformers' is_flash_attn_3_available
# (the distribution flash-attn-3, transformers/utils/import_utils.py:1344-1350), FA4
# flash_attn.cute (model.py:1281), which the pin's extras install as flash-attn-4
PROVIDES = {"flash_attention_2": "flash-attn", "flash_attention_3": "flash-attn-3",
            "flash_attention_4": "flash-attn-4"}


def layers(img: Any) -> list[list[str]]:
    """Each layer's Dockerfile commands, base first (modal/_image.py: `_from_args`'s
    dockerfile_function, a mount layer's base_image, from_registry's split_image)."""
    from modal._utils.async_utils import synchronizer

    load = synchronizer._translate_in(img)._load
    cells = dict(zip(load.__code__.co_freevars, (c.cell_contents for c in load.__closure__ or ()),
                     strict=True))
    if "base_image" in cells:  # add_local_python_source: a mount, no commands
        return layers(cells["base_image"])
    if "split_image" in cells:  # from_registry(add_python=...): one image per builder version
        return layers(cells["split_image" if BUILDER > "2025.06" else "single_layer_image"])
    out = [c for b in (cells.get("base_images") or {}).values() for c in layers(b)]
    fn = cells.get("dockerfile_function")
    return out + ([fn(BUILDER).commands] if fn is not None else [])


def runs(img: Any) -> list[str]:
    return [c.removeprefix("RUN ") for layer in layers(img) for c in layer if c.startswith("RUN ")]


def envs(img: Any) -> dict[str, str]:
    import shlex

    out = {}
    for c in (c for layer in layers(img) for c in layer if c.startswith("ENV ")):
        k, _, v = c.removeprefix("ENV ").partition("=")
        out[k] = shlex.split(v)[0] if v else ""
    return out


def sync_of(img: Any) -> list[str]:
    [line] = [r for r in runs(img) if "uv sync" in r]
    return line.split("uv sync", 1)[1].split()


def flags(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def auto_attn_at_pin(sm: tuple[int, int]) -> str:
    """prime-rl's own `resolve_auto_attn` (its source at the pin, from the fixture) run on a
    stand-in device of this capability."""
    ns: dict[str, Any] = {
        "torch": type("T", (), {"cuda": type("C", (), {"get_device_capability": staticmethod(lambda: sm)})}),
        "get_logger": lambda: type("L", (), {"info": staticmethod(lambda *a: None)}),
        "ModelConfig": object,
    }
    exec(FACTS["resolve_auto_attn"]["source"], ns)
    config = type("Cfg", (), {"attn": "auto"})()
    ns["resolve_auto_attn"](config)
    return str(config.attn)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for k in (PACKAGES_ENV, ATTN_ENV, "WHILEAI_VERL_IMAGE", "WHILEAI_IMAGE_LABEL"):
        monkeypatch.delenv(k, raising=False)
    yield monkeypatch


def test_fixture_is_the_pin() -> None:
    assert FACTS["commit"] == COMMIT


def test_prime_rl_image_fetches_every_submodule_its_sources_need_over_https(clean_env: Any) -> None:
    """The sources' paths and the workspace members the lock lists live in submodules; each is
    initialised, and its URL, after the image's git rewrite, is HTTPS (no key in a build)."""
    img, _ = prl.image(["H100:2"])
    steps = runs(img)
    mods = FACTS["gitmodules"]
    paths = [*FACTS["uv_source_paths"].values(), *FACTS["lock_workspace_members"].values()]
    needed = {m for m in mods if any(p == m or p.startswith(m + "/") for p in paths)}
    assert {"deps/verifiers", "deps/renderers", "deps/pydantic-config", "deps/prime-envs"} <= needed
    clone = next(i for i, s in enumerate(steps) if s.startswith("git clone "))
    assert f"checkout {COMMIT}" in steps[clone]
    [sub] = [i for i, s in enumerate(steps) if "submodule update --init" in s]
    assert sub > clone and needed <= set(steps[sub].split(" -- ", 1)[1].split())
    rewrites = [re.search(r'url\."([^"]+)"\.insteadOf (\S+)', s) for s in steps[:sub]]
    rules = [(m.group(2), m.group(1)) for m in rewrites if m]
    for path in sorted(needed):
        url = mods[path]
        for old, new in rules:
            url = new + url[len(old):] if url.startswith(old) else url
        assert url.startswith("https://"), (path, mods[path], url)
    assert any(mods[p].startswith("git@") for p in needed)  # the rewrite is needed at the pin


@pytest.mark.parametrize("gpus", [["H100:2"], ["H200:2"], ["A100-80GB:2"], ["B200:2"],
                                  ["H100:2", "H200:2", "A100-80GB:2"]])
def test_prime_rl_sync_is_locked_with_the_attention_the_gpus_pick(gpus: list[str], clean_env: Any) -> None:
    """`attn = "auto"` as prime-rl resolves it on each GPU type (its own function at the pin):
    the extra that installs that implementation is synced, locked."""
    img, label = prl.image(gpus)
    args = sync_of(img)
    assert "--locked" in args or "--frozen" in args
    extras = FACTS["optional_dependencies"]
    want = set()
    for g in gpus:
        attn = auto_attn_at_pin(GPU_SM[g.split(":")[0]])
        [extra] = [e for e, dists in extras.items() if dists == [PROVIDES[attn]]]
        want.add(extra)
    assert set(flags(args, "--extra")) == want
    assert all(e in label for e in want)


def test_fa3_is_what_the_trainer_raises_without() -> None:
    """The premise, at the pin: FA3 picked (SM90) and flash_attn_3 missing raises."""
    assert auto_attn_at_pin((9, 0)) == "flash_attention_3"
    assert "raise ValueError" in FACTS["fa3_check"]["source"]
    assert FACTS["fa3_check"]["line"] == 1321


def test_prime_rl_sync_installs_the_arms_taskset_packages(clean_env: Any) -> None:
    """The recipe's arms (reverse-text) name their workspace member; the image syncs it with
    prime-rl, and every package it names is a workspace member of the pin's lock."""
    c = compile_spec(load_spec(ROOT / "examples" / "grpo.toml"), "prime-rl")
    env = prl.deploy_env({"grpo": c})
    assert env[PACKAGES_ENV] == "reverse-text"
    for k, v in env.items():
        clean_env.setenv(k, v)
    args = sync_of(prl.image(["H100:2"])[0])
    packages = flags(args, "--package")
    assert packages == ["prime-rl", "reverse-text"]
    assert set(packages) <= set(FACTS["lock_workspace_members"])
    assert "--all-packages" not in args


def test_prime_rl_image_without_named_packages_takes_every_member(clean_env: Any) -> None:
    """A hand-run `modal deploy` names no arms: every workspace member, as Dockerfile.cuda."""
    args = sync_of(prl.image(["H100:2"])[0])
    assert "--all-packages" in args
    assert any("--all-packages" in line for line in FACTS["dockerfile_sync"])


def test_prime_rl_runs_frozen_everywhere_in_the_container(tmp_path: Path) -> None:
    """Every `uv run` the container starts (the teacher, rl, the dry run) is --frozen and, as the
    image synced, --no-dev (plain `uv run` installs the dev group at start)."""
    serve = "CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model m --server.port 8001"
    for argv in (prl.teacher_argv(serve)[0], prl.rl_argv(tmp_path / "c.toml"),
                 prl.rl_argv(tmp_path / "c.toml", dry_run=True)):
        head = argv[:argv.index("--project")]
        assert head[:2] == ["uv", "run"] and "--frozen" in head and "--no-dev" in head
    assert "--no-dev" in sync_of(prl.image(["H100:2"])[0])


def test_verl_image_installs_torch_before_flash_attn_without_isolation(clean_env: Any) -> None:
    """flash-attn 2.8.3 is an sdist whose setup.py imports torch: torch is in an earlier layer,
    at verl's own pin, and flash-attn's layer builds without isolation."""
    img, label = vl.image(["H100:2"])
    pips = [r for r in runs(img) if r.startswith("python -m pip install")]
    fa = [i for i, r in enumerate(pips) if re.search(r"\bflash-attn==", r)]
    torch = [i for i, r in enumerate(pips) if re.search(r"\btorch==", r)]
    assert fa and torch and max(torch) < min(fa)
    assert all("--no-build-isolation" in pips[i] for i in fa)
    assert not any("flash-attn" in pips[i] for i in torch)  # not in torch's own (isolated) layer
    assert "flash-attn==2.8.3" in label


def test_verl_image_pins_are_verls_own() -> None:
    """torch and flash-attn as verl 0.9.1's metadata pins them for the `vllm` and
    `flash-attn-cu130torch211` extras."""
    from tests.helpers import verl_python

    out = subprocess.run([verl_python(), "-c", "import importlib.metadata as m; "
                          "print('\\n'.join(m.requires('verl')))"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    pins = {r.split(";")[0].strip() for r in out if "extra ==" in r}
    assert vl.TORCH in pins and vl.FLASH_ATTN in pins
    assert vl.EXTRAS == f"verl[vllm]=={vl.VERSION}"


def container_label(target: str, deploy_env: dict[str, str]) -> tuple[str, str]:
    """The app module imported as at deploy (with `deploy_env`), then again as Modal's container
    entry imports it: a fresh interpreter whose environment is the image's ENV layers only."""
    code = ("import json, whileai.launch.modal_app as m; "
            "print(json.dumps([m.IMAGE_LABEL, __import__('os').environ.get('WHILEAI_IMAGE_LABEL')]))")
    base = {k: v for k, v in os.environ.items() if not k.startswith("WHILEAI_")}
    base["PYTHONPATH"] = str(ROOT)
    deploy = subprocess.run([sys.executable, "-c", code + "; print(json.dumps(__import__('tests.launch."
                             "test_images', fromlist=['envs']).envs(m.image)))"],
                            env=base | deploy_env | {"WHILEAI_MODAL_TARGET": target},
                            capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()
    label = json.loads(deploy[0])[0]
    image_env = json.loads(deploy[1])
    inside = subprocess.run([sys.executable, "-c", code], env=base | image_env, capture_output=True,
                            text=True, check=True, cwd=ROOT).stdout
    return label, json.loads(inside)[0]


def test_verl_label_is_the_deployed_images_in_the_container() -> None:
    """With WHILEAI_VERL_IMAGE at deploy, the container (which has no such variable) reports the
    registry image it runs in, not the default build."""
    deployed, inside = container_label("verl", {"WHILEAI_VERL_IMAGE": "verlai/verl:example"})
    assert "verlai/verl:example" in deployed
    assert inside == deployed


def test_prime_rl_label_is_the_deployed_images_in_the_container() -> None:
    deployed, inside = container_label("prime-rl", {PACKAGES_ENV: "reverse-text",
                                                    "WHILEAI_MODAL_GPUS": "A100-80GB:2"})
    assert "reverse-text" in deployed and "flash-attn" in deployed and "flash-attn-3" not in deployed
    assert inside == deployed


def test_prime_rl_submodule_steps_make_git_fetch_over_https(tmp_path: Path, clean_env: Any) -> None:
    """The image's own git commands, run by the real git on a repository with the pin's
    .gitmodules (from the fixture): every needed submodule is fetched from an https:// URL and
    ssh is never started. Offline by construction: a proxy on a closed port refuses at once."""
    img, _ = prl.image(["H100:2"])
    steps = runs(img)
    repo = tmp_path / "prime-rl"
    home = tmp_path / "build-home"  # the build's ~/.gitconfig, where the rewrite goes
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_TERMINAL_PROMPT": "0",
           "GIT_SSH_COMMAND": "echo SSH-STARTED >&2; false", "GIT_CONFIG_COUNT": "2",
           "GIT_CONFIG_KEY_0": "http.proxy", "GIT_CONFIG_VALUE_0": "http://127.0.0.1:9",
           "GIT_CONFIG_KEY_1": "protocol.file.allow", "GIT_CONFIG_VALUE_1": "always"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)

    repo.mkdir()
    git("init", "-q")
    mods = FACTS["gitmodules"]
    lines = []
    for path, url in mods.items():
        lines += [f'[submodule "{path}"]', f"\tpath = {path}", f"\turl = {url}"]
        git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")
    (repo / ".gitmodules").write_text("\n".join(lines) + "\n")
    git("add", ".gitmodules")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pin")
    prime = prl.PRIME_RL_DIR
    ours = [s.replace(prime, str(repo)) for s in steps
            if s.startswith("git config") or "submodule update" in s]
    assert len(ours) == 2
    tried = ""
    for cmd in ours:
        p = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, cwd=tmp_path)
        tried += p.stderr
    assert "SSH-STARTED" not in tried
    paths = [*FACTS["uv_source_paths"].values(), *FACTS["lock_workspace_members"].values()]
    for path in (m for m in mods if any(p == m or p.startswith(m + "/") for p in paths)):
        name = mods[path].rsplit("/", 1)[1].rsplit(":", 1)[-1].removesuffix(".git")
        url = rf"https://github\.com/PrimeIntellect-ai/{re.escape(name)}(\.git)?"
        assert re.search(url, tried), (path, tried)
