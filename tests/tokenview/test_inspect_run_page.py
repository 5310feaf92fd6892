"""The run page in headless Chromium: its script runs without an error, colours every trained
token shown, and loads nothing from outside (as spec inspection's page test, tests/targets/trl)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import token_export_gen as gen

from whileai.tokenview.runpage import render
from whileai.tokenview.runsummary import summarise

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
COLLECT = ("<script>window.__errs=[];addEventListener('error',function(e){__errs.push(String(e.message))});"
           "addEventListener('securitypolicyviolation',function(e){__errs.push('csp: '+e.blockedURI)});"
           "['error','warn'].forEach(function(k){var f=console[k];console[k]=function(){"
           "__errs.push(k+': '+[].join.call(arguments,' '));f.apply(console,arguments)}});</script>")
REPORT = "<script>document.body.setAttribute('data-errors',JSON.stringify(window.__errs));</script>"


def browser() -> str | None:
    return next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)


def test_run_page_renders_in_chromium(tmp_path: Path) -> None:
    exe = browser()
    if exe is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run does it)")
    gen.write_run(tmp_path / "run", steps=4, ranks=2, sequences=3, envs=("a", "b"), stable=[0, 1, 2])
    report = summarise(tmp_path / "run")
    # a token text that would break the page if it were not escaped
    assert report.shown is not None
    report.shown.sequences[0].shown[0].text = "</script><b>x"
    page = render(report)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + COLLECT, 1).replace("</body>", REPORT + "</body>", 1),
                     encoding="utf-8")
    done = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=90)
    dom = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'data-ready="1"' in dom, "the page's script did not finish"
    assert 'data-errors="[]"' in dom, re.findall(r'data-errors="[^"]*"', dom)
    trained = sum(t.trained for s in report.shown.sequences for t in s.shown)
    coloured = re.findall(r'<span class="t(?: pinned)?" data-s="\d+" data-p="\d+" '
                          r'style="background-color: rgba?\(', dom)
    assert len(coloured) == trained, "every trained token shown is coloured"
    assert "log p trainer" in dom  # the highest-signal token is pinned in the side panel
    assert html.escape("</script><b>x") in dom
    assert dom.count("<polyline") >= 3 * 4  # curves: all, a, b on the charts with values
    data = json.loads(re.search(r'<script id="whileai-data" type="application/json">(.*?)</script>', page,
                                re.S).group(1))  # type: ignore[union-attr]
    assert data["reading"]["steps_unstable"] == [3]


def test_teacher_page_renders_in_chromium(tmp_path: Path) -> None:
    """inspect --run with a teacher: spec inspection's page, over the run's samples, opens clean."""
    exe = browser()
    if exe is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run does it)")
    from fake_teacher import MODEL, FakeTeacher
    from typer.testing import CliRunner

    from whileai.cli.app import app

    gen.write_run(tmp_path / "run", steps=3, ranks=2, sequences=3)
    with FakeTeacher() as server:
        r = CliRunner().invoke(app, ["inspect", "--run", str(tmp_path / "run"), "--teacher-endpoint",
                                     f"vllm:{MODEL}@{server.url}", "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "out" / "inspect-run-teacher.json").read_text())
    page = (tmp_path / "out" / "inspect-run-teacher.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + COLLECT, 1).replace("</body>", REPORT + "</body>", 1),
                     encoding="utf-8")
    done = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=90)
    dom = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'data-ready="1"' in dom, "the page's script did not finish"
    assert 'data-errors="[]"' in dom, re.findall(r'data-errors="[^"]*"', dom)
    spans = re.findall(r'<span class="t[^"]*" data-c="\d+" data-p="\d+" '
                       r'style="background-color: rgba?\(', dom)
    assert len(spans) == sum(len(c["tokens"]) for c in report["completions"]) > 0
    assert "log p teacher" in dom
    # the run page itself gains the teacher's per-step and per-sample tables, and still opens clean
    run_page = (tmp_path / "out" / "inspect-run.html").read_text()
    run_page = run_page.replace("<head>", "<head>" + COLLECT, 1).replace("</body>", REPORT + "</body>", 1)
    probe.write_text(run_page, encoding="utf-8")
    done = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=90)
    assert 'data-ready="1"' in done.stdout and 'data-errors="[]"' in done.stdout
    assert "Against the teacher" in done.stdout and 'href="inspect-run-teacher.html"' in done.stdout
