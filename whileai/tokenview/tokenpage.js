// The token view both inspect pages share: number and text formatting, the colour scale and its
// legend, and a token's card on hover (click pins it to the side panel). Inlined after sortable.js
// and ahead of the page's own script (page.js, runpage.js), in the same element.
var tokenView = (function () {
  "use strict";
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
  function quantity() {
    var checked = document.querySelector("input[name=q]:checked");
    return checked ? checked.value : "signal";
  }
  // the colour scale: the 95th percentile of |value|, so one outlier does not wash out the rest
  function scale(values) {
    var v = values.map(Math.abs);
    if (!v.length) { return 1; }
    v.sort(function (a, b) { return a - b; });
    return v[Math.min(v.length - 1, Math.floor(0.95 * v.length))] || 1;
  }
  function colour(x, scale) {
    if (x === null || x === undefined) { return "transparent"; }
    var a = Math.min(1, Math.abs(x) / scale) * 0.85;
    return x >= 0 ? "rgba(220,38,38," + a.toFixed(3) + ")" : "rgba(37,99,235," + a.toFixed(3) + ")";
  }
  // blue through white to red for a signed quantity, white to red for one that is never negative
  function legend(signed, scale, unit) {
    var grad = signed
      ? "linear-gradient(90deg, rgba(37,99,235,.85), #fff, rgba(220,38,38,.85))"
      : "linear-gradient(90deg, #fff, rgba(220,38,38,.85))";
    document.getElementById("legend").innerHTML = (signed ? "−" + fmt(scale) : "0") +
      " <i style=\"background:" + grad + "\"></i> " + fmt(scale) + unit;
  }
  // hover a token span for its card in the tip, click to pin it; the radios repaint; the token
  // with the highest signal starts pinned. Returns pin, for links that jump to a token.
  function start(spans, tokenOf, card, paint) {
    var tip = document.getElementById("tip");
    var detail = document.getElementById("detail-body");
    var pinned = null;
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
    return pin;
  }
  return { fmt: fmt, esc: esc, show: show, quantity: quantity, scale: scale, colour: colour, legend: legend,
           start: start };
})();
