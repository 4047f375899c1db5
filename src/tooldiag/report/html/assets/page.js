(function () {
  "use strict";
  function sortValue(cell) {
    var v = cell.getAttribute("data-v");
    return v === null ? null : parseFloat(v);
  }
  function sortTable(table, index, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var descending = th.getAttribute("aria-sort") === "ascending";
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.sort(function (a, b) {
      var ca = a.cells[index], cb = b.cells[index];
      var va = sortValue(ca), vb = sortValue(cb), r;
      if (va !== null || vb !== null) {
        if (va === null) { return 1; }
        if (vb === null) { return -1; }
        r = va - vb;
      } else {
        r = ca.textContent.localeCompare(cb.textContent, undefined, {numeric: true});
      }
      return descending ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function initSortable() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.tHead) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        th.addEventListener("click", function () { sortTable(table, index, th); });
      });
    });
  }
  function applyFilters(block) {
    var table = document.getElementById(block.getAttribute("data-table"));
    if (!table) { return; }
    var wanted = [];
    block.querySelectorAll("select[data-attr]").forEach(function (select) {
      if (select.value) { wanted.push([select.getAttribute("data-attr"), select.value]); }
    });
    var search = block.querySelector("input[data-attr=text]");
    var needle = search ? search.value.trim().toLowerCase() : "";
    var shown = 0, total = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      total += 1;
      var keep = wanted.every(function (pair) {
        var tokens = (row.getAttribute("data-" + pair[0]) || "").split(" ");
        return tokens.indexOf(pair[1]) >= 0;
      });
      if (keep && needle) { keep = row.textContent.toLowerCase().indexOf(needle) >= 0; }
      row.classList.toggle("hidden", !keep);
      if (keep) { shown += 1; }
    });
    var count = block.querySelector(".count");
    if (count) { count.textContent = shown + " of " + total + " shown"; }
    block.setAttribute("data-shown", String(shown));
    document.dispatchEvent(new CustomEvent("tooldiag:filtered", {detail: {table: table.id, shown: shown}}));
  }
  function presetFromHash() {
    var hash = decodeURIComponent(window.location.hash.replace(/^#/, ""));
    var at = hash.indexOf(":");
    if (at < 0) { return; }
    var block = document.querySelector('.filters[data-table="' + hash.slice(0, at) + '"]');
    if (!block) { return; }
    hash.slice(at + 1).split(",").forEach(function (pair) {
      var kv = pair.split("=");
      var control = block.querySelector('[data-attr="' + kv[0] + '"]');
      if (control && kv.length === 2) { control.value = kv[1]; }
    });
  }
  function initFilters() {
    presetFromHash();
    document.querySelectorAll(".filters[data-table]").forEach(function (block) {
      block.querySelectorAll("select, input").forEach(function (control) {
        control.addEventListener(control.tagName === "INPUT" ? "input" : "change", function () { applyFilters(block); });
      });
      applyFilters(block);
    });
  }
  window.tooldiag = {applyFilters: applyFilters};
  document.addEventListener("DOMContentLoaded", function () { initSortable(); initFilters(); });
})();
