// wwt ui — hand-written, no framework, no network beyond this server. Archived text is only ever set as
// text (textContent / text nodes), never parsed as HTML.
"use strict";

const view = () => document.getElementById("view");
const FOLDED = new Set(["tool_call", "tool_result", "thinking"]);
const LONG_CHARS = 4000;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

// Text with every term (case-insensitive) wrapped in <mark>, as DOM nodes.
function marked(text, terms) {
  const frag = document.createDocumentFragment();
  const usable = (terms || []).filter((t) => t && t.length >= 2).slice(0, 40);
  if (!usable.length) { frag.append(text); return frag; }
  const re = new RegExp("(" + usable.map(escapeRegExp).join("|") + ")", "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

function when(iso) {
  if (!iso) return "?";
  const d = new Date(iso);
  if (isNaN(d)) return iso.slice(0, 16);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

async function api(path) {
  const res = await fetch(path, { credentials: "same-origin", headers: { accept: "application/json" } });
  let body = null;
  try { body = await res.json(); } catch (e) { body = { error: `HTTP ${res.status}` }; }
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    const area = el("textarea", { class: "offscreen" }, text);
    document.body.append(area); area.select(); document.execCommand("copy"); area.remove();
  }
  if (button) { const old = button.textContent; button.textContent = "copied"; setTimeout(() => { button.textContent = old; }, 1200); }
}

function nav(url) { history.pushState({}, "", url); render(); }

function notice(text, cls) { return el("div", { class: "notice " + (cls || ""), role: "status" }, text); }

// ------------------------------------------------------------------------------------------ search

let selected = -1;

function selectCard(index) {
  const cards = [...document.querySelectorAll(".hit-card")];
  if (!cards.length) return;
  selected = Math.max(0, Math.min(cards.length - 1, index));
  cards.forEach((c, i) => c.classList.toggle("selected", i === selected));
  cards[selected].scrollIntoView({ block: "nearest" });
}

async function renderSearch(params) {
  const q = params.get("q") || "";
  document.getElementById("q").value = q;
  for (const name of ["project", "agent", "since", "until"]) {
    const input = document.getElementById("f-" + name);
    if (input) input.value = params.get(name) || "";
  }
  if (!q.trim()) { view().replaceChildren(el("p", { class: "dim" }, "Type a question — Korean, English or an identifier — and press Enter.")); return; }
  view().replaceChildren(el("p", { class: "dim", id: "searching" }, "searching…"));
  const query = new URLSearchParams();
  for (const [k, v] of params) if (v) query.set(k, v);
  let data;
  try { data = await api("/api/search?" + query); } catch (e) { view().replaceChildren(notice(e.message, "error")); return; }
  const out = [];
  if (data.notice) out.push(notice(data.notice));
  if (data.words_only) out.push(notice(data.words_only));
  if (!data.results.length) {
    out.push(notice(`Nothing relevant found for “${data.query}”.`, "empty"));
  } else if (data.weak) {
    out.push(notice(data.weak_notice || "nothing in memory clearly answers this — these are only the closest matches", "weak"));
  }
  out.push(el("p", { class: "dim", id: "result-count" }, `${data.results.length} session(s)`));
  data.results.forEach((hit, i) => {
    const href = (chunk) => `/session/${encodeURIComponent(hit.session_id)}?` + new URLSearchParams(
      chunk ? { chunk: chunk.chunk_id, q: data.query } : { q: data.query });
    const card = el("section", { class: "hit-card", "data-index": i, "data-session": hit.session_id },
      el("h2", {}, el("a", { href: href(hit.chunks[0]), "data-nav": true, class: "open" }, hit.title || hit.session_id)),
      el("div", { class: "hit-meta" },
        `${hit.project || "(no project)"}${hit.git_branch ? " @" + hit.git_branch : ""} · ${hit.agent} · ${when(hit.started_at)} · score ${hit.score.toFixed(3)}`),
      hit.chunks.map((chunk) => el("a", { class: "excerpt", href: href(chunk), "data-nav": true },
        marked(chunk.text, data.terms))),
      hit.resume_line ? el("div", { class: "hit-meta" }, "resume: ", el("code", {}, hit.resume_line), " ",
        el("button", { type: "button", onclick: (ev) => copy(hit.resume_line, ev.target) }, "copy")) : null);
    out.push(card);
  });
  view().replaceChildren(...out);
  selected = -1;
  if (data.results.length) selectCard(0);
}

// ------------------------------------------------------------------------------------------ reader

function inHit(m, hit) {
  return hit && m.session_id === hit.session_id && m.seq >= hit.first_seq && m.seq <= hit.last_seq;
}

function mentions(text, terms) {
  const lower = (text || "").toLowerCase();
  return terms.some((t) => lower.includes(t));
}

// The messages of the hit's chunk that say one of the query's words (else the chunk's first message).
function hitSeqs(messages, hit, terms) {
  const range = messages.filter((m) => inHit(m, hit));
  const saying = range.filter((m) => mentions(m.text, terms));
  return new Set((saying.length ? saying : range.slice(0, 1)).map((m) => m.session_id + "#" + m.seq));
}

function messageNode(m, agent, hits, terms) {
  const isHit = hits ? hits.has(m.session_id + "#" + m.seq) : false;
  const kind = [m.kind !== "text" ? m.kind : "", m.tool_name || "", m.subagent ? "(subagent)" : ""].filter(Boolean).join(" ");
  const meta = el("div", { class: "meta" },
    el("span", { class: "role role-" + m.role }, m.role), kind ? " " : "", kind ? el("span", { class: "kind" }, kind) : "",
    ` · ${when(m.timestamp)} · ${agent} · #${m.seq}`);
  const text = m.text || "";
  const cut = m.chars > text.length ? `\n… (${m.chars - text.length} more characters: export the session for all)` : "";
  let body;
  if (FOLDED.has(m.kind)) {
    const first = text.trim().split("\n", 1)[0].slice(0, 120) || m.kind;
    body = el("details", { class: "fold" }, el("summary", {}, first), el("pre", {}, text + cut));
  } else if (text.length > LONG_CHARS) {
    body = el("div", {}, el("pre", { class: "text" }, isHit ? marked(text.slice(0, 1500), terms) : text.slice(0, 1500), "…"),
      el("details", { class: "fold" }, el("summary", {}, `show all (${m.chars} characters)`), el("pre", { class: "text" }, text + cut)));
  } else {
    body = el("pre", { class: "text" }, isHit ? marked(text, terms) : text, cut);
  }
  return el("article", { class: "msg" + (isHit ? " hit" : ""), id: `m-${m.seq}`, "data-seq": m.seq,
    "data-session": m.session_id, tabindex: isHit ? "-1" : null },
    el("button", { type: "button", class: "copy", title: "copy this message", onclick: (ev) => copy(m.text, ev.target) }, "copy"),
    meta, body);
}

async function renderSession(sid, params) {
  const query = new URLSearchParams();
  for (const k of ["chunk", "start", "limit"]) if (params.get(k)) query.set(k, params.get(k));
  const terms = (params.get("q") || "").toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((t) => t.length >= 2);
  view().replaceChildren(el("p", { class: "dim" }, "loading…"));
  let data;
  try { data = await api(`/api/session/${encodeURIComponent(sid)}?` + query); } catch (e) { view().replaceChildren(notice(e.message, "error")); return; }
  const hits = data.hit ? hitSeqs(data.messages, data.hit, terms) : null;
  const list = el("div", { id: "messages" }, data.messages.map((m) => messageNode(m, data.agent, hits, terms)));
  const exportBase = `/api/export/${encodeURIComponent(data.session_id)}?format=`;
  const toolbar = el("div", { class: "toolbar" },
    el("button", { type: "button", onclick: () => goBack() }, "← back"),
    data.resume_line ? el("button", { type: "button", id: "copy-resume", onclick: (ev) => copy(data.resume_line, ev.target) }, "copy resume command") : null,
    el("a", { href: exportBase + "html", download: true, id: "export-html" }, "export HTML"),
    el("a", { href: exportBase + "md", download: true, id: "export-md" }, "export Markdown"));
  const facts = el("dl", { class: "facts" }, data.facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  let first = data.start, next = data.next_start;
  const earlier = el("button", { type: "button", id: "load-earlier", class: "pager" }, "load earlier messages");
  const more = el("button", { type: "button", id: "load-more", class: "pager" }, "load more messages");
  const page = async (start, limit) => {
    const q = new URLSearchParams({ start, limit });
    return api(`/api/session/${encodeURIComponent(data.session_id)}?` + q);
  };
  earlier.addEventListener("click", async () => {
    const start = Math.max(0, first - data.limit);
    const got = await page(start, first - start);
    list.prepend(...got.messages.map((m) => messageNode(m, data.agent, null, terms)));
    first = start; earlier.hidden = first <= 0;
  });
  more.addEventListener("click", async () => {
    const got = await page(next, data.limit);
    list.append(...got.messages.map((m) => messageNode(m, data.agent, null, terms)));
    next = got.next_start; more.hidden = next >= data.total;
  });
  earlier.hidden = first <= 0;
  more.hidden = next >= data.total;
  view().replaceChildren(el("h1", {}, data.title || data.session_id), facts, toolbar,
    el("p", { class: "dim" }, `${data.total} messages`), earlier, list, more);
  const target = list.querySelector(".msg.hit");
  if (target) { target.scrollIntoView({ block: "center" }); target.focus({ preventScroll: true }); }
  else window.scrollTo(0, 0);
  document.body.dataset.ready = "session";
}

function goBack() {
  if (history.state && history.state.inApp && history.length > 1) history.back();
  else nav("/");
}

// ------------------------------------------------------------------------------------------ timeline, status

async function renderTimeline(params) {
  let data;
  try { data = await api("/api/timeline?" + new URLSearchParams(params.get("project") ? { project: params.get("project") } : {})); }
  catch (e) { view().replaceChildren(notice(e.message, "error")); return; }
  const pick = el("select", { id: "timeline-project", onchange: (ev) => nav("/timeline" + (ev.target.value ? "?" + new URLSearchParams({ project: ev.target.value }) : "")) },
    el("option", { value: "" }, "all projects"), data.projects.map((p) => el("option", { value: p, selected: p === data.project }, p)));
  const days = data.days.map((day) => el("section", { class: "day" }, el("h2", {}, day.day),
    el("ul", {}, day.sessions.map((s) => el("li", {},
      el("span", { class: "dim" }, when(s.started_at).slice(11) + " "),
      el("a", { href: `/session/${encodeURIComponent(s.session_id)}`, "data-nav": true }, s.title || s.session_id),
      el("span", { class: "dim" }, ` · ${s.agent} · ${s.project || "(no project)"}`))))));
  view().replaceChildren(el("h1", {}, "Timeline"), el("p", {}, "project: ", pick, ` — ${data.sessions} session(s)`), ...days);
}

async function renderStatus() {
  let data;
  try { data = await api("/api/status"); } catch (e) { view().replaceChildren(notice(e.message, "error")); return; }
  const rows = data.agents.map((a) => el("tr", {}, el("td", {}, a.agent), el("td", { class: "num" }, a.sessions), el("td", { class: "num" }, a.chunks || 0)));
  view().replaceChildren(el("h1", {}, "Status"),
    el("table", { id: "agents" }, el("tr", {}, el("th", {}, "agent"), el("th", {}, "sessions"), el("th", {}, "chunks")), rows),
    el("dl", { class: "facts" },
      el("dt", {}, "sessions"), el("dd", {}, `${data.sessions} (+${data.subagent_sessions} subagent)`),
      el("dt", {}, "messages"), el("dd", {}, data.messages),
      el("dt", {}, "vectors pending"), el("dd", { id: "pending" }, `${data.pending_vectors} of ${data.chunks} chunks` + (data.backfill_paused ? " (paused)" : "")),
      el("dt", {}, "waiting to be ingested"), el("dd", {}, data.queue_pending),
      el("dt", {}, "last ingest"), el("dd", {}, when(data.last_ingest)),
      el("dt", {}, "data dir"), el("dd", {}, data.home)));
}

// ------------------------------------------------------------------------------------------ router, keys

async function render() {
  const url = new URL(location.href);
  const path = url.pathname;
  document.body.dataset.ready = "";
  if (path.startsWith("/session/")) await renderSession(decodeURIComponent(path.slice("/session/".length)), url.searchParams);
  else if (path === "/timeline") await renderTimeline(url.searchParams);
  else if (path === "/status") await renderStatus();
  else await renderSearch(url.searchParams);
  if (!document.body.dataset.ready) document.body.dataset.ready = path === "/" || path === "/search" ? "search" : path.slice(1);
}

document.addEventListener("click", (ev) => {
  const link = ev.target.closest("a[data-nav]");
  if (!link || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  history.replaceState({ ...(history.state || {}), scrollY: window.scrollY }, "");
  history.pushState({ inApp: true }, "", link.getAttribute("href"));
  render();
});

window.addEventListener("popstate", () => render());

document.addEventListener("keydown", (ev) => {
  const typing = ev.target.matches && ev.target.matches("input, select, textarea");
  if (ev.key === "/" && !typing) { ev.preventDefault(); const q = document.getElementById("q"); q.focus(); q.select(); return; }
  if (ev.key === "Escape") {
    if (typing) { ev.target.blur(); return; }
    if (location.pathname !== "/" && location.pathname !== "/search") { ev.preventDefault(); goBack(); }
    return;
  }
  if (typing) return;
  const cards = document.querySelectorAll(".hit-card");
  if (!cards.length) return;
  if (ev.key === "ArrowDown" || ev.key === "j") { ev.preventDefault(); selectCard(selected + 1); }
  else if (ev.key === "ArrowUp" || ev.key === "k") { ev.preventDefault(); selectCard(selected - 1); }
  else if (ev.key === "Enter" && selected >= 0) { ev.preventDefault(); cards[selected].querySelector("a.open").click(); }
});

async function fillFilters() {
  try {
    const [projects, status] = await Promise.all([api("/api/projects"), api("/api/status")]);
    const project = document.getElementById("f-project");
    projects.projects.forEach((p) => project.append(el("option", { value: p }, p)));
    const agent = document.getElementById("f-agent");
    status.agents.forEach((a) => agent.append(el("option", { value: a.platform }, a.agent)));
    const params = new URL(location.href).searchParams;
    project.value = params.get("project") || ""; agent.value = params.get("agent") || "";
  } catch (e) { /* no data yet: the page says so */ }
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = new FormData(ev.target);
    const params = new URLSearchParams();
    for (const [k, v] of form) if (v) params.set(k, v);
    history.pushState({ inApp: true }, "", "/search?" + params);
    document.getElementById("q").blur();
    render();
  });
  fillFilters();
  render();
});
