"use strict";
(function () {
  var data = JSON.parse(document.getElementById("whileai-data").textContent);
  var tip = document.getElementById("tip");
  var detail = document.getElementById("detail-body");
  var spans = Array.prototype.slice.call(document.querySelectorAll(".t"));
  var pinned = null;
  var signed = { signal: data.signal_name === "reverse_kl", advantage: true, entropy: false, mismatch_kl: false };

  function tokenOf(el) {
    return data.shown.sequences[+el.getAttribute("data-s")].shown[+el.getAttribute("data-p")];
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
  function show(s) {
    return esc(String(s).replace(/[\x00-\x1f\x7f]/g, function (c) {
      var named = { "\n": "\\n", "\t": "\\t", "\r": "\\r" };
      return named[c] || "\\x" + ("0" + c.charCodeAt(0).toString(16)).slice(-2);
    }));
  }
  // the 95th percentile of |value| over the shown trained tokens: one outlier does not wash out the rest
  function scaleFor(q) {
    var v = [];
    spans.forEach(function (el) {
      var t = tokenOf(el);
      if (t.trained && t[q] !== null) { v.push(Math.abs(t[q])); }
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
    spans.forEach(function (el) {
      var t = tokenOf(el);
      el.style.backgroundColor = t.trained ? colour(t[q], scale) : "transparent";
    });
    var grad = signed[q]
      ? "linear-gradient(90deg, rgba(37,99,235,.85), #fff, rgba(220,38,38,.85))"
      : "linear-gradient(90deg, #fff, rgba(220,38,38,.85))";
    document.getElementById("legend").innerHTML = (signed[q] ? "−" + fmt(scale) : "0") +
      " <i style=\"background:" + grad + "\"></i> " + fmt(scale);
  }
  function card(el) {
    var t = tokenOf(el), s = data.shown.sequences[+el.getAttribute("data-s")];
    return "<div class=\"kv\"><b>token</b><span><code>" + show(t.text) + "</code> id " + t.id + "</span>" +
      "<b>where</b><span>step " + data.shown.step + ", rank " + s.rank + ", sequence " + s.index +
      ", position " + el.getAttribute("data-p") + "</span>" +
      "<b>trained</b><span>" + (t.trained ? "yes" : "no") + (t.masked ? " (masked)" : "") + "</span>" +
      "<b>signal</b><span>" + fmt(t.signal) + "</span>" +
      "<b>advantage</b><span>" + fmt(t.advantage) + "</span>" +
      "<b>log p trainer</b><span>" + fmt(t.trainer_logprob) + "</span>" +
      "<b>log p inference</b><span>" + fmt(t.inference_logprob) + "</span>" +
      "<b>importance ratio</b><span>" + fmt(t.importance_ratio) + "</span>" +
      "<b>mismatch KL</b><span>" + fmt(t.mismatch_kl, 5) + "</span>" +
      "<b>entropy</b><span>" + fmt(t.entropy) + "</span></div>";
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
  paint();
  var best = null, bestV = -Infinity;
  spans.forEach(function (el) {
    var v = tokenOf(el).signal;
    if (v !== null && v > bestV) { bestV = v; best = el; }
  });
  if (best) { pin(best); }
  document.body.setAttribute("data-ready", "1");
})();
