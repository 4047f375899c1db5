(function () {
  "use strict";
  // The case browser (tooldiag.report.html.cases): a click (or Enter) on a row of table#cases
  // renders its transcript into #case-panel. Transcripts are gzip+base64 JSON in
  // script elements #cases-data-N, decompressed on first use; data is only ever set as textContent.
  var table = document.getElementById("cases");
  var panel = document.getElementById("case-panel");
  if (!table || !panel) { return; }
  var documents = {};

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) { continue; }
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }
  function badge(name) { return el("b", "cls " + name, name); }
  function yesNo(value) { return value === undefined || value === null ? "-" : (value ? "yes" : "no"); }
  function line(cls, label, text) { return add(el("div", "line " + cls), el("i", null, label + ": "), text); }

  function load(key) {
    if (!documents[key]) {
      var holder = document.getElementById("cases-data-" + key);
      if (!holder) { return Promise.reject(new Error("no embedded transcripts for this run")); }
      if (typeof DecompressionStream === "undefined") {
        return Promise.reject(new Error(
          "this browser cannot decompress the embedded transcripts (it lacks DecompressionStream: " +
          "Chrome/Edge 80+, Firefox 113+, Safari 16.4+ have it); `tooldiag show RUN_DIR CASE_ID` prints them"));
      }
      var binary = atob(holder.textContent.trim());
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      documents[key] = new Response(stream).text().then(JSON.parse);
    }
    return documents[key];
  }
  var strings = [];
  function S(value) { return typeof value === "number" ? strings[value] : value; }  // the shared text table
  function decode(index) {
    return Promise.all([load("strings"), load(index)]).then(function (both) {
      strings = both[0].strings;
      return both[1];
    });
  }

  function renderStep(step) {
    var box = el("div", "step");
    var head = add(el("div"), "step " + step.index + " ", badge(step.k), el("span", "rule", "[" + step.r + "]"));
    if (step.q) { add(head, el("span", "rule", "cue " + JSON.stringify(step.q))); }
    if (step.lang) { add(head, el("span", "rule", "lang " + step.lang)); }
    var flags = [];
    if (step.inj) { flags.push("INJECTED, not counted"); }
    if (step.ca) { flags.push("cached"); }
    if (step.l) { flags.push(step.l.toFixed(2) + "s"); }
    if (flags.length) { add(head, el("span", "flag", "(" + flags.join(", ") + ")")); }
    add(box, head);
    if (step.rs !== undefined) { add(box, line("reasoning", "reasoning", S(step.rs))); }
    if (step.x !== undefined) { add(box, line("", "text", S(step.x))); }
    (step.c || []).forEach(function (call) {
      var row = add(el("div", "line"), el("i", null, "call: "), el("code", null, call[0] + " " + call[1]));
      if (call[2]) { add(row, el("span", "line error", "parse error: " + call[2])); }
      add(box, row);
    });
    if (step.d !== undefined) { add(box, line("", "decoded", S(step.d))); }
    if (step.de) { add(box, line((step.c && step.c.length) ? "error" : "dim", "decode error", step.de)); }
    (step.o || []).forEach(function (result) { add(box, line("result", "result", S(result))); });
    return box;
  }

  function render(run, source, t) {
    var out = document.createDocumentFragment();
    add(out, el("h3", null, "case " + t.id + "  (" + t.cat + ")  run " + run));
    add(out, el("p", "meta", "source " + source));
    var verdict = t.v || "-";
    add(out, add(el("p"), "gold ", t.g ? badge(t.g) : "-",
      " · gold turns " + (t.gt ? (t.gt.join(", ") || "none") : "all") +
      " · gold hit " + yesNo(t.h) + " · passed " + yesNo(t.p) + " · verdict ",
      el("span", "verdict " + verdict, verdict.toUpperCase())));
    if (t.et || t.em) { add(out, el("p", "warn", "grader: " + (t.et || "-") + ": " + (t.em || "-"))); }
    if (t.ie) { add(out, el("p", "warn", "inference error: " + t.ie)); }
    add(out, el("p", "meta", "classifier: " + (t.sc || "-")));
    (t.n || []).forEach(function (note) { add(out, el("p", "meta", "note: " + note)); });
    t.t.forEach(function (turn, index) {
      var box = el("div", "turn" + (turn.g ? " gold" : ""));
      var title = "turn " + index + (turn.g && t.gt ? " · GOLD TURN" : "") + (turn.ft ? " · stopped at the step cap" : "");
      add(box, el("h4", null, title));
      (turn.u || []).forEach(function (message) {
        add(box, add(el("div", "user"), el("b", null, "user: "), S(message)));
      });
      if (!turn.s.length) { add(box, el("div", "line dim", "(no model emission)")); }
      turn.s.forEach(function (step, stepIndex) { step.index = stepIndex; add(box, renderStep(step)); });
      add(out, box);
    });
    return out;
  }

  function show(state, content, caseId) {
    panel.textContent = "";
    panel.appendChild(content);
    panel.setAttribute("data-state", state);
    panel.setAttribute("data-case", caseId || "");
    panel.scrollTop = 0;
  }

  function open(row) {
    Array.prototype.forEach.call(table.querySelectorAll("tr.open"), function (r) {
      r.classList.remove("open");
      r.removeAttribute("aria-selected");
    });
    row.classList.add("open");
    row.setAttribute("aria-selected", "true");
    var caseId = row.cells[1].textContent;
    var key = row.getAttribute("data-key");
    if (!key) {
      show("none", el("p", "warn", "No transcript of " + caseId + " is embedded in this page; " +
        "`tooldiag show RUN CASE_ID` prints it."), caseId);
      return Promise.resolve();
    }
    var parts = key.split(".");
    show("loading", el("p", "note", "Loading " + caseId + " …"), caseId);
    return decode(parts[0]).then(function (doc) {
      var t = doc.cases[Number(parts[1])];
      show("shown", render(doc.run, doc.source, t), t.id);
    }, function (error) {
      show("error", el("p", "warn", "Cannot show the transcript: " + error.message), caseId);
    });
  }

  function visibleRows() {
    return Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.classList.contains("hidden"); });
  }

  table.tBodies[0].addEventListener("click", function (event) {
    var row = event.target.closest("tr");
    if (row) { open(row); }
  });
  table.tBodies[0].addEventListener("keydown", function (event) {
    var row = event.target.closest("tr");
    if (!row) { return; }
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      open(row);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var rows = visibleRows();
      var next = rows[rows.indexOf(row) + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) { event.preventDefault(); next.focus(); }
    }
  });

  function openFromHash() {
    // #cases:verdict=masked,open=first opens the first row the filters show; open=KEY (data-key) opens that row.
    var hash = decodeURIComponent(window.location.hash.replace(/^#/, ""));
    var match = /(?:^|[:,])open=([^,]+)/.exec(hash.indexOf("cases:") === 0 ? hash : "");
    if (!match) { return; }
    var key = match[1];
    var row = key === "first" ? visibleRows()[0]
      : (/^[0-9]+[.][0-9]+$/.test(key) ? table.querySelector('tr[data-key="' + key + '"]') : null);
    if (row) { open(row); }
  }
  var CLASSES = {tool_call: 1, ask: 1, refuse: 1, confirm: 1, other: 1};
  function badges(cell) {
    // "tool_call x2 other | ask" (one group per turn) -> one span of badges per turn.
    var out = document.createDocumentFragment();
    cell.textContent.split(" | ").forEach(function (turn) {
      var group = el("span", "turn");
      var last = null;
      turn.split(" ").forEach(function (word) {
        if (/^x[0-9]+$/.test(word) && last) {
          last.textContent += " " + word;
        } else if (CLASSES[word]) {
          last = group.appendChild(badge(word));
        } else {
          last = null;
          group.appendChild(document.createTextNode(word));
        }
      });
      out.appendChild(group);
    });
    cell.textContent = "";
    cell.appendChild(out);
  }
  Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
    row.tabIndex = 0;
    Array.prototype.forEach.call(row.querySelectorAll("td.k"), badges);
  });

  window.tooldiag = window.tooldiag || {};
  window.tooldiag.openCase = open;
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", openFromHash);
  } else {
    openFromHash();
  }
})();
