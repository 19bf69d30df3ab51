// agora serve's pictures (served as /assets/graphs.js, embedded at build time; docs/serve.md "The page"),
// drawn with d3 (Debian's node-d3, /assets/d3.js): the conversation graph (who mentions whom: an edge's
// width is its messages, a node's size its tokens), tokens per agent over the chat, and for a world on a
// virtual clock a timeline of simulated time with the schedule's deliveries. The chat's history comes once
// from GET …/chats/{chat}/graph when a chat is shown; the page's live frames (app.js calls graphs.message
// and graphs.event) add to it, so a picture costs the server one read however long the chat grows.
"use strict";
const graphs = (() => {
  const MAX_NODES = 60;    // nodes drawn: the server sends the 50 busiest, live frames may add a few
  const MAX_POINTS = 300;  // points of tokens over time: past it every other one is dropped
  const MENTION = /(^|[^A-Za-z0-9._-])@([A-Za-z0-9._-]+)/g; // as agents/mention.c reads "@name" anywhere
  // nodes: id -> {id, messages, tokens, x, y}; edges: "from\nto" -> {source, target, messages};
  // series: {ids, seqs, values[i][p]}; ticks: the timeline's [{seq, sim_ms, fire}] (null: real clock).
  // stale: the shown chat's history is not read yet (it is, once the pane shows); queue: the messages that
  // came while it was being read (those after its last_seq are added once it is). missed: an llm-done came
  // while it was being read, and the read may or may not hold its tokens (the call is stored with the next
  // message saved): the history is read again once a state-saved covers the message after it (need: that
  // message's seq, 0 until it comes). An llm-done has no seq of its own to tell.
  const g = { chat: null, gen: 0, nodes: new Map(), edges: new Map(), more: 0, series: null, ticks: null,
              lastSeq: 0, stale: true, queue: null, missed: null, drawn: 0, pending: false };
  let svgGraph = null, sim = null;
  const shown = () => document.body.classList.contains("show-graphs");
  const W = (el) => Math.max(200, el.clientWidth), H = (el) => Math.max(160, el.clientHeight - 18);

  // ---- the data: the stored chat once, then the live frames ----
  // A chat is shown: its history is read now if the pane shows, else when it is first shown.
  async function load(chat) {
    g.chat = chat; g.stale = true; g.series = null; g.gen++;
    if (shown()) await fetchChat();
  }
  async function fetchChat() {
    const my = ++g.gen, chat = g.chat;
    g.nodes.clear(); g.edges.clear(); g.series = null; g.ticks = null; g.more = 0; g.stale = false; g.queue = chat ? [] : null;
    g.missed = null;
    if (sim) { sim.stop(); sim = null; }
    if (!chat) return draw();
    const j = await api("GET", wpath() + "/chats/" + enc(chat) + "/graph").catch((e) => { if (my === g.gen) g.stale = true; throw e; });
    if (my !== g.gen) return;
    g.lastSeq = j.last_seq;
    for (const n of j.nodes) g.nodes.set(n.id, { id: n.id, messages: n.messages, tokens: n.input_tokens + n.output_tokens });
    for (const e of j.edges) g.edges.set(e.from + "\n" + e.to, { source: e.from, target: e.to, messages: e.messages });
    g.more = j.more_nodes;
    const ids = j.tokens.agents.filter((a) => a.tokens.some((v) => v > 0)).map((a) => a.id);
    g.series = { ids, seqs: j.tokens.seqs.slice(), values: j.tokens.agents.filter((a) => ids.includes(a.id)).map((a) => a.tokens.slice()) };
    g.ticks = j.timeline ? j.timeline.ticks : null;
    const q = g.queue;
    g.queue = null;
    q.forEach(message);
    draw();
  }
  function node(id) {
    let n = g.nodes.get(id);
    if (!n && g.nodes.size < MAX_NODES) { n = { id, messages: 0, tokens: 0 }; g.nodes.set(id, n); }
    else if (!n) g.more++;
    return n;
  }
  // A message of the shown chat: its sender's count, an edge to every agent it names, its simulated time.
  function message(m) {
    if (m.chat !== g.chat) return;
    if (g.missed && !g.missed.need) g.missed.need = m.seq;
    if (g.queue) return g.queue.push(m);
    if (!g.series || m.seq <= g.lastSeq) return;
    g.lastSeq = m.seq;
    const from = node(m.sender);
    if (from) from.messages++;
    const named = new Set();
    for (const x of m.text.matchAll(MENTION)) named.add(x[2].toLowerCase());
    for (const to of named) {
      if (to === m.sender || !(st.agents.includes(to) || g.nodes.has(to)) || !from || !node(to)) continue;
      const k = m.sender + "\n" + to, e = g.edges.get(k);
      if (e) e.messages++; else g.edges.set(k, { source: m.sender, target: to, messages: 1 });
    }
    if (m.sim_time) {
      (g.ticks = g.ticks || []).push({ seq: m.seq, sim_ms: Date.parse(m.sim_time), fire: m.sender === "world" });
      if (g.ticks.length > 1500) { // as the server cuts it: the last 500 of the schedule's, the last 500 others
        const left = [500, 500];
        g.ticks = g.ticks.reverse().filter((k) => left[k.fire ? 1 : 0]-- > 0).reverse();
      }
    }
    if (g.series && m.seq > (g.series.seqs[g.series.seqs.length - 1] || 0)) point(m.seq);
    soon();
  }
  // An llm-done of the shown chat: its agent's tokens, in the graph and over time. A state-saved that covers
  // what a read may have missed reads the history again. (A chat-loaded, sent after an edit, a cut or a
  // retry, shows the chat again: app.js's openCurrent calls load, which reads it.)
  function event(e) {
    if (e.chat && e.chat !== g.chat) return;
    if (e.event === "state-saved" && g.missed && g.missed.need && e.seq >= g.missed.need) return again();
    if (e.event !== "llm-done") return;
    if (g.queue) g.missed = g.missed || { need: 0 };
    if (!g.series) return;
    const t = Math.max(0, e.input_tokens || 0) + Math.max(0, e.output_tokens || 0);
    const n = node(e.agent);
    if (n) n.tokens += t;
    const s = g.series;
    let i = s.ids.indexOf(e.agent);
    if (i < 0 && s.ids.length < 8 && t > 0) { s.ids.push(e.agent); s.values.push(s.seqs.map(() => 0)); i = s.ids.length - 1; }
    if (i >= 0 && s.seqs.length) s.values[i][s.seqs.length - 1] += t;
    soon();
  }
  // The shown chat's history is read again: now if the pane shows, else when it is next shown.
  function again() {
    if (!g.chat) return;
    if (shown()) fetchChat().catch(() => {}); else g.stale = true;
  }
  // A new point of tokens over time at seq, carrying every agent's sum forward.
  function point(seq) {
    const s = g.series;
    s.seqs.push(seq);
    s.values.forEach((v) => v.push(v.length ? v[v.length - 1] : 0));
    if (s.seqs.length > MAX_POINTS) {
      const keep = (_, k) => k % 2 === 1 || k === s.seqs.length - 1;
      s.seqs = s.seqs.filter(keep); s.values = s.values.map((v) => v.filter(keep));
    }
  }
  // Frames come in bursts: the pictures are drawn again at most every 250 ms.
  function soon() {
    if (g.pending || !shown()) return;
    g.pending = true;
    setTimeout(() => { g.pending = false; draw(); }, 250);
  }

  // ---- the pictures ----
  function draw() {
    if (!shown() || !window.d3) return;
    drawGraph(); drawTokens(); drawTimeline();
    g.drawn++;
    document.getElementById("graphs").dataset.drawn = g.drawn;
  }
  function drawGraph() {
    const box = document.getElementById("graph-conv");
    const w = W(box), h = H(box);
    if (!svgGraph) {
      svgGraph = d3.select(box).append("svg");
      svgGraph.append("g").attr("class", "links");
      svgGraph.append("g").attr("class", "nodes");
    }
    svgGraph.attr("width", w).attr("height", h);
    const nodes = [...g.nodes.values()], links = [...g.edges.values()].map((e) => ({ ...e }));
    const maxTok = d3.max(nodes, (n) => n.tokens) || 1, maxMsg = d3.max(links, (l) => l.messages) || 1;
    // the more nodes, the smaller the largest: fifty of them still fit the pane
    const r = d3.scaleSqrt().domain([0, maxTok]).range([3, Math.max(6, Math.min(22, 80 / Math.sqrt(nodes.length || 1)))]), wd = d3.scaleLinear().domain([1, maxMsg]).range([1, 8]);
    const line = svgGraph.select("g.links").selectAll("line").data(links, (l) => l.source + "\n" + l.target)
      .join("line").attr("stroke", "#9bb3e0").attr("stroke-opacity", 0.8)
      .attr("data-from", (l) => l.source).attr("data-to", (l) => l.target).attr("data-messages", (l) => l.messages)
      .attr("stroke-width", (l) => wd(l.messages));
    line.selectAll("title").data((l) => [l]).join("title").text((l) => l.source + " → " + l.target + ": " + l.messages + " messages");
    const gn = svgGraph.select("g.nodes").selectAll("g.node").data(nodes, (n) => n.id)
      .join((en) => { const e = en.append("g").attr("class", "node"); e.append("circle"); e.append("text"); e.append("title"); return e; })
      .attr("data-id", (n) => n.id).attr("data-tokens", (n) => n.tokens).attr("data-messages", (n) => n.messages);
    gn.select("circle").attr("r", (n) => r(n.tokens)).attr("fill", (n) => n.id === "human" ? "#2f6fde" : n.id === "world" ? "#8a8a8e" : "#e0893a");
    gn.select("text").text((n) => n.id).attr("dx", (n) => r(n.tokens) + 2).attr("dy", 4).attr("font-size", 11);
    gn.select("title").text((n) => n.id + ": " + n.messages + " messages, " + n.tokens + " tokens");
    if (!sim) sim = d3.forceSimulation().on("tick", () => {
      svgGraph.select("g.links").selectAll("line").attr("x1", (l) => l.source.x).attr("y1", (l) => l.source.y)
        .attr("x2", (l) => l.target.x).attr("y2", (l) => l.target.y);
      svgGraph.select("g.nodes").selectAll("g.node").attr("transform", (n) => "translate(" + n.x + "," + n.y + ")");
    });
    sim.nodes(nodes).force("link", d3.forceLink(links).id((n) => n.id).distance(70))
      .force("charge", d3.forceManyBody().strength(-90)).force("collide", d3.forceCollide((n) => r(n.tokens) + 2)).force("center", d3.forceCenter(w / 2, h / 2))
      .force("x", d3.forceX(w / 2).strength(0.05)).force("y", d3.forceY(h / 2).strength(0.08))
      .alpha(g.drawn ? 0.3 : 1).restart();
    svgGraph.select("text.more").remove();
    if (g.more) svgGraph.append("text").attr("class", "more").attr("x", 4).attr("y", h - 4).attr("font-size", 11)
      .attr("fill", "#8a8a8e").text("+" + g.more + " senders not drawn (the busiest are)");
  }
  // A chart's frame: the svg in box (made once), its size and margins.
  function frame(id, left) {
    const box = document.getElementById(id), w = W(box), h = H(box), m = { l: left || 44, r: 12, t: 8, b: 20 };
    const svg = d3.select(box).selectAll("svg").data([0]).join("svg").attr("width", w).attr("height", h);
    svg.selectAll("*").remove();
    return { svg, w, h, m };
  }
  function drawTokens() {
    const { svg, w, h, m } = frame("graph-tokens"), s = g.series;
    if (!s || !s.ids.length) { svg.append("text").attr("x", 8).attr("y", 20).attr("fill", "#8a8a8e").text("no tokens reported yet"); return; }
    const x = d3.scaleLinear().domain([d3.min(s.seqs) || 0, d3.max(s.seqs) || 1]).range([m.l, w - m.r]);
    const y = d3.scaleLinear().domain([0, d3.max(s.values, (v) => d3.max(v)) || 1]).nice().range([h - m.b, m.t]);
    const color = d3.scaleOrdinal(d3.schemeCategory10).domain(s.ids);
    svg.append("g").attr("transform", "translate(0," + (h - m.b) + ")").call(d3.axisBottom(x).ticks(Math.max(2, (w - m.l) / 60)).tickFormat(d3.format("~s")));
    svg.append("g").attr("transform", "translate(" + m.l + ",0)").call(d3.axisLeft(y).ticks(4).tickFormat(d3.format("~s")));
    s.ids.forEach((id, i) => {
      svg.append("path").attr("data-agent", id).attr("data-last", s.values[i][s.values[i].length - 1])
        .attr("fill", "none").attr("stroke", color(id)).attr("stroke-width", 1.5)
        .attr("d", d3.line().x((_, k) => x(s.seqs[k])).y((v) => y(v))(s.values[i]));
      svg.append("text").attr("x", m.l + 6).attr("y", m.t + 10 + 12 * i).attr("font-size", 11).attr("fill", color(id)).text(id);
    });
  }
  function drawTimeline() {
    const { svg, w, h, m } = frame("graph-time", 12), t = g.ticks;
    if (!t || !t.length) { svg.append("text").attr("x", 8).attr("y", 20).attr("fill", "#8a8a8e").text("real clock: no simulated time"); return; }
    const x = d3.scaleTime().domain(d3.extent(t, (k) => k.sim_ms)).nice().range([m.l, w - m.r]);
    const y = h - m.b;
    svg.append("g").attr("transform", "translate(0," + y + ")").call(d3.axisBottom(x).ticks(Math.max(2, (w - m.l) / 70)));
    svg.append("g").selectAll("circle").data(t.filter((k) => !k.fire)).join("circle").attr("class", "tick").attr("data-seq", (k) => k.seq)
      .attr("cx", (k) => x(k.sim_ms)).attr("cy", y - 14).attr("r", 3).attr("fill", "#2f6fde").attr("fill-opacity", 0.5);
    svg.append("g").selectAll("line").data(t.filter((k) => k.fire)).join("line").attr("class", "fire")
      .attr("data-seq", (k) => k.seq).attr("x1", (k) => x(k.sim_ms)).attr("x2", (k) => x(k.sim_ms))
      .attr("y1", m.t + 14).attr("y2", y).attr("stroke", "#b3541e").attr("stroke-width", 1).attr("stroke-opacity", 0.7)
      .append("title").text((k) => "#" + k.seq + " scheduled, " + new Date(k.sim_ms).toISOString());
    svg.append("text").attr("x", m.l).attr("y", m.t + 10).attr("font-size", 11).attr("fill", "#8a8a8e")
      .text("simulated time: " + t.length + " messages, " + t.filter((k) => k.fire).length + " from the schedule");
  }

  // The button: the pictures pane shows (and is drawn) or hides; the choice is kept for the session.
  function toggle(on) {
    const stick = nearBottom(), t = document.getElementById("transcript"); // the pane takes height from it:
    document.body.classList.toggle("show-graphs", on);
    if (stick) t.scrollTop = t.scrollHeight; // one reading the live end goes on reading it
    sessionStorage.setItem("agora-graphs", on ? "1" : "");
    if (on && g.stale) fetchChat().catch(() => {});
    else if (on) draw();
    else if (sim) sim.stop();
  }
  document.getElementById("show-graphs").onclick = () => toggle(!shown());
  if (sessionStorage.getItem("agora-graphs")) document.body.classList.add("show-graphs");
  window.addEventListener("resize", soon);
  return { load, message, event, state: g };
})();
