"use strict";
(function () {
  var data = JSON.parse(document.getElementById("whileai-data").textContent);
  var spans = Array.prototype.slice.call(document.querySelectorAll(".t"));
  var signed = { signal: data.signal_name === "reverse_kl", advantage: true, entropy: false, mismatch_kl: false };
  var fmt = tokenView.fmt, show = tokenView.show;

  function tokenOf(el) {
    return data.shown.sequences[+el.getAttribute("data-s")].shown[+el.getAttribute("data-p")];
  }
  // the colour scale runs over the shown trained tokens
  function scaleFor(q) {
    var v = [];
    spans.forEach(function (el) {
      var t = tokenOf(el);
      if (t.trained && t[q] !== null) { v.push(t[q]); }
    });
    return tokenView.scale(v);
  }
  function paint() {
    var q = tokenView.quantity();
    var scale = scaleFor(q);
    spans.forEach(function (el) {
      var t = tokenOf(el);
      el.style.backgroundColor = t.trained ? tokenView.colour(t[q], scale) : "transparent";
    });
    tokenView.legend(signed[q], scale, "");
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
  tokenView.start(spans, tokenOf, card, paint);
  document.body.setAttribute("data-ready", "1");
})();
