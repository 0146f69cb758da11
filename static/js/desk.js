// Keyboard shortcuts for the desk: "/" focuses search; j and k move in the
// queue. Everything works without this file; it only saves keystrokes.
(function () {
  "use strict";
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    if (e.key === "/") {
      var s = document.querySelector("[data-search]");
      if (s) {
        var folded = s.closest("details");
        if (folded) folded.open = true;
        e.preventDefault(); s.focus();
      }
      return;
    }
    if (e.key === "j" || e.key === "k") {
      var rows = Array.prototype.slice.call(document.querySelectorAll("[data-queue-row] a[data-row-link]"));
      if (!rows.length) return;
      var i = rows.indexOf(document.activeElement);
      i = e.key === "j" ? Math.min(i + 1, rows.length - 1) : Math.max(i - 1, 0);
      rows[i].focus();
      e.preventDefault();
    }
  });
  // Bulk selection: shift-click selects every row between the last click
  // and this one.
  var lastBox = null;
  document.addEventListener("click", function (e) {
    var box = e.target;
    if (!box.matches || !box.matches("input[data-select]")) return;
    if (e.shiftKey && lastBox && lastBox !== box && document.contains(lastBox)) {
      var boxes = Array.prototype.slice.call(document.querySelectorAll("input[data-select]"));
      var a = boxes.indexOf(lastBox), b = boxes.indexOf(box);
      boxes.slice(Math.min(a, b), Math.max(a, b) + 1).forEach(function (x) { x.checked = box.checked; });
    }
    lastBox = box;
  });
  // Times: a person who chose "local" reads the browser's zone, named; the
  // UTC value stays on hover. UTC and relative times are the server's.
  function localTimes(root) {
    root.querySelectorAll("time[datetime][data-time=local]").forEach(function (el) {
      if (el.dataset.local) return;
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      el.textContent = d.toLocaleString(undefined, { timeZoneName: "short" });
      el.dataset.local = "1";
    });
  }
  // The browser's offset from UTC, for the audit filter's From and To: with
  // times shown in the local zone, the server reads them in it too.
  document.cookie = "handoff_zone=" + (-new Date().getTimezoneOffset()) + "; path=/; max-age=31536000; samesite=lax" +
    (location.protocol === "https:" ? "; secure" : "");
  // The queue's link to the content search carries what is typed in the
  // search box.
  document.addEventListener("input", function (e) {
    if (!e.target.matches || !e.target.matches("input[data-search]")) return;
    var link = e.target.form && e.target.form.querySelector("a[data-content-search]");
    if (!link) return;
    var q = e.target.value.trim();
    link.setAttribute("href", "/desk/operations" + (q ? "?q=" + encodeURIComponent(q) : ""));
  });
  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("button[data-copy]");
    if (!btn || !navigator.clipboard) return;
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src) return;
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = "Copy"; }, 1500);
    });
  });

  // The queue refreshes itself, but never under someone's hands: not while
  // a row is selected, a form in it is open, focus is in it, or the pointer
  // is on it — a refresh that swaps a row between a press and its release
  // swallows the click. A refresh already on its way when the person
  // reaches for a row is dropped, not swapped in.
  function inUse() {
    var results = document.getElementById("queue-results");
    return !!results && (paused() ||!!results.querySelector("input[data-select]:checked, details[open]") ||
      results.matches(":hover") || pointerDown ||
      (results.contains(document.activeElement) && document.activeElement !== document.body));
  }
  var pointerDown = false;
  document.addEventListener("pointerdown", function () { pointerDown = true; }, true);
  document.addEventListener("pointerup", function () { pointerDown = false; }, true);
  function isPoll(e) {
    var elt = e.detail && e.detail.elt;
    return !!elt && !!elt.hasAttribute && elt.hasAttribute("data-poll");
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (isPoll(e) && inUse()) e.preventDefault();
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (isPoll(e) && inUse()) e.detail.shouldSwap = false;
  });
  // The refresh can be paused, for as long as this tab lives; the line
  // beside it says how long ago the list was read.
  function paused() {
    try { return sessionStorage.getItem("handoff.pause") === "1"; } catch (e) { return false; }
  }
  function showRefresh(root) {
    root.querySelectorAll("button[data-poll-pause]").forEach(function (b) {
      b.hidden = false;
      b.setAttribute("aria-pressed", String(paused()));
      b.textContent = paused() ? "Resume refresh" : "Pause refresh";
    });
    ago();
  }
  function ago() {
    document.querySelectorAll("time[data-updated]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      var s = Math.max(0, Math.round((Date.now() - d.getTime()) / 1000));
      el.textContent = s < 60 ? s + " s ago" : Math.floor(s / 60) + " min ago";
      el.title = d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
    });
  }
  setInterval(ago, 5000);
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-poll-pause]");
    if (!b) return;
    try { sessionStorage.setItem("handoff.pause", paused() ? "0" : "1"); } catch (err) { return; }
    showRefresh(document);
  });
  // On a phone the queue's filters fold into "Filters", so the items come
  // first; the page is served with them open, for a browser without this.
  function foldFilters() {
    if (!window.matchMedia || !window.matchMedia("(max-width: 600px)").matches) return;
    document.querySelectorAll("details[data-filters]").forEach(function (d) { d.open = false; });
  }
  // "Select all N matching": the box that selects the page shows in the
  // header, and the offer of every matching item once the whole page is
  // selected; choosing it opens the bulk form. Without this file the offer
  // is always there, a plain checkbox.
  function selectAll() {
    var page = document.querySelector("input[data-select-page]");
    var offer = document.querySelector("[data-select-all]");
    if (!page || !offer) return;
    if (page.closest("label")) page.closest("label").hidden = false;
    var boxes = Array.prototype.slice.call(document.querySelectorAll("input[data-select]"));
    var matching = offer.querySelector("input[data-select-matching]");
    var every = boxes.length > 0 && boxes.every(function (b) { return b.checked; });
    page.checked = every;
    if (!every && matching) matching.checked = false;
    offer.hidden = !every;
  }
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (!t.matches) return;
    if (t.matches("input[data-select-page]")) {
      document.querySelectorAll("input[data-select]").forEach(function (b) { b.checked = t.checked; });
    }
    if (t.matches("input[data-select-matching]") && t.checked) {
      var bulk = document.querySelector('details[data-testid="bulk"]');
      if (bulk) bulk.open = true;
    }
    if (t.matches("input[data-select-page], input[data-select]")) selectAll();
  });
  document.addEventListener("click", function (e) {
    // A shift-click range sets boxes without a change event of their own.
    if (e.target.matches && e.target.matches("input[data-select]") && e.shiftKey) selectAll();
  });
  document.addEventListener("DOMContentLoaded", function () { localTimes(document); foldFilters(); showRefresh(document); selectAll(); });
  document.addEventListener("htmx:afterSwap", function (e) { localTimes(e.target); showRefresh(e.target); selectAll(); });
})();
