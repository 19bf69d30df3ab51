// agora serve's page script (served as /assets/app.js, embedded at build time; docs/serve.md "The page"):
// worlds and chats in the sidebar, the transcript (replies as sanitised Markdown, tool steps kept across a
// reload, bookkeeping behind a toggle), the agents panel's refresh (the panel itself: serve_agents.js), and the
// address (#/w/WORLD/c/CHAT) that names the view. Everything goes through the JSON API and the world's event stream.
"use strict";
const PAGE = 100;          // messages per page of the transcript
const MAX_ROWS = 400;      // elements the transcript keeps: past it, the far end is dropped (and fetched again on scroll)
// Events that say how a turn went rather than what happened: hidden unless the bookkeeping toggle is on.
const BOOKKEEPING = new Set(["turn-queued", "llm-start", "llm-done", "turn-end", "state-saved", "context-shrunk", "summary",
                              "memory-retrieved", "reflection", "memory-rated"]);
// Thread steps the chat stores (read back with its messages after a reload): shown once each.
const STORED = new Set(["tool-call", "tool-result", "llm-error", "llm-done", "summary"]);
const $ = (id) => document.getElementById(id);
// first: the oldest message shown; tail: null while the newest are shown, else the newest message shown (the
// bottom was dropped while reading older pages; live frames wait until scrolling down catches up); liveMax: the
// newest seq the stream brought meanwhile. steps: the keys of the thread steps shown. tokens: per agent, the
// tokens of the chat's calls (its stored usage when opened, then the live llm-done events). want: the chat the
// address asked for, until a view has tried to open it.
const st = { world: null, chat: null, agents: [], first: 0, tail: null, liveMax: 0, bySeq: new Map(), live: new Map(),
             stream: null, lastId: null, loading: false, gen: 0, opening: 0, want: null, steps: new Set(), tokens: new Map(),
             refresh: null, memOpen: new Set(), memories: new Map(), drafts: new Map() };

// ---- the API, with the token when the server needs one ----
function token() { return sessionStorage.getItem("agora-token"); }
function askToken() {
  return new Promise((resolve) => {
    $("token").style.display = "flex";
    $("token-input").focus();
    $("token-form").onsubmit = (e) => {
      e.preventDefault();
      sessionStorage.setItem("agora-token", $("token-input").value.trim());
      $("token").style.display = "none";
      resolve();
    };
  });
}
async function api(method, path, body) {
  for (;;) {
    const headers = { "Content-Type": "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status === 401) { await askToken(); continue; }
    const j = await r.json().catch(() => ({}));
    if (!r.ok) { status((j.error && j.error.message) || r.statusText); throw new Error(r.status); }
    return j;
  }
}
// A download of the text at path (the token goes in a header, so not a plain link).
async function download(path, name, type) {
  const headers = {};
  if (token()) headers.Authorization = "Bearer " + token();
  const r = await fetch(path, { headers });
  if (!r.ok) { status("export: " + r.status + " " + r.statusText); return; }
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([await r.text()], { type }));
  a.download = name;
  a.click();
}
function status(text) { $("status").textContent = text || ""; }
const enc = encodeURIComponent;
const wpath = () => "/api/worlds/" + enc(st.world);

// ---- rendering: one element per message or event, appended as they come ----
// A reply's Markdown as inert HTML: marked renders it, DOMPurify keeps no script, handler or javascript: URL
// (and the page's CSP would not run one anyway). Links open in a new tab, without this page as their opener.
if (window.DOMPurify) DOMPurify.addHook("afterSanitizeAttributes", (n) => {
  if (n.tagName === "A") { n.setAttribute("target", "_blank"); n.setAttribute("rel", "noopener noreferrer"); }
});
function markdown(text) { return DOMPurify.sanitize(marked.parse(text, { mangle: false, headerIds: false })); }
function span(cls, text) { const s = document.createElement("span"); s.className = cls; s.textContent = text; return s; }
function msgEl(m) {
  const d = document.createElement("div");
  d.className = "msg " + m.kind;
  d.dataset.seq = m.seq;
  const body = document.createElement("div");
  body.className = "body";
  if (m.kind === "agent" && window.marked && window.DOMPurify) { body.classList.add("md"); body.innerHTML = markdown(m.text); }
  else body.textContent = m.text;
  d.append(span("num", m.seq ? "#" + m.seq : ""), span("who", m.sender + ":"), body);
  return d;
}
// The world's budget (GET /api/worlds/{id} "budget"): the chat's spend against the limits, red once reached.
function showBudget(b) {
  const el = $("budget");
  if (!b || (!b.limit_tokens && !b.limit_usd)) { el.textContent = ""; el.className = ""; return; }
  const parts = [];
  if (b.limit_tokens) parts.push(b.tokens + " / " + b.limit_tokens + " tokens");
  if (b.limit_usd) parts.push("$" + b.usd.toFixed(4) + " / $" + b.limit_usd);
  el.textContent = "budget: " + parts.join(", ") + (b.reached ? " (reached: no new LLM call starts)" : "");
  el.className = b.reached ? "reached" : "";
}
function evText(e) {
  if (e.event === "turns-resumed") // replies re-run after a crash: a sentence, as in the terminal
    return "-- resumed " + e.replies + (e.replies === 1 ? " reply" : " replies") + " in flight at the crash (" + e.agents + ")";
  const skip = new Set(["type", "event", "world", "chat", "after_seq"]);
  const parts = Object.keys(e).filter((k) => !skip.has(k)).map((k) =>
    k + "=" + (typeof e[k] === "string" ? e[k] : JSON.stringify(e[k])));
  return "-- " + e.event + ": " + parts.join(" ");
}
function stepKey(e) {
  return JSON.stringify(Object.keys(e).filter((k) => !["type", "world", "chat", "after_seq"].includes(k)).sort().map((k) => [k, e[k]]));
}
// An event's line (NULL for a stored step already shown: the stream and a page read can both bring it).
// live: it came on the stream (its tokens count: the stored ones are in the chat's usage already).
function evEl(e, live) {
  let key = null;
  if (live && e.event === "llm-done") countTokens(e);
  if (live && e.event === "budget-exhausted") api("GET", wpath()).then((w) => showBudget(w.budget), () => {});
  if (STORED.has(e.event)) {
    key = stepKey(e);
    if (st.steps.has(key)) return null;
    st.steps.add(key);
  }
  const d = document.createElement("div");
  d.className = "ev ev-" + e.event + (BOOKKEEPING.has(e.event) ? " book" : " step") +
    (e.event === "llm-error" || e.error === true ? " error" : "");
  if (key) d.dataset.key = key;
  d.textContent = evText(e);
  return d;
}
function nearBottom() { const t = $("transcript"); return t.scrollHeight - t.scrollTop - t.clientHeight < 80; }
function forget(el) {
  if (el.dataset.seq) st.bySeq.delete(Number(el.dataset.seq));
  if (el.dataset.key) st.steps.delete(el.dataset.key);
  st.live.forEach((v, k) => { if (v === el) st.live.delete(k); });
  el.remove();
}
function firstSeq() { const m = $("transcript").querySelector(".msg[data-seq]:not([data-seq=''])"); return m ? Number(m.dataset.seq) : 0; }
function lastSeq() { const l = $("transcript").querySelectorAll(".msg[data-seq]:not([data-seq=''])"); return l.length ? Number(l[l.length - 1].dataset.seq) : 0; }
// Keeps the transcript at MAX_ROWS elements, dropping the oldest (at the bottom: stuck to the live end).
function trimTop() {
  const t = $("transcript"), h = t.scrollHeight;
  if (t.children.length <= MAX_ROWS) return;
  while (t.children.length > MAX_ROWS) forget(t.firstElementChild);
  st.first = firstSeq() || st.first;
  t.scrollTop -= h - t.scrollHeight;
}
// The same, dropping the newest (reading older pages): live frames then wait (st.tail).
function trimBottom() {
  const t = $("transcript");
  if (t.children.length <= MAX_ROWS) return;
  while (t.children.length > MAX_ROWS) forget(t.lastElementChild);
  st.live.forEach((el) => el.remove()); st.live.clear();
  st.tail = lastSeq();
}
function append(el) {
  if (st.tail !== null) return;
  const stick = nearBottom(), t = $("transcript");
  t.append(el);
  if (stick) { trimTop(); t.scrollTop = t.scrollHeight; }
  else if (t.children.length > MAX_ROWS) trimBottom(); // reading above: the newest wait for a scroll down
}
// The pictures (serve_graphs.js, loaded after this script) follow the chat shown and its live frames.
function pictures(what, o) { if (typeof graphs !== "undefined") return graphs[what](o); }
function addMessage(m) {
  scheduleRefresh(); // the chat's count in the sidebar, the agents' turns
  pictures("message", m);
  if (m.chat !== st.chat || st.bySeq.has(m.seq)) return;
  if (m.seq > st.liveMax) st.liveMax = m.seq;
  const live = st.live.get(m.sender);
  if (live) { live.remove(); st.live.delete(m.sender); }
  if (st.tail !== null) return;
  const el = msgEl(m);
  st.bySeq.set(m.seq, el);
  append(el);
}
function addChunk(e) {
  if (st.tail !== null || (e.chat && e.chat !== st.chat)) return; // a reply of another chat
  let el = st.live.get(e.agent);
  if (!el) {
    el = msgEl({ kind: "agent live", seq: "", sender: e.agent, text: "" });
    st.live.set(e.agent, el);
    append(el);
  }
  el.lastChild.textContent += e.text;
  if (nearBottom()) $("transcript").scrollTop = $("transcript").scrollHeight;
}
function addEvent(e) {
  if (e.event === "llm-chunk") return addChunk(e);
  if ((e.event === "llm-error" || e.event === "cancelled") && e.agent) {
    const live = st.live.get(e.agent); if (live) { live.remove(); st.live.delete(e.agent); }
  }
  if (e.event === "cancelled") { st.live.forEach((el) => el.remove()); st.live.clear(); }
  scheduleRefresh(); // state-saved too: a chat's count is read from storage, which has it once committed
  pictures("event", e);
  const d = e.chat && st.chat && e.chat !== st.chat ? null : evEl(e, true); // another chat's: not in this transcript
  if (d) append(d);
  if (["new-chat-created", "chat-reused", "chat-deleted", "chat-loaded", "title-updated"].includes(e.event)) {
    refreshChats().catch(() => {});
    if (e.event !== "title-updated") openCurrent().catch(() => {});
  }
}

// ---- the agents panel (serve_agents.js) is read again with the sidebar ----
// Events come in bursts (a thousand agents answering): the sidebar and the panel are read again at most
// every 300 ms.
function scheduleRefresh() {
  if (st.refresh || !st.world) return;
  st.refresh = setTimeout(async () => {
    st.refresh = null;
    try {
      const w = await api("GET", wpath());
      if (w.id === st.world) renderAgents(w);
      await refreshChats();
    } catch (e) { /* the status line says why */ }
  }, 300);
}

// ---- approvals ----
// An answer typed into an ask_human card and not sent yet, per world and request id: the card goes when
// the person switches worlds and is drawn again on the way back, with the draft.
function draftKey(id) { return st.world + "\n" + id; }
function showApproval(a) {
  if (document.querySelector('.approval[data-id="' + a.id + '"]')) return;
  const d = document.createElement("div");
  d.className = "approval";
  d.dataset.id = a.id;
  d.dataset.world = st.world;
  const what = document.createElement("div");
  if (a.question) what.textContent = a.agent + " asks: " + a.question;
  else { what.textContent = a.agent + " wants to call " + a.tool + " "; const c = document.createElement("code");
         c.textContent = JSON.stringify(a.args); what.append(c); }
  d.append(what);
  const key = draftKey(a.id);
  const answer = (allow, text) => api("POST", "/api/approvals/" + a.id, text === undefined ? { allow } : { allow, answer: text })
    .then(() => { st.drafts.delete(key); d.remove(); }, () => d.remove());
  if (a.question) {
    const inp = document.createElement("input"); inp.className = "answer";
    inp.value = st.drafts.get(key) || "";
    inp.addEventListener("input", () => st.drafts.set(key, inp.value));
    const b = document.createElement("button"); b.className = "approve"; b.textContent = "Answer";
    b.onclick = () => answer(true, inp.value);
    d.append(inp, b);
  } else {
    const yes = document.createElement("button"); yes.className = "approve"; yes.textContent = "Approve";
    const no = document.createElement("button"); no.className = "deny"; no.textContent = "Deny";
    yes.onclick = () => answer(true); no.onclick = () => answer(false);
    d.append(yes, " ", no);
  }
  $("approvals").append(d);
}
function endApproval(id) {
  st.drafts.delete(draftKey(id));
  const d = document.querySelector('.approval[data-id="' + id + '"]');
  if (d) d.remove();
}
// The pending requests as a re-read of the world lists them. A card still pending is kept as it is, not
// drawn again: an answer (or any input of the card) half typed keeps its text, focus and caret. A card
// goes only when its request is no longer pending (answered or withdrawn); ids are never reused. The
// cards of another world (the one just left) go, their drafts kept (st.drafts); this world's drafts of
// requests no longer pending are dropped.
function syncApprovals(list) {
  const pending = new Set(list.map((a) => String(a.id)));
  for (const d of [...$("approvals").children])
    if (d.dataset.world !== st.world || !pending.has(d.dataset.id)) d.remove();
  const mine = st.world + "\n";
  for (const k of [...st.drafts.keys()]) if (k.startsWith(mine) && !pending.has(k.slice(mine.length))) st.drafts.delete(k);
  list.forEach(showApproval);
}

// ---- the event stream: fetch (so that the token goes in a header), resumed with Last-Event-ID ----
async function follow(gen) {
  while (gen === st.gen) {
    try {
      const headers = { Accept: "text/event-stream" };
      if (token()) headers.Authorization = "Bearer " + token();
      if (st.lastId) headers["Last-Event-ID"] = st.lastId;
      const ctl = new AbortController();
      st.stream = ctl;
      const r = await fetch(wpath() + "/events", { headers, signal: ctl.signal });
      if (r.status === 401) { await askToken(); continue; }
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done || gen !== st.gen) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) { frame(buf.slice(0, i)); buf = buf.slice(i + 2); }
      }
    } catch (e) { if (gen !== st.gen) return; }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
function frame(text) {
  let id = null, data = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("data: ")) data = line.slice(6);
  }
  if (id) st.lastId = id;
  if (!data) return;
  const o = JSON.parse(data);
  if (o.type === "message") addMessage(o);
  else if (o.type === "event") addEvent(o);
  else if (o.type === "approval-request") showApproval(o);
  else if (o.type === "approval-ended") endApproval(o.id);
  else if (o.type === "resync") openCurrent().catch(() => {});
}

// ---- the address: #/w/WORLD/c/CHAT names the view, so that a link or a reload lands on it ----
function route() {
  const m = /^#\/w\/([^/]+)(?:\/c\/([^/]+))?/.exec(location.hash);
  try { return m ? { world: decodeURIComponent(m[1]), chat: m[2] ? decodeURIComponent(m[2]) : null } : {}; }
  catch (e) { return {}; }
}
function setRoute() {
  const h = st.world ? "#/w/" + enc(st.world) + (st.chat ? "/c/" + enc(st.chat) : "") : "";
  if (h && location.hash !== h) history.replaceState(null, "", h);
}
window.addEventListener("hashchange", () => {
  // A link is compared with the chat being opened (a link's still in flight), not only the one shown:
  // a second link back to the shown chat, before the first had opened, was taken for no change.
  const r = route(), shown = st.want || st.chat;
  if (r.world && (r.world !== st.world || (r.chat && r.chat !== shown))) openWorld(r.world, r.chat).catch(() => {});
});

// ---- worlds, chats, transcript ----
// The world the address names, else the first one named on the command line (primary), else the first.
async function loadWorlds() {
  const j = await api("GET", "/api/worlds");
  const ul = $("worlds");
  ul.textContent = "";
  for (const w of j.worlds) {
    const li = document.createElement("li");
    li.textContent = w.name; li.title = w.id; li.dataset.id = w.id;
    li.onclick = () => openWorld(w.id).catch(() => {});
    ul.append(li);
  }
  $("empty").hidden = j.worlds.length > 0;
  $("transcript").hidden = !j.worlds.length; // the empty database's note takes its place
  if (st.world || !j.worlds.length) return;
  const ids = j.worlds.map((w) => w.id), r = route();
  if (r.world && !ids.includes(r.world)) status("no world '" + r.world + "' here");
  const id = ids.includes(r.world) ? r.world : ids.includes(j.primary) ? j.primary : ids[0];
  await openWorld(id, id === r.world ? r.chat : null);
}
async function refreshChats() {
  if (!st.world) return;
  const j = await api("GET", wpath() + "/chats");
  const ul = $("chats");
  ul.textContent = "";
  for (const c of j.chats) {
    const li = document.createElement("li");
    li.title = c.id; li.dataset.id = c.id;
    li.append(span("name", c.title), span("count", " (" + c.message_count + ")"));
    if (c.current) { li.className = "on"; $("title").textContent = c.title; }
    li.onclick = () => chooseChat(c.id).catch(() => {});
    ul.append(li);
  }
}
async function openWorld(id, chat) {
  if (id !== st.world) {
    st.world = id; st.gen++; st.lastId = null; st.want = null;
    if (st.stream) st.stream.abort();
    for (const li of $("worlds").children) li.classList.toggle("on", li.dataset.id === id);
    await api("POST", wpath() + "/load"); // a GET never loads a world (its schedule would start)
    follow(st.gen);
  }
  await openCurrent(chat);
}
// Switching chats cancels the replies in flight in the current one (they belong to it): never silently.
// current: whether the asking view is still the newest (a newer one asks instead, if it still leaves).
async function mayLeave(what, current = () => true) {
  const w = await api("GET", wpath());
  if (!current()) return false;
  return !w.thinking || confirm(w.thinking + " repl" + (w.thinking > 1 ? "ies are" : "y is") +
    " still coming in this chat: " + what + " cancels " + (w.thinking > 1 ? "them" : "it") + ". Go on?");
}
async function chooseChat(id) {
  st.want = null; // a click is newer than a link still being opened
  if (id === st.chat || !(await mayLeave("switching chats"))) return;
  await api("POST", wpath() + "/chats/" + enc(id) + "/select");
  await openCurrent();
}
// Shows the world's current chat (want: a chat the address names, made current first).
async function openCurrent(want) {
  // A newer call (a click and its event) wins; an older one stops at its next await. A re-read with no
  // chat of its own (an event's, a resync's) takes over a link's wanted chat instead of dropping it.
  if (want) st.want = want;
  else want = st.want;
  const my = ++st.opening;
  let w = await api("GET", wpath());
  if (my !== st.opening) return;
  if (want && want !== w.current_chat) {
    try {
      if (await mayLeave("opening chat " + want, () => my === st.opening)) {
        await api("POST", wpath() + "/chats/" + enc(want) + "/select");
        w = await api("GET", wpath());
      }
    } catch (e) { /* no such chat: the current one is shown, the status line says why */ }
    if (my !== st.opening) return;
  }
  st.want = null;
  st.agents = (w.agents || []).map((a) => a.id);
  st.chat = w.current_chat;
  setRoute();
  renderAgents(w);
  showBudget(w.budget);
  st.bySeq.clear(); st.live.clear(); st.steps.clear(); st.tail = null; st.liveMax = 0;
  $("transcript").textContent = "";
  if (w.resumed) { const d = document.createElement("div"); d.className = "ev"; d.textContent = evText({ event: "turns-resumed", ...w.resumed }); $("transcript").append(d); }
  syncApprovals(w.approvals || []);
  await refreshChats();
  if (my !== st.opening || !st.chat) return;
  const j = await api("GET", wpath() + "/chats/" + enc(st.chat) + "/messages?steps=1&before=" + (w.last_seq + 1) + "&limit=" + PAGE);
  if (my !== st.opening) return;
  st.first = j.messages.length ? j.messages[0].seq : w.last_seq + 1;
  $("transcript").prepend(pageEls(j.messages, j.steps)); // frames that came meanwhile are newer: they stay below
  $("transcript").scrollTop = $("transcript").scrollHeight;
  pictures("load", st.chat)?.catch(() => {});
  // The chat's tokens per agent so far (the stored calls); live llm-done events add to them.
  const u = await api("GET", wpath() + "/chats/" + enc(st.chat) + "/usage");
  if (my !== st.opening) return;
  st.tokens = new Map(u.agents.map((a) => [a.agent, { in: a.input_tokens, out: a.output_tokens }]));
  renderAgents(w);
}
// A page of messages with the stored steps anchored among them, as one fragment.
function pageEls(msgs, steps) {
  const frag = document.createDocumentFragment();
  let k = 0;
  const stepsUpto = (seq) => {
    for (; steps && k < steps.length && steps[k].after_seq <= seq; k++) { const el = evEl(steps[k], false); if (el) frag.append(el); }
  };
  for (const m of msgs) {
    stepsUpto(m.seq - 1);
    if (!st.bySeq.has(m.seq)) { const el = msgEl(m); st.bySeq.set(m.seq, el); frag.append(el); }
    stepsUpto(m.seq);
  }
  stepsUpto(Infinity);
  return frag;
}
async function loadOlder() {
  if (st.loading || st.first <= 1 || !st.chat) return;
  st.loading = true;
  try {
    const gen = st.gen, chat = st.chat;
    const j = await api("GET", wpath() + "/chats/" + enc(chat) + "/messages?steps=1&before=" + st.first + "&limit=" + PAGE);
    if (gen !== st.gen || chat !== st.chat) return;
    const t = $("transcript"), h = t.scrollHeight;
    t.prepend(pageEls(j.messages, j.steps));
    st.first = j.messages.length ? j.messages[0].seq : 1;
    t.scrollTop += t.scrollHeight - h;
    trimBottom();
  } finally { st.loading = false; }
}
// Scrolling back down after the bottom was dropped: the next page, until the live end (and what the stream
// brought meanwhile, st.liveMax) is reached; from then on live frames are shown again.
async function loadNewer() {
  if (st.loading || st.tail === null || !st.chat) return;
  st.loading = true;
  try {
    const gen = st.gen, chat = st.chat;
    const j = await api("GET", wpath() + "/chats/" + enc(chat) + "/messages?steps=1&after=" + st.tail + "&limit=" + PAGE);
    if (gen !== st.gen || chat !== st.chat) return;
    $("transcript").append(pageEls(j.messages, j.steps));
    const last = j.messages.length ? j.messages[j.messages.length - 1].seq : st.tail;
    st.tail = j.messages.length < PAGE && last >= st.liveMax ? null : last;
    trimTop();
  } finally { st.loading = false; }
}
$("transcript").addEventListener("scroll", () => {
  const t = $("transcript");
  if (t.scrollTop < 40) loadOlder().catch(() => {});
  else if (st.tail !== null && t.scrollHeight - t.scrollTop - t.clientHeight < 40) loadNewer().catch(() => {});
});

// ---- buttons and the input box (with @ completion of agent names) ----
// Errors of these calls are shown on the status line (api() puts them there).
$("show-book").onchange = () => document.body.classList.toggle("show-book", $("show-book").checked);
$("new-chat").onclick = () => st.world && mayLeave("a new chat").then((go) => go &&
  api("POST", wpath() + "/chats").then(() => openCurrent())).catch(() => {});
$("delete-chat").onclick = () => st.chat && confirm("Delete this chat?") &&
  api("DELETE", wpath() + "/chats/" + enc(st.chat)).then(() => openCurrent()).catch(() => {});
$("cancel").onclick = () => st.world && api("POST", wpath() + "/cancel").catch(() => {});
$("export").onclick = async () => {
  if (!st.chat) return;
  const snap = await api("GET", wpath() + "/chats/" + enc(st.chat) + "/snapshot").catch(() => null);
  if (!snap) return;
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([JSON.stringify(snap, null, 2)], { type: "application/json" }));
  a.download = "chat-" + st.chat + ".json";
  a.click();
};
$("export-md").onclick = () => st.chat && download(wpath() + "/chats/" + enc(st.chat) + "/export?format=md",
  "chat-" + st.chat + ".md", "text/markdown").catch(() => {});

// ---- search (on the server): the results link to their message, shown in a page around it ----
$("search").addEventListener("keydown", (e) => {
  if (e.key === "Escape") { $("results").hidden = true; return; }
  if (e.key !== "Enter" || !st.chat) return;
  const q = $("search").value.trim();
  if (!q) { $("results").hidden = true; return; }
  api("GET", wpath() + "/chats/" + enc(st.chat) + "/search?limit=50&q=" + enc(q)).then((j) => {
    const ul = $("results");
    ul.textContent = "";
    for (const m of j.matches) {
      const li = document.createElement("li");
      li.dataset.seq = m.seq;
      li.append(span("num", "#" + m.seq + " "), span("who", m.sender + ": "), document.createTextNode(m.text.slice(0, 200)));
      li.onclick = () => { ul.hidden = true; jumpTo(m.seq).catch(() => {}); };
      ul.append(li);
    }
    if (!j.matches.length) ul.append(span("none", "nothing found"));
    else if (j.more) ul.append(span("none", "… more: narrow the search"));
    ul.hidden = false;
  }).catch(() => {});
});
// Shows the page of messages around seq (older and newer ones load on scroll, as ever) and marks it.
async function jumpTo(seq) {
  const gen = st.gen, chat = st.chat;
  const j = await api("GET", wpath() + "/chats/" + enc(chat) + "/messages?steps=1&after=" + Math.max(0, seq - PAGE / 2 - 1) + "&limit=" + PAGE);
  if (gen !== st.gen || chat !== st.chat) return;
  st.bySeq.clear(); st.live.clear(); st.steps.clear();
  const t = $("transcript");
  t.textContent = "";
  t.append(pageEls(j.messages, j.steps));
  st.first = j.messages.length ? j.messages[0].seq : seq;
  const last = j.messages.length ? j.messages[j.messages.length - 1].seq : seq;
  st.tail = j.messages.length < PAGE && last >= st.liveMax ? null : last;
  const el = st.bySeq.get(seq);
  if (el) { el.classList.add("hit"); el.scrollIntoView({ block: "center" }); }
}

$("say").onsubmit = (e) => {
  e.preventDefault();
  const text = $("input").value.trim();
  if (!text || !st.world) return;
  $("input").value = "";
  closeComplete();
  api("POST", wpath() + "/messages", { text }).catch(() => {});
};
function closeComplete() { $("complete").textContent = ""; }
function mentionAt() {
  const inp = $("input"), upto = inp.value.slice(0, inp.selectionStart);
  const m = /(^|\s)@([^\s@]*)$/.exec(upto);
  return m ? { prefix: m[2].toLowerCase(), start: upto.length - m[2].length } : null;
}
function pick(name) {
  const inp = $("input"), m = mentionAt();
  if (!m) return;
  inp.value = inp.value.slice(0, m.start) + name + " " + inp.value.slice(inp.selectionStart);
  inp.selectionStart = inp.selectionEnd = m.start + name.length + 1;
  closeComplete();
  inp.focus();
}
$("input").addEventListener("input", () => {
  const m = mentionAt();
  closeComplete();
  if (!m) return;
  const names = st.agents.filter((a) => a.toLowerCase().startsWith(m.prefix)).slice(0, 20);
  names.forEach((n, i) => {
    const li = document.createElement("li");
    li.textContent = "@" + n; if (!i) li.className = "on";
    li.onmousedown = (e) => { e.preventDefault(); pick(n); };
    $("complete").append(li);
  });
});
$("input").addEventListener("keydown", (e) => {
  const items = [...$("complete").children];
  if (!items.length) return;
  const on = items.findIndex((li) => li.classList.contains("on"));
  if (e.key === "Tab" || (e.key === "Enter" && on >= 0)) { e.preventDefault(); pick(items[on].textContent.slice(1)); }
  else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    items[on].classList.remove("on");
    items[(on + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length].classList.add("on");
  } else if (e.key === "Escape") closeComplete();
});
loadWorlds().catch(() => {});
