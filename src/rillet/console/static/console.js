// rillet's console: renders /api/overview (inlined in the page at first), polls it
// every 2 s, and draws the server's throughput samples as sparklines. Key names
// are data: they only ever go into text nodes, never into markup.
"use strict";

const POLL_MS = 2000;
const HISTORY = 90; // points per sparkline: the server keeps as many (console/history.py)
const STALE_CONSUMER_MS = 60000;

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(n < 10 ? 1 : 0) : n) + " " + units[i];
}

function duration(ms) {
  if (ms === null || ms === undefined) return "–";
  const s = ms / 1000;
  if (s < 1) return ms + " ms";
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  return Math.floor(s / 86400) + " d " + Math.floor((s % 86400) / 3600) + " h";
}

function count(n) {
  if (n === null || n === undefined) return "–";
  return Number(n).toLocaleString("en-US");
}

function rate(n) {
  if (n === null || n === undefined) return "–";
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(1);
}

function drawSpark(svg, series) {
  const ns = "http://www.w3.org/2000/svg";
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const box = svg.viewBox.baseVal;
  const w = box && box.width ? box.width : 110;
  const h = box && box.height ? box.height : 24;
  const base = document.createElementNS(ns, "line");
  base.setAttribute("class", "base");
  base.setAttribute("x1", "0"); base.setAttribute("x2", String(w));
  base.setAttribute("y1", String(h - 0.5)); base.setAttribute("y2", String(h - 0.5));
  svg.append(base);
  if (series.length < 2) return;
  const max = Math.max(...series, 1);
  const step = w / (HISTORY - 1);
  const x0 = w - step * (series.length - 1);
  const points = series.map((v, i) => `${(x0 + i * step).toFixed(1)},${(h - 1 - (v / max) * (h - 3)).toFixed(1)}`);
  const area = document.createElementNS(ns, "polygon");
  area.setAttribute("points", `${x0.toFixed(1)},${h} ${points.join(" ")} ${w},${h}`);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", points.join(" "));
  svg.append(area, line);
}

function spark(series, wide) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", wide ? "spark wide" : "spark");
  svg.setAttribute("viewBox", wide ? "0 0 240 40" : "0 0 110 24");
  svg.setAttribute("preserveAspectRatio", "none");
  drawSpark(svg, series);
  return svg;
}

function lagClass(lag) {
  if (lag === null || lag === undefined) return "warn";
  if (lag > 10000) return "bad";
  if (lag > 0) return "warn";
  return "good";
}

function roleName(role) {
  return role === "slave" ? "replica" : role;
}

function renderSummary(data) {
  const s = data.server || {};
  document.getElementById("version").textContent =
    s.rillet_version ? `${s.rillet_version} · Redis ${s.version} compatible` : "";
  const summary = document.getElementById("summary");
  summary.replaceChildren();
  const items = [
    ["port", s.port], ["uptime", s.uptime_s === undefined ? null : duration(s.uptime_s * 1000)],
    ["clients", s.connected_clients], ["blocked", s.blocked_clients],
    ["memory", s.used_memory_human], ["role", roleName((data.replication || {}).role)],
  ];
  for (const [label, value] of items) {
    if (value === null || value === undefined) continue;
    summary.append(el("span", {}, label + " ", el("b", {}, value)));
  }
}

function renderReplication(data) {
  const box = document.getElementById("replication");
  box.replaceChildren();
  const r = data.replication || {};
  if (!r.role) { box.append(el("span", { class: "muted" }, "not visible to this user")); return; }
  const kv = el("dl", { class: "kv" });
  const row = (k, v, cls) => kv.append(el("dt", {}, k), el("dd", cls ? { class: cls } : {}, v));
  row("role", roleName(r.role));
  row("offset", count(r.offset));
  if (r.master) {
    row("master", `${r.master.host}:${r.master.port}`);
    row("link", r.master.link, r.master.link === "up" ? "good" : "bad");
    row("last I/O", r.master.last_io_s === null ? "–" : r.master.last_io_s + " s ago");
  }
  for (const replica of r.replicas || []) {
    row(`replica ${replica.addr}`,
      `${replica.state} · ${count(replica.behind_bytes)} B behind` +
      (replica.lag_s === null ? "" : ` · lag ${replica.lag_s} s`),
      replica.behind_bytes > 0 ? "warn" : "good");
  }
  if (r.role === "master" && !(r.replicas || []).length) row("replicas", "none");
  box.append(kv);
}

function renderDeadLetters(data) {
  const box = document.getElementById("dead-letters");
  box.replaceChildren();
  const dead = data.dead_letters || [];
  if (!dead.length) { box.append(el("span", { class: "muted" }, "No dead-letter streams.")); return; }
  const list = el("dl", { class: "kv" });
  for (const d of dead) list.append(el("dt", {}, d.key), el("dd", {}, count(d.length) + " entries"));
  box.append(list);
}

function renderGroup(group, now) {
  const consumers = el("div", { class: "consumers" });
  for (const c of group.consumers) {
    consumers.append(el("span", { class: "consumer" + (c.idle_ms > STALE_CONSUMER_MS ? " stale" : ""),
      title: `${c.pending} pending, idle ${duration(c.idle_ms)}` },
      `${c.name} · ${count(c.pending)} pending · idle ${duration(c.idle_ms)}`));
  }
  if (!group.consumers.length) consumers.append(el("span", { class: "muted" }, "no consumers"));
  const cell = (label, value, cls) => el("div", {}, el("span", { class: "label" }, label),
    el("span", { class: "value" + (cls ? " " + cls : "") }, value));
  return el("div", { class: "group", "data-group": group.name },
    el("div", {}, el("span", { class: "label" }, "group"), el("span", { class: "name" }, group.name)),
    cell("lag", group.lag === null ? "unknown" : count(group.lag), lagClass(group.lag)),
    cell("pending", count(group.pending), group.pending ? "warn" : ""),
    cell("oldest pending", group.oldest_pending_idle_ms === null ? "–" : duration(group.oldest_pending_idle_ms)),
    cell("last delivered", el("span", { class: "id" }, group.last_delivered_id || "–")),
    el("div", {}, el("span", { class: "label" }, "consumers"), consumers));
}

let latest = null;

function renderStreams(data) {
  const body = document.querySelector("#streams tbody");
  body.replaceChildren();
  const all = data.streams || [];
  const wanted = document.getElementById("filter").value.trim().toLowerCase();
  const streams = wanted ? all.filter((s) => s.key.toLowerCase().includes(wanted)) : all;
  document.getElementById("no-streams").hidden = streams.length > 0;
  document.getElementById("stream-count").textContent =
    `(${wanted ? streams.length + " of " : ""}${all.length})`;
  for (const s of streams) {
    const series = s.rates || [];
    const last = series.length ? series[series.length - 1] : null;
    body.append(el("tr", { class: "stream", "data-stream": s.key },
      el("td", { class: "key" }, s.key, s.db ? el("span", { class: "muted" }, ` db${s.db}`) : null),
      el("td", { class: "num" }, count(s.length)),
      el("td", { class: "num" }, bytes(s.memory)),
      el("td", { class: "id" }, s.first_id || "–"),
      el("td", { class: "id" }, s.last_id || "–"),
      el("td", { class: "num" }, duration(s.oldest_age_ms)),
      el("td", { class: "num" }, last === null ? "–" : rate(last)),
      el("td", {}, spark(series, false))));
    if (s.groups.length) {
      const groups = el("td", { colspan: "8" });
      for (const g of s.groups) groups.append(renderGroup(g, data.time_ms));
      body.append(el("tr", { class: "groups" }, groups));
    }
  }
}

function render(data) {
  latest = data;
  renderSummary(data);
  const series = data.ops_rates || [];
  const ops = series.length ? series[series.length - 1] : (data.server || {}).ops_per_sec;
  document.getElementById("ops").textContent = rate(ops === undefined ? null : ops);
  drawSpark(document.getElementById("ops-spark"), series);
  renderReplication(data);
  renderDeadLetters(data);
  renderStreams(data);
  document.getElementById("status").textContent =
    "updated " + new Date(data.time_ms).toLocaleTimeString();
}

async function poll() {
  try {
    const response = await fetch("api/overview", { cache: "no-store", credentials: "same-origin" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    render(await response.json());
  } catch (error) {
    document.getElementById("status").textContent = "not updating: " + error.message;
  }
  setTimeout(poll, POLL_MS);
}

document.getElementById("filter").addEventListener("input", () => { if (latest) renderStreams(latest); });

const initial = JSON.parse(document.getElementById("initial").textContent);
if (initial) render(initial);
setTimeout(poll, initial ? POLL_MS : 0);
