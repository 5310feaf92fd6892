"""The self-contained HTML page: inline CSS and JS, the report embedded as JSON, no network.

The text (tokens, tables, definitions) is rendered here, so it reads without JavaScript; the
script colours tokens by the chosen quantity, shows a token's numbers and the teacher's top
alternatives on hover (click pins them), draws nothing from outside the page and sorts tables.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from whileai.tokenview.document import InspectReport, Stats
from whileai.words import counted

MARKER = "written by whileai inspect"


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def shown(text: str) -> str:
    """A token's text on one line: newlines, tabs and other control characters escaped."""
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return "".join(named.get(ch, f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch)
                   for ch in text)


def asset(name: str) -> str:
    return resources.files("whileai.tokenview").joinpath(name).read_text(encoding="utf-8")


def embed(report: InspectReport) -> str:
    """The report as JSON safe inside <script>: no '<' survives, so no '</script>' either."""
    return json.dumps(report.model_dump(mode="json"), ensure_ascii=False).replace("<", "\\u003c")


def stats_cells(s: Stats) -> str:
    return "".join(f"<td>{v}</td>" for v in (
        s.tokens, num(s.mean_signal), num(s.sum_signal, 2), pct(s.top1_share_signal),
        num(s.mean_full_kl), pct(s.top1_share_full_kl), pct(s.teacher_top_k_hit)))


STATS_HEAD = ("<tr><th>tokens</th><th>mean signal</th><th>sum signal</th><th>top 1% share (signal)</th>"
              "<th>mean full KL</th><th>top 1% share (full KL)</th><th>in teacher top-k</th></tr>")


def chart(report: InspectReport, key: str) -> str:
    """KL by position as an inline SVG bar chart (zero line; negative bars below it)."""
    bins = report.by_position
    values = [getattr(b, key) for b in bins]
    if not bins or any(v is None for v in values):
        return ""
    w, h, pad = 640, 150, 28
    hi, lo = max(max(values), 0.0), min(min(values), 0.0)
    span = (hi - lo) or 1.0
    zero = pad / 2 + (hi / span) * (h - pad)
    bw = (w - 50) / len(bins)
    bars = []
    for i, (b, v) in enumerate(zip(bins, values, strict=True)):
        y = pad / 2 + ((hi - max(v, 0.0)) / span) * (h - pad)
        bh = abs(v) / span * (h - pad)
        colour = "#dc2626" if v >= 0 else "#2563eb"
        bars.append(f'<rect x="{45 + i * bw:.1f}" y="{y:.1f}" width="{bw * 0.8:.1f}" height="{bh:.1f}" '
                    f'fill="{colour}"><title>positions {b.start}-{b.end - 1}: {v:.4f} '
                    f'({b.tokens} tokens)</title></rect>')
        if i % max(1, len(bins) // 8) == 0:
            bars.append(f'<text x="{45 + i * bw:.1f}" y="{h - 2}" class="ax">{b.start}</text>')
    return (f'<svg class="chart" data-q="{key}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="mean {key} by completion position">'
            f'<line x1="40" x2="{w}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#9ca3af"/>'
            f'<text x="0" y="{pad / 2 + 4:.1f}" class="ax">{hi:.3g}</text>'
            f'<text x="0" y="{h - pad / 2:.1f}" class="ax">{lo:.3g}</text>' + "".join(bars) + "</svg>")


def completion_html(report: InspectReport, ci: int) -> str:
    c = report.completions[ci]
    p = report.prompts[c.prompt]
    spans = "".join(f'<span class="t" data-c="{ci}" data-p="{i}">{esc(t.text)}</span>'
                    for i, t in enumerate(c.tokens))
    hint = (f"<details><summary>teacher context</summary><pre>{esc(p.teacher_context)}</pre></details>"
            if p.teacher_context != p.student_context else "")
    end = "ended with EOS" if c.finished else "cut at max_tokens"
    return (f'<section class="comp" id="c{ci}"><h3>completion {ci} <small>prompt {c.prompt} '
            f"(row {p.row}), sample {c.sample}, {len(c.tokens)} tokens, {end}</small></h3>"
            f'<p class="ask">{esc(preview(p.prompt))}</p>'
            f"<details><summary>student context</summary><pre>{esc(p.student_context)}</pre></details>"
            f'{hint}<table class="stats">{STATS_HEAD}<tr>{stats_cells(c.stats)}</tr></table>'
            f'<div class="toks">{spans}</div></section>')


def preview(prompt: str | list[dict[str, Any]], limit: int = 240) -> str:
    """The task itself: a text prompt, or the last user message of a chat prompt."""
    if isinstance(prompt, list):
        users = [m for m in prompt if m.get("role") == "user"] or prompt
        prompt = str(users[-1].get("content", ""))
    return prompt if len(prompt) <= limit else prompt[: limit - 1] + "…"


def top_table(report: InspectReport) -> str:
    rows = []
    for r in report.top_tokens:
        rows.append(
            f'<tr><td data-v="{esc(r.text)}"><code>{esc(shown(r.text))}</code></td>'
            f'<td data-v="{r.id}">{r.id}</td><td data-v="{r.count}">{r.count}</td>'
            f'<td data-v="{r.sum_signal}">{r.sum_signal:.3f}</td>'
            f'<td data-v="{r.mean_signal}">{r.mean_signal:.3f}</td>'
            f'<td data-v="{r.max_signal}">{r.max_signal:.3f}</td>'
            f'<td data-v="{r.mean_full_kl if r.mean_full_kl is not None else -1}">{num(r.mean_full_kl)}</td>'
            f'<td><a href="#c{r.worst.completion}" data-c="{r.worst.completion}" data-p="{r.worst.position}" '
            f'class="jump">completion {r.worst.completion}, position {r.worst.position}</a></td></tr>')
    return ('<table id="top" class="sortable"><thead><tr><th data-k="text">token</th><th data-k="num">id</th>'
            '<th data-k="num">count</th><th data-k="num" class="sorted-desc">sum signal</th>'
            '<th data-k="num">mean signal</th><th data-k="num">max signal</th>'
            '<th data-k="num">mean full KL</th><th>worst place</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def sides(report: InspectReport) -> str:
    out = []
    for s in (report.student, report.teacher):
        where = f"{esc(s.model)}" + (f" at {esc(s.url)}" if s.url else "")
        out.append(f"<li><b>{s.role}</b>: {s.kind} {where} (log-probs: {esc(s.logprobs)})</li>")
    return "".join(out)


def render(report: InspectReport) -> str:
    st, d = report.settings, report.definitions
    full_radio = ('<label><input type="radio" name="q" value="full_kl" checked> full-vocabulary KL</label>'
                  if d.full_kl_available else "")
    signal_checked = "" if d.full_kl_available else " checked"
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    body = [
        f"<!DOCTYPE html>\n<!-- {MARKER} {esc(report.whileai)} -->\n<html lang=\"en\"><head>"
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>whileai inspect: {esc(report.method.type)} on {esc(report.taskset)}</title>"
        f"<style>{asset('page.css')}</style></head><body>",
        f'<header><h1>Per-token signal: {esc(report.method.type)} on {esc(report.taskset)}</h1>'
        f"<p class=\"sub\">{esc(report.spec)} · {counted(st.prompts, 'prompts')} × "
        f"{counted(st.samples, 'samples')} from "
        f"{esc(st.data)} ({st.split}) · max {st.max_tokens} tokens · temperature {st.temperature:g} · "
        f"seed {st.seed} · whileai {esc(report.whileai)}</p><ul class=\"sides\">{sides(report)}</ul>"
        f"<p><b>sampler</b>: {report.method.sampler} · <b>teacher sees</b>: "
        f"{esc(report.method.teacher_context)}</p></header>",
        '<main><div class="left">',
        '<section class="defs"><h2>What the colours show</h2><dl>'
        f"<dt>signal</dt><dd>{esc(d.signal)}</dd><dt>full-vocabulary KL</dt><dd>{esc(d.full_kl)} "
        f"<i>Here: {esc(d.full_kl_note)}.</i></dd></dl>"
        f'<div class="controls"><span>colour by:</span>{full_radio}<label><input type="radio" name="q" '
        f'value="signal"{signal_checked}> sampled-token signal</label><span id="legend"></span></div>'
        f'<p class="tok">tokenizers: {esc(report.tokenizer_note)}</p>'
        + (f"<ul class=\"notes\">{notes}</ul>" if notes else "") + "</section>",
        f'<section><h2>Overall</h2><table class="stats">{STATS_HEAD}<tr>{stats_cells(report.overall)}'
        "</tr></table></section>",
        f'<section><h2>By position in the completion</h2>{chart(report, "mean_full_kl")}'
        f'{chart(report, "mean_signal")}</section>',
        "<section><h2>Completions</h2>"
        + "".join(completion_html(report, i) for i in range(len(report.completions))) + "</section>",
        f"<section><h2>Most disagreed-with tokens</h2><p class=\"sub\">by total signal over every "
        f"place the token was sampled; click a header to sort.</p>{top_table(report)}</section>",
        '</div><aside id="detail"><h2>Token</h2><p class="sub">Hover a token; click to pin.</p>'
        '<div id="detail-body"></div></aside></main>',
        '<div id="tip" hidden></div>',
        f'<script id="whileai-data" type="application/json">{embed(report)}</script>',
        f"<script>{asset('sortable.js')}{asset('tokenpage.js')}{asset('page.js')}</script></body></html>\n",
    ]
    return "".join(body)
