// Sortable tables, for both inspect pages: numbers by data-v, text alphabetically; a second
// click on a header reverses. Inlined ahead of the page's own script, in the same element.
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.querySelectorAll("th[data-k]");
    Array.prototype.forEach.call(heads, function (th) {
      th.addEventListener("click", function () {
        var col = Array.prototype.indexOf.call(th.parentNode.children, th);
        var desc = !th.classList.contains("sorted-desc");
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove("sorted-desc", "sorted-asc"); });
        th.classList.add(desc ? "sorted-desc" : "sorted-asc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = th.getAttribute("data-k") === "num";
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          var r = numeric ? (+x) - (+y) : x.localeCompare(y);
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
