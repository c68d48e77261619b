// memos console: keyboard shortcuts only. Every page works without this
// file; it never builds HTML from data (no innerHTML), it only moves focus.
(function () {
  "use strict";
  function items() { return Array.prototype.slice.call(document.querySelectorAll("[data-nav]")); }
  var cur = -1;
  function select(i) {
    var list = items();
    if (!list.length) return;
    cur = Math.max(0, Math.min(list.length - 1, i));
    list.forEach(function (el, j) { el.classList.toggle("current", j === cur); });
    var link = list[cur].querySelector("a");
    if (link) link.focus();
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (e.key === "j") { select(cur + 1); e.preventDefault(); }
    else if (e.key === "k") { select(cur - 1); e.preventDefault(); }
    else if (e.key === "/") {
      var q = document.getElementById("q");
      if (q) { q.focus(); e.preventDefault(); }
      else { window.location.href = "/console/search"; }
    }
  });
})();
