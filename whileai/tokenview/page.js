"use strict";
(function () {
  var data = JSON.parse(document.getElementById("whileai-data").textContent);
  var spans = Array.prototype.slice.call(document.querySelectorAll(".t"));
  var fmt = tokenView.fmt, show = tokenView.show;

  function tokenOf(el) {
    return data.completions[+el.getAttribute("data-c")].tokens[+el.getAttribute("data-p")];
  }
  // the colour scale runs over all tokens, not only those shown
  function scaleFor(q) {
    var v = [];
    data.completions.forEach(function (c) {
      c.tokens.forEach(function (t) { if (t[q] !== null) { v.push(t[q]); } });
    });
    return tokenView.scale(v);
  }
  function paint() {
    var q = tokenView.quantity();
    var scale = scaleFor(q);
    spans.forEach(function (el) { el.style.backgroundColor = tokenView.colour(tokenOf(el)[q], scale); });
    Array.prototype.forEach.call(document.querySelectorAll("svg.chart"), function (svg) {
      var mine = (q === "signal") === (svg.getAttribute("data-q") === "mean_signal");
      svg.style.display = mine ? "block" : "none";
    });
    tokenView.legend(q === "signal", scale,
                     q === "signal" ? " nats (red: the student is surer than the teacher)" : " nats");
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

  // starts with the most disagreed-with token pinned
  var pin = tokenView.start(spans, tokenOf, card, paint);
  Array.prototype.forEach.call(document.querySelectorAll("a.jump"), function (a) {
    a.addEventListener("click", function () {
      var el = document.querySelector(".t[data-c=\"" + a.getAttribute("data-c") + "\"][data-p=\"" +
        a.getAttribute("data-p") + "\"]");
      if (el) { pin(el); }
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
