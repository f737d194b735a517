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
      if (state) state.textContent = "ended";
      refreshSoon();
    });
    source.onerror = function () { if (state) state.textContent = "reconnecting…"; };
    source.onopen = function () { if (state) state.textContent = "live"; };
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
  function start() {
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
