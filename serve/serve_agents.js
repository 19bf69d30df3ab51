// agora serve's agents panel (served as /assets/agents.js, embedded at build time; docs/serve.md "The page"):
// a card per agent (provider/model, turns used of the limit, phase, tokens, MCP tools, memories); a click mentions.
// Loaded before app.js, whose helpers (st, api, span, wpath, enc, scheduleRefresh) it calls once the page runs.
// A world may hold a thousand agents: only the cards in view (and a margin) are in the DOM, between two
// spacers that keep the scroll height, and a refresh replaces only the cards whose content changed.
"use strict";
const agentsPanel = (() => {
  const MARGIN = 15;       // cards kept above and below those in view
  // list: the world's agents as last read; limit: its turn limit; cards: id -> {el, sig} of the cards in
  // the DOM; shown: their ids in order; rowH: a card's height with its margin (measured on the first drawn).
  const p = { list: [], limit: 0, cards: new Map(), shown: [], rowH: 0, pending: false };
  const panel = document.getElementById("agents-panel"), box = document.getElementById("agents");
  const top = document.createElement("div"), bottom = document.createElement("div");
  top.className = bottom.className = "agents-spacer";

  // What a card shows: a card is built again only when this changes.
  function sig(a) {
    const t = st.tokens.get(a.id), m = a.memory === "stream" && st.memOpen.has(a.id);
    return JSON.stringify([a.phase, a.name, a.provider, a.model, a.turns, p.limit, t && t.in, t && t.out, a.memory,
      m, m ? st.memories.get(a.id) || [] : 0, a.mcp_tools]);
  }
  function card(a) {
    const d = document.createElement("div");
    d.className = "agent-card"; d.dataset.id = a.id; d.title = "mention @" + a.id;
    const ph = span("phase", a.phase); ph.dataset.phase = a.phase;
    const t = st.tokens.get(a.id);
    d.append(ph, span("name", a.name), document.createElement("br"),
      span("meta model", a.provider + (a.model ? " · " + a.model : "")), document.createElement("br"),
      span("meta turns", "turns " + a.turns + "/" + p.limit + (t ? " · tokens " + t.in + " in / " + t.out + " out" : "")));
    if (a.mcp_tools && a.mcp_tools.length)
      d.append(document.createElement("br"), span("meta tools", "tools " + a.mcp_tools.join(", ")));
    d.onclick = () => mention(a.id);
    if (a.memory === "stream") memoriesOf(d, a.id);
    return d;
  }
  // The agents in view plus the margin: [from, to) of p.list.
  function range() {
    const h = p.rowH || 64, y = Math.max(0, panel.scrollTop - box.offsetTop);
    const from = Math.max(0, Math.floor(y / h) - MARGIN);
    return [from, Math.min(p.list.length, Math.ceil((y + panel.clientHeight) / h) + MARGIN)];
  }
  // Puts the cards of the range in the DOM: unchanged ones stay (the same elements), changed ones are
  // replaced, those out of range go. reread: the memories shown are read again (a refresh, not a scroll).
  function draw(reread) {
    const [from, to] = range(), want = p.list.slice(from, to), keep = new Map();
    for (const a of want) {
      const s = sig(a), had = p.cards.get(a.id);
      keep.set(a.id, had && had.sig === s ? had : { el: card(a), sig: s });
      if (reread && a.memory === "stream" && st.memOpen.has(a.id)) readMemories(a.id);
    }
    const ids = want.map((a) => a.id);
    if (ids.length === p.shown.length && ids.every((id, i) => id === p.shown[i])) {
      for (const id of ids) { const had = p.cards.get(id).el, now = keep.get(id).el; if (had !== now) had.replaceWith(now); }
    } else box.replaceChildren(top, ...ids.map((id) => keep.get(id).el), bottom);
    p.cards = keep; p.shown = ids;
    const c = !p.rowH && ids.length && keep.get(ids[0]).el; // measured once laid out (a hidden panel has no height)
    if (c && c.offsetHeight) p.rowH = c.offsetHeight + (parseFloat(getComputedStyle(c).marginBottom) || 0);
    const h = p.rowH || 64;
    top.style.height = from * h + "px";
    bottom.style.height = (p.list.length - to) * h + "px";
  }
  // The world as GET /api/worlds/{id} says it: its agents' cards (only those that changed are drawn again).
  function render(w) {
    showMcp(w.mcp);
    p.list = w.agents || []; p.limit = w.turn_limit;
    draw(true);
  }
  panel.addEventListener("scroll", () => {
    if (p.pending) return;
    p.pending = true;
    requestAnimationFrame(() => { p.pending = false; draw(false); });
  });

  // A world whose MCP servers are not running here says why (GET /api/worlds/{id} "mcp").
  function showMcp(m) {
    document.getElementById("mcp-note").textContent = m && m.servers && !m.started ? "MCP servers not started: " + (m.reason || "no reason given") : "";
  }
  // An agent's memories (memory mode stream, docs/memory.md) under its card: a toggle, the list kept open
  // across refreshes (st.memOpen: the ids open, st.memories: the last read).
  function memoriesOf(d, id) {
    const open = st.memOpen.has(id), t = span("meta memories-toggle", open ? "hide memories" : "memories");
    t.onclick = (ev) => {
      ev.stopPropagation();
      if (open) st.memOpen.delete(id); else { st.memOpen.add(id); readMemories(id); }
      draw(false);
    };
    d.append(document.createElement("br"), t);
    if (!open) return;
    const list = document.createElement("ol");
    list.className = "memories";
    for (const m of st.memories.get(id) || [])
      list.append(Object.assign(document.createElement("li"), { textContent: m.time.slice(0, 16).replace("T", " ") +
        " · " + m.importance + " · " + m.sender + ": " + m.text, title: m.note ? "a note" : "message #" + m.seq }));
    d.append(list);
  }
  function readMemories(id) {
    if (!st.chat) return;
    api("GET", wpath() + "/chats/" + enc(st.chat) + "/agents/" + enc(id) + "/memory").then((j) => {
      const had = JSON.stringify(st.memories.get(id) || []), now = j.memories || [];
      st.memories.set(id, now);
      if (JSON.stringify(now) !== had) draw(false);
    }).catch(() => {});
  }
  return { render, state: p };
})();
function renderAgents(w) { agentsPanel.render(w); }
// An llm-done's tokens, on its agent's card (the chat's stored usage is read when it is opened).
function countTokens(e) {
  const t = st.tokens.get(e.agent) || { in: 0, out: 0 };
  t.in += Math.max(0, e.input_tokens || 0); t.out += Math.max(0, e.output_tokens || 0);
  st.tokens.set(e.agent, t);
}
function mention(id) {
  const inp = document.getElementById("input"), v = inp.value;
  inp.value = v + (v && !/\s$/.test(v) ? " " : "") + "@" + id + " ";
  inp.focus();
  inp.selectionStart = inp.selectionEnd = inp.value.length;
}
