"use strict";
(function () {
  var data = JSON.parse(document.getElementById("whileai-data").textContent);
  var tip = document.getElementById("tip");
  var detail = document.getElementById("detail-body");
  var spans = Array.prototype.slice.call(document.querySelectorAll(".t"));
  var pinned = null;

  function tokenOf(el) {
    return data.completions[+el.getAttribute("data-c")].tokens[+el.getAttribute("data-p")];
  }
  function quantity() {
    var checked = document.querySelector("input[name=q]:checked");
    return checked ? checked.value : "signal";
  }
  function fmt(x, d) { return x === null || x === undefined ? "–" : x.toFixed(d === undefined ? 3 : d); }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c];
    });
  }
  // a token on one line: newlines, tabs and other control characters escaped (as page.py's shown)
  function show(s) {
    return esc(String(s).replace(/[\x00-\x1f\x7f]/g, function (c) {
      var named = { "\n": "\\n", "\t": "\\t", "\r": "\\r" };
      return named[c] || "\\x" + ("0" + c.charCodeAt(0).toString(16)).slice(-2);
    }));
  }

  // colour scale: the 95th percentile of |value| over all tokens, so one outlier does not wash out the rest
  function scaleFor(q) {
    var v = [];
    data.completions.forEach(function (c) {
      c.tokens.forEach(function (t) { if (t[q] !== null) { v.push(Math.abs(t[q])); } });
    });
    if (!v.length) { return 1; }
    v.sort(function (a, b) { return a - b; });
    return v[Math.min(v.length - 1, Math.floor(0.95 * v.length))] || 1;
  }
  function colour(x, scale) {
    if (x === null || x === undefined) { return "transparent"; }
    var a = Math.min(1, Math.abs(x) / scale) * 0.85;
    return x >= 0 ? "rgba(220,38,38," + a.toFixed(3) + ")" : "rgba(37,99,235," + a.toFixed(3) + ")";
  }
  function paint() {
    var q = quantity();
    var scale = scaleFor(q);
    spans.forEach(function (el) { el.style.backgroundColor = colour(tokenOf(el)[q], scale); });
    Array.prototype.forEach.call(document.querySelectorAll("svg.chart"), function (svg) {
      var mine = (q === "signal") === (svg.getAttribute("data-q") === "mean_signal");
      svg.style.display = mine ? "block" : "none";
    });
    var legend = document.getElementById("legend");
    var grad = q === "signal"
      ? "linear-gradient(90deg, rgba(37,99,235,.85), #fff, rgba(220,38,38,.85))"
      : "linear-gradient(90deg, #fff, rgba(220,38,38,.85))";
    legend.innerHTML = (q === "signal" ? "−" + fmt(scale) : "0") + " <i style=\"background:" + grad +
      "\"></i> " + fmt(scale) + (q === "signal" ? " nats (red: the student is surer than the teacher)" : " nats");
  }

  function card(el) {
    var t = tokenOf(el);
    var c = +el.getAttribute("data-c"), p = +el.getAttribute("data-p");
    var rows = t.teacher_top.map(function (a) {
      var me = a.id !== null ? a.id === t.id : a.text === t.text;
      return "<tr><td" + (me ? " class=\"me\"" : "") + "><code>" + show(a.text) + "</code></td><td>" +
        fmt(a.logprob) + "</td><td>" + (Math.exp(a.logprob) * 100).toFixed(1) + "%</td></tr>";
    }).join("");
    return "<div class=\"kv\"><b>token</b><span><code>" + show(t.text) + "</code> id " + t.id + "</span>" +
      "<b>where</b><span>completion " + c + ", position " + p + "</span>" +
      "<b>log p student</b><span>" + fmt(t.student_logprob) + "</span>" +
      "<b>log p teacher</b><span>" + fmt(t.teacher_logprob) + "</span>" +
      "<b>signal</b><span>" + fmt(t.signal) + "</span>" +
      "<b>full KL</b><span>" + fmt(t.full_kl) + "</span>" +
      "<b>teacher rank</b><span>" + (t.teacher_rank === null ? "> " + data.settings.top_k : t.teacher_rank) +
      "</span></div><b>teacher's top " + data.settings.top_k + "</b>" +
      "<table class=\"alts\"><tr><th>token</th><th>log p</th><th>p</th></tr>" + rows + "</table>";
  }
  function pin(el) {
    if (pinned) { pinned.classList.remove("pinned"); }
    pinned = el;
    el.classList.add("pinned");
    detail.innerHTML = card(el);
  }

  spans.forEach(function (el) {
    el.addEventListener("mouseenter", function () { tip.innerHTML = card(el); tip.hidden = false; });
    el.addEventListener("mousemove", function (e) {
      var x = Math.min(e.clientX + 14, window.innerWidth - 350);
      var y = e.clientY + 16 + tip.offsetHeight > window.innerHeight ? e.clientY - tip.offsetHeight - 10 : e.clientY + 16;
      tip.style.left = x + "px";
      tip.style.top = Math.max(0, y) + "px";
    });
    el.addEventListener("mouseleave", function () { tip.hidden = true; });
    el.addEventListener("click", function () { pin(el); });
  });
  Array.prototype.forEach.call(document.querySelectorAll("input[name=q]"), function (r) {
    r.addEventListener("change", paint);
  });
  Array.prototype.forEach.call(document.querySelectorAll("a.jump"), function (a) {
    a.addEventListener("click", function () {
      var el = document.querySelector(".t[data-c=\"" + a.getAttribute("data-c") + "\"][data-p=\"" +
        a.getAttribute("data-p") + "\"]");
      if (el) { pin(el); }
    });
  });


  paint();
  // start with the most disagreed-with token pinned
  var best = null, bestV = -Infinity;
  spans.forEach(function (el) { var v = tokenOf(el).signal; if (v > bestV) { bestV = v; best = el; } });
  if (best) { pin(best); }
  document.body.setAttribute("data-ready", "1");
})();
