// squad dashboard: the live run log (server-sent events). No eval, no inline script.
(function () {
  "use strict";
  function line(event) {
    var parts = [];
    var time = (event.time || "").slice(11, 19);
    Object.keys(event).forEach(function (key) {
      if (key === "time" || key === "run_id" || key === "event") return;
      var value = event[key];
      if (value === null || value === undefined || value === "") return;
      if (typeof value === "object") value = JSON.stringify(value);
      value = String(value);
      if (value.length > 200) value = value.slice(0, 200) + "…";
      parts.push(key + "=" + value);
    });
    return [time, event.event || "", parts.join(" ")];
  }
  function follow(list) {
    var url = list.getAttribute("data-events");
    var refresh = list.getAttribute("data-refresh");
    var state = document.getElementById("log-state");
    // the page's words for the log's states (data-ended, ...), English when it gave none
    function say(name, english) {
      return (state && state.getAttribute("data-" + name)) || english;
    }
    var source = new EventSource(url);
    var timer = null;
    function refreshSoon() {
      if (!refresh || !window.htmx) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(function () { window.htmx.trigger(refresh, "refresh"); }, 150);
    }
    source.onmessage = null;
    var kinds = ["run_start", "run_resume", "run_end", "task_status", "node_start", "node_end",
      "model_call", "plan_written", "review", "approval", "tool_call", "limit", "message"];
    function onEvent(message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      var cells = line(event);
      var item = document.createElement("li");
      item.className = "ev-" + cells[1];
      var t = document.createElement("span"); t.className = "t"; t.textContent = cells[0];
      var k = document.createElement("span"); k.className = "k"; k.textContent = cells[1];
      var r = document.createElement("span"); r.className = "r"; r.textContent = cells[2];
      item.appendChild(t); item.appendChild(k); item.appendChild(r);
      // follow the end of the log, unless the reader scrolled up to read
      var following = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
      list.appendChild(item);
      if (following) list.scrollTop = list.scrollHeight;
      if (cells[1] !== "model_call") refreshSoon();
    }
    source.onmessage = onEvent;
    kinds.forEach(function (kind) { source.addEventListener(kind, onEvent); });
    source.addEventListener("end", function () {
      source.close();
      if (state) state.textContent = say("ended", "ended");
      refreshSoon();
    });
    source.onerror = function () {
      if (state) state.textContent = say("reconnecting", "reconnecting…");
    };
    source.onopen = function () { if (state) state.textContent = say("live", "live"); };
  }
  // the explorer marks the file its pane shows
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("#tree a[data-path]") : null;
    if (!link) return;
    document.querySelectorAll("#tree a[aria-current]").forEach(function (a) {
      a.removeAttribute("aria-current");
    });
    link.setAttribute("aria-current", "true");
  });
  // the review queue's "tick all" box ticks (or clears) every box of its form
  document.addEventListener("change", function (event) {
    var all = event.target;
    var form = all.getAttribute && all.getAttribute("data-tick-all");
    if (!form) return;
    document.querySelectorAll("#" + form + " input[name=id]").forEach(function (box) {
      box.checked = all.checked;
    });
  });
  // a filter box over collapsible sections: a section shows when its text holds the words
  // (opened, its other lines hidden unless its title matched); empty shows all as they were.
  // Delegated, so a box that htmx swapped in works too.
  var LINES = "li, p, tbody tr, .boot";
  function filter(box) {
    var items = document.querySelectorAll(box.getAttribute("data-filter"));
    var count = document.querySelector(box.getAttribute("data-filter-count") || "#none");
    var said = box.getAttribute("data-count-text") || "{shown} / {total}";
    var words = box.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (item) {
      var folds = item.tagName === "DETAILS";
      if (folds && !item.hasAttribute("data-was-open")) {
        item.setAttribute("data-was-open", item.open ? "1" : "");
      }
      var lines = item.querySelectorAll(LINES);
      lines.forEach(function (l) { l.removeAttribute("data-filtered"); });
      if (!words) {
        item.removeAttribute("data-filtered");
        if (folds) item.open = item.getAttribute("data-was-open") === "1";
        item.removeAttribute("data-was-open");
        shown += 1;
        return;
      }
      if (item.textContent.toLowerCase().indexOf(words) < 0) {
        item.setAttribute("data-filtered", "out");
        return;
      }
      shown += 1;
      item.removeAttribute("data-filtered");
      if (folds) item.open = true;
      var title = item.querySelector("summary");
      if (title && title.textContent.toLowerCase().indexOf(words) >= 0) return;
      lines.forEach(function (l) {
        if (l.querySelector(LINES)) return; // a line holding lines is judged by them
        if (l.textContent.toLowerCase().indexOf(words) < 0) l.setAttribute("data-filtered", "out");
      });
    });
    if (count) {
      count.textContent = words
        ? said.replace("{shown}", String(shown)).replace("{total}", String(items.length))
        : "";
    }
  }
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (box.hasAttribute && box.hasAttribute("data-filter")) filter(box);
  });
  // a link to something inside a closed section opens the section
  function reveal() {
    if (!window.location.hash) return;
    var target = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    for (var at = target; at; at = at.parentElement) {
      if (at.tagName === "DETAILS") at.open = true;
    }
    if (target) target.scrollIntoView();
  }
  // the run page's timeline grows while a task runs, between the log's events
  function tick() {
    setInterval(function () {
      var running = document.querySelector("#run-status.running, #run-status.pending");
      if (running && window.htmx && document.visibilityState === "visible") {
        window.htmx.trigger("#timeline", "refresh");
      }
    }, 5000);
  }
  function start() {
    if (document.getElementById("timeline")) tick();
    reveal();
    window.addEventListener("hashchange", reveal);
    document.querySelectorAll("[data-events]").forEach(follow);
    var open = new URLSearchParams(window.location.search).get("open");
    if (open && window.htmx) {
      var squad = window.location.pathname.split("/")[2];
      window.htmx.ajax("GET", "/squads/" + squad + "/preview?path=" + encodeURIComponent(open),
        "#pane");
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
