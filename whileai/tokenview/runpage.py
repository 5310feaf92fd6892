"""The self-contained HTML page of `whileai inspect --run`: curves over steps, one step's
sequences token by token, the tokens whose signal stays high. The same rules as spec
inspection's page (whileai.tokenview.page, whose helpers and CSS it reuses): inline CSS and JS,
the report embedded as JSON, nothing loaded from outside; the text reads without JavaScript,
the script colours tokens by the chosen quantity and shows a token's numbers on hover.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from whileai.tokenview.page import MARKER, asset, esc, num, pct, shown
from whileai.tokenview.rundocument import RunReport, StepStats

COLOURS = ("#111827", "#dc2626", "#2563eb", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2")
CURVES = (("mean_signal", "mean signal"), ("top1_share_signal", "top 1% share of the signal"),
          ("masked_fraction", "masked fraction (trust region)"),
          ("mean_mismatch_kl", "mean mismatch KL (trainer vs inference)"),
          ("mean_entropy", "mean entropy"), ("mean_abs_advantage", "mean |advantage|"))
EXTRA_CSS = (".charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); "
             "gap: 6px 18px; } .charts figure { margin: 0; } figcaption { font-size: 12px; color: #374151; }"
             " .t.u { color: #9ca3af; } .keys span { margin-right: 12px; font-size: 12px; }")


def embed(report: RunReport) -> str:
    return json.dumps(report.model_dump(mode="json"), ensure_ascii=False).replace("<", "\\u003c")


def curve(series: dict[str, Sequence[StepStats]], key: str, title: str) -> str:
    """One quantity over steps as an inline SVG line chart, a line per env ('all' first)."""
    pts = {name: [(s.step, getattr(s, key)) for s in rows if getattr(s, key) is not None]
           for name, rows in series.items()}
    every = [p for ps in pts.values() for p in ps]
    if not every:
        return f'<figure><figcaption>{esc(title)}: none in these exports</figcaption></figure>'
    w, h, left, pad = 320, 120, 38, 12
    x0, x1 = min(p[0] for p in every), max(p[0] for p in every)
    y0, y1 = min(min(p[1] for p in every), 0.0), max(p[1] for p in every)
    xs, ys = (x1 - x0) or 1, (y1 - y0) or 1.0

    def at(step: int, v: float) -> str:
        return f"{left + (step - x0) / xs * (w - left - pad):.1f},{pad + (y1 - v) / ys * (h - 2 * pad):.1f}"

    lines = []
    for i, (name, ps) in enumerate(pts.items()):
        c = COLOURS[i % len(COLOURS)]
        if len(ps) > 1:
            lines.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.6" '
                         f'points="{" ".join(at(s, v) for s, v in ps)}"/>')
        lines += [f'<circle cx="{at(s, v).split(",")[0]}" cy="{at(s, v).split(",")[1]}" r="2" fill="{c}">'
                  f"<title>{esc(name)} step {s}: {v:.4g}</title></circle>" for s, v in ps]
    return (f'<figure><figcaption>{esc(title)}</figcaption><svg class="chart" data-k="{key}" '
            f'viewBox="0 0 {w} {h}" role="img" aria-label="{esc(title)} by step">'
            f'<line x1="{left}" x2="{w - pad}" y1="{h - pad}" y2="{h - pad}" stroke="#9ca3af"/>'
            f'<text x="0" y="{pad + 4}" class="ax">{y1:.3g}</text>'
            f'<text x="0" y="{h - pad}" class="ax">{y0:.3g}</text>'
            f'<text x="{left}" y="{h - 1}" class="ax">step {x0}</text>'
            f'<text x="{w - pad - 50}" y="{h - 1}" class="ax">step {x1}</text>'
            + "".join(lines) + "</svg></figure>")


def steps_table(rows: Sequence[StepStats]) -> str:
    body = "".join(
        f"<tr><td>{s.step}</td><td>{s.sequences}</td><td>{s.trained_tokens}</td>"
        f"<td>{num(s.mean_signal)}</td><td>{pct(s.top1_share_signal)}</td><td>{pct(s.masked_fraction)}</td>"
        f"<td>{num(s.mean_mismatch_kl, 4)}</td><td>{num(s.mean_entropy)}</td>"
        f"<td>{num(s.mean_advantage)}</td></tr>"
        for s in rows)
    return ('<table class="stats" id="steps"><tr><th>step</th><th>sequences</th><th>trained tokens</th>'
            "<th>mean signal</th><th>top 1% share</th><th>masked</th><th>mismatch KL</th><th>entropy</th>"
            f"<th>mean advantage</th></tr>{body}</table>")


def sequences_html(report: RunReport) -> str:
    st = report.shown
    if st is None:
        return "<p>No STABLE step was read.</p>"
    out = [f'<p class="sub">step {st.step}: {len(st.sequences)} of {st.sequences_total} sequences, each '
           "from its first trained token (grey: not trained on).</p>"]
    for si, s in enumerate(st.sequences):
        spans = "".join(f'<span class="t{"" if t.trained else " u"}" data-s="{si}" data-p="{i}">'
                        f"{esc(t.text)}</span>" for i, t in enumerate(s.shown))
        out.append(f'<section class="comp" id="s{si}"><h3>rank {s.rank}, sequence {s.index} '
                   f"<small>{esc(s.env or '')} · {s.tokens} tokens, {s.trained_tokens} trained · mean "
                   f"signal {num(s.mean_signal)}</small></h3><details><summary>context</summary>"
                   f'<pre>{esc(s.context)}</pre></details><div class="toks">{spans}</div></section>')
    return "".join(out)


def top_table(report: RunReport) -> str:
    rows = "".join(
        f'<tr><td data-v="{esc(r.text)}"><code>{esc(shown(r.text))}</code></td>'
        f'<td data-v="{r.id}">{r.id}</td><td data-v="{r.steps_high}">{r.steps_high} of {r.steps_seen}</td>'
        f'<td data-v="{r.count}">{r.count}</td>'
        f'<td data-v="{r.mean_signal}">{r.mean_signal:.3f}</td>'
        f'<td data-v="{r.first.mean_signal}">{r.first.mean_signal:.3f} (step {r.first.step})</td>'
        f'<td data-v="{r.last.mean_signal}">{r.last.mean_signal:.3f} (step {r.last.step})</td></tr>'
        for r in report.top_tokens)
    return ('<table id="top" class="sortable"><thead><tr><th data-k="text">token</th><th data-k="num">id</th>'
            '<th data-k="num" class="sorted-desc">steps high</th><th data-k="num">count</th>'
            '<th data-k="num">mean signal</th><th data-k="num">first</th><th data-k="num">last</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>")


def teacher_html(report: RunReport) -> str:
    """The samples scored against a teacher: per step, per sample; their tokens on the teacher page."""
    tr = report.teacher
    if tr is None:
        return ""
    o = tr.overall
    steps = "".join(f"<tr><td>{s.step}</td><td>{s.sequences}</td><td>{s.stats.tokens}</td>"
                    f"<td>{num(s.stats.mean_signal)}</td><td>{pct(s.stats.top1_share_signal)}</td>"
                    f"<td>{pct(s.stats.teacher_top_k_hit)}</td><td>{pct(s.filler_share_signal)}</td></tr>"
                    for s in tr.steps)
    samples = "".join(
        f'<tr><td data-v="{s.step}">{s.step}</td><td data-v="{s.rank}">{s.rank}</td>'
        f'<td data-v="{s.index}">{s.index}</td><td data-v="{s.stats.tokens}">{s.stats.tokens}</td>'
        f'<td data-v="{s.stats.mean_signal or 0}">{num(s.stats.mean_signal)}</td>'
        f'<td data-v="{s.stats.teacher_top_k_hit or 0}">{pct(s.stats.teacher_top_k_hit)}</td>'
        f'<td data-v="{-1 if s.shown is None else s.shown}">'
        f'{"" if s.shown is None else f"completion {s.shown}"}</td></tr>' for s in tr.samples)
    head = "".join(f'<th data-k="num">{h}</th>' for h in ("step", "rank", "sequence", "scored tokens",
                                                           "mean signal", "in teacher top-k", "shown"))
    return (f'<section id="teacher"><h2>Against the teacher</h2><p class="sub">{esc(tr.teacher.kind)} '
            f"{esc(tr.teacher.model)}{' at ' + esc(tr.teacher.url) if tr.teacher.url else ''} · "
            f"{len(tr.samples)} samples ({esc(tr.pick)}) · {o.tokens} tokens · mean signal "
            f"{num(o.mean_signal)} (log p_student − log p_teacher) · top 1% share "
            f"{pct(o.top1_share_signal)} · on filler {pct(tr.filler_share_signal)} · tokenizers: "
            f"{esc(tr.tokenizer_note)}. Token by token: <a href=\"{esc(tr.page)}\">{esc(tr.page)}</a>.</p>"
            '<table class="stats"><tr><th>step</th><th>samples</th><th>tokens</th><th>mean signal</th>'
            "<th>top 1% share</th><th>in teacher top-k</th><th>on filler</th></tr>"
            f'{steps}</table><details><summary>every sample</summary><table class="sortable">'
            f"<thead><tr>{head}</tr></thead><tbody>{samples}</tbody></table></details></section>")


def render(report: RunReport) -> str:
    rd = report.reading
    series: dict[str, Sequence[StepStats]] = {"all": report.steps, **report.by_env}
    keys = "".join(f'<span style="color:{COLOURS[i % len(COLOURS)]}">■ {esc(n)}</span>'
                   for i, n in enumerate(series)) if len(series) > 1 else ""
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    span = f"steps {rd.steps_read[0]}–{rd.steps_read[-1]}" if rd.steps_read else "no steps"
    radios = "".join(f'<label><input type="radio" name="q" value="{k}"{" checked" if k == "signal" else ""}> '
                     f"{label}</label>" for k, label in (("signal", f"signal ({report.signal_name})"),
                                                         ("advantage", "advantage"), ("entropy", "entropy"),
                                                         ("mismatch_kl", "mismatch KL")))
    return "".join([
        f"<!DOCTYPE html>\n<!-- {MARKER} {esc(report.whileai)} -->\n<html lang=\"en\"><head>"
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>whileai inspect --run: {esc(report.run)}</title>"
        f"<style>{asset('page.css')}{EXTRA_CSS}</style></head><body>",
        f"<header><h1>Per-token view of a run: {esc(report.run)}</h1><p class=\"sub\">{span} · "
        f"{len(rd.steps_read)} of {rd.steps_found} step folders read · {rd.records} sequences from "
        f"{rd.ranks} rank(s) · {rd.bytes_read / 1e6:.1f} MB · {rd.torn_lines} torn, {rd.invalid_lines} "
        f"invalid lines skipped · envs: {esc(', '.join(report.envs) or '–')} · whileai {esc(report.whileai)}"
        "</p></header>",
        '<main><div class="left"><section class="defs"><h2>What is shown</h2><dl>'
        f"<dt>signal</dt><dd>{esc(report.signal_definition)}</dd><dt>mismatch KL</dt><dd>r − log r − 1, "
        "log r = trainer − inference log-prob: where trainer and vLLM disagree.</dd><dt>masked</dt><dd>"
        "dropped from the policy-gradient term by the trust region (is_masked).</dd></dl>"
        f'<div class="controls"><span>colour by:</span>{radios}<span id="legend"></span></div>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</section>",
        f'<section><h2>Over steps</h2><p class="keys">{keys}</p><div class="charts">'
        + "".join(curve(series, k, t) for k, t in CURVES) + "</div><details><summary>every step</summary>"
        f"{steps_table(report.steps)}</details></section>",
        teacher_html(report),
        f"<section><h2>Sequences</h2>{sequences_html(report)}</section>",
        '<section><h2>Tokens whose signal stays high</h2><p class="sub">ids in the top 50 by mean signal '
        f"of a step, in how many steps; first and last step's mean.</p>{top_table(report)}</section>",
        '</div><aside id="detail"><h2>Token</h2><p class="sub">Hover a token; click to pin.</p>'
        '<div id="detail-body"></div></aside></main><div id="tip" hidden></div>',
        f'<script id="whileai-data" type="application/json">{embed(report)}</script>',
        f"<script>{asset('sortable.js')}{asset('tokenpage.js')}{asset('runpage.js')}</script></body></html>\n",
    ])
