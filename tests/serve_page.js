// agora serve's web page in a real browser (headless Debian chromium driven by puppeteer-core, run by
// tests/test_serve_page.c): the page opens the world named first on the command line and puts world and
// chat in the address; the transcript shows, bookkeeping hidden until toggled, a message typed with @
// completion is posted, the reply streams in, the chat's count follows; a reply with Markdown and hostile
// HTML is rendered inert; the agents panel; a tool is approved and its steps stay after a reload; an
// ask_human answer half typed outlives a re-read of the chat (serve_page_ask.js); switching chats while a
// reply comes asks first; a link to a chat lands on it; chats are deleted. No page error.
// Screenshots of each view are saved next to SCREENSHOT (SCREENSHOT-NAME.png).
// Usage: node serve_page.js BASE_URL SCREENSHOT.png   (AGORA_PEERS names the installed peers)
//        node serve_page.js BASE_URL SCREENSHOT.png TOKEN   the server needs TOKEN: the page asks for it once
//        node serve_page.js BASE_URL SCREENSHOT.png --big   a world of 1,000 agents, a chat of 100,000 messages
//        node serve_page.js BASE_URL SCREENSHOT.png --empty an empty database: the page says what to do
//        node serve_page.js BASE_URL SCREENSHOT.png --week  a week run on a virtual clock: its timeline
"use strict";
const { launch, clickNow, assertClean } = require(__dirname + "/support/browser.js");
const { askKeepsTyping } = require(__dirname + "/serve_page_ask.js");
const [base, shot, third] = process.argv.slice(2);
const big = third === "--big", empty = third === "--empty", week = third === "--week";
const token = big || empty || week ? undefined : third;
const MESSAGES = 100000, PAGE = 100, MAX_ROWS = 400; /* the page's PAGE and MAX_ROWS */

function step(name) { process.stderr.write("serve_page: " + name + "\n"); }
// A screenshot of one view, beside the main one: serve_page.png -> serve_page-NAME.png.
function shotOf(name) { return shot.replace(/\.png$/, "") + "-" + name + ".png"; }

// A server with a token: the page asks for it, keeps it for the session, and the world list appears.
async function withToken(page, T) {
  step("the page asks for the token");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForSelector("#token-input", { visible: true, timeout: 20000 });
  await page.type("#token-input", token);
  await page.click("#token-form button");
  await page.waitForSelector("#worlds li", T);
  const kept = await page.evaluate(() => sessionStorage.getItem("agora-token"));
  if (kept !== token) throw new Error("the token is not kept in sessionStorage");
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.waitForSelector("#worlds li", T); /* no second prompt */
  if (await page.$eval("#token", (d) => getComputedStyle(d).display) !== "none") throw new Error("asked twice");
  await page.screenshot({ path: shot });
}

// The seqs of the messages shown, top to bottom.
function shownSeqs(page) {
  return page.$$eval("#transcript .msg", (l) => l.filter((m) => m.dataset.seq).map((m) => Number(m.dataset.seq)));
}
async function checkRun(page, what) {
  const seqs = await shownSeqs(page);
  const rows = await page.$eval("#transcript", (t) => t.children.length);
  if (rows > MAX_ROWS) throw new Error(what + ": the transcript holds " + rows + " elements");
  for (let i = 1; i < seqs.length; i++)
    if (seqs[i] !== seqs[i - 1] + 1) throw new Error(what + ": seq " + seqs[i] + " after " + seqs[i - 1]);
  return seqs;
}

// 1,000 agents, 100,000 stored messages: the last page shows, scrolling up loads older pages while the DOM
// stays bounded (the newest are dropped, and come back when scrolling down), @ completes among 1,000
// names, a message posted shows and the reply streams in.
async function bigWorld(page, T) {
  step("big: the last page of " + MESSAGES + " messages");
  // Responsiveness: the longest task the page's main thread ran (a click or a scroll waits for it).
  await page.evaluateOnNewDocument(() => {
    window.__longest = 0;
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration); })
      .observe({ type: "longtask", buffered: true });
  });
  const t0 = Date.now();
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForFunction((n) => { const l = document.querySelectorAll("#transcript .msg"); return l.length && l[l.length - 1].dataset.seq === String(n); }, T, MESSAGES);
  step("big: shown in " + (Date.now() - t0) + " ms");
  let seqs = await checkRun(page, "last page");
  if (seqs.length !== PAGE || seqs[0] !== MESSAGES - PAGE + 1) throw new Error("last page: " + seqs[0] + ".." + seqs[seqs.length - 1]);

  step("big: scrolling up loads older pages, the DOM stays bounded");
  const pages = 12;
  for (let i = 1; i <= pages; i++) {
    const want = MESSAGES - (i + 1) * PAGE + 1;
    await page.waitForFunction((w) => {
      const t = document.getElementById("transcript");
      t.scrollTop = 0;
      t.dispatchEvent(new Event("scroll"));
      const m = t.querySelector(".msg[data-seq]");
      return m && Number(m.dataset.seq) === w;
    }, { timeout: 20000, polling: 100 }, want);
    seqs = await checkRun(page, "page " + i + " up");
  }
  if (seqs[seqs.length - 1] >= MESSAGES) throw new Error("the newest messages stayed in the DOM");

  step("big: scrolling down comes back to the live end");
  await page.waitForFunction((n) => {
    const t = document.getElementById("transcript");
    t.scrollTop = t.scrollHeight;
    t.dispatchEvent(new Event("scroll"));
    const l = t.querySelectorAll(".msg");
    return l.length && l[l.length - 1].dataset.seq === String(n) && st.tail === null;
  }, { timeout: 30000, polling: 100 }, MESSAGES);
  seqs = await checkRun(page, "back down");

  await bigPictures(page, T);

  step("big: @ completion among 1,000 names");
  await page.click("#input");
  await page.keyboard.type("@a");
  await page.waitForFunction(() => document.querySelectorAll("#complete li").length === 20, T);
  await page.keyboard.type("099");
  await page.waitForFunction(() => document.querySelectorAll("#complete li").length === 10, T);
  const names = await page.$$eval("#complete li", (l) => l.map((x) => x.textContent).join(","));
  if (names !== [...Array(10).keys()].map((i) => "@a099" + i).join(",")) throw new Error("completion offered " + names);
  await page.keyboard.type("9");
  await page.waitForFunction(() => document.querySelectorAll("#complete li").length === 1, T);
  await page.keyboard.press("Tab");
  const typed = await page.$eval("#input", (i) => i.value);
  if (typed !== "@a0999 ") throw new Error("completion gave '" + typed + "'");

  step("big: post, see the reply stream in");
  // a card whose agent does not answer: a refresh leaves it as it is (the same element)
  await page.$eval('.agent-card[data-id="a0000"]', (c) => { c.__kept = true; });
  await page.evaluate(() => {
    window.chunksSeen = [];
    const orig = addChunk; // the page's own, wrapped to see the chunks go by
    addChunk = (e) => { window.chunksSeen.push(e.agent); return orig(e); }; // eslint-disable-line no-func-assign
  });
  await page.keyboard.type("hello big world");
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => [...document.querySelectorAll(".msg.human")].some((m) =>
    m.dataset.seq === String(n + 1) && m.textContent.includes("@a0999 hello big world")), T, MESSAGES);
  step("big: the message shows; the reply streams");
  await page.waitForSelector(".msg.live", T);
  await page.waitForFunction((n) => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
    m.dataset.seq === String(n + 2) && m.textContent.includes("streamed reply to the big world")), T, MESSAGES);
  const chunks = await page.evaluate(() => window.chunksSeen.filter((a) => a === "a0999").length);
  if (chunks < 2) throw new Error("the reply came in " + chunks + " chunks");
  if (await page.$(".msg.live")) throw new Error("a live line stayed after the reply");
  await checkRun(page, "after the reply");
  await waitDrawn(page, "the new edge human>a0999", (x) => x.edges["human>a0999"] === 1 && x.nodes.a0999);
  const elements = await page.evaluate(() => document.getElementsByTagName("*").length);
  const longest = await page.evaluate(() => window.__longest);
  step("big: " + elements + " elements in the whole page; the longest task on its main thread so far " + Math.round(longest) + " ms");
  if (longest > 1000) throw new Error("the page stopped for " + Math.round(longest) + " ms");
  await agentsWindow(page, T, elements);
  await page.screenshot({ path: shot });

  step("big: search 100,000 messages on the server, jump to the match");
  const t1 = Date.now();
  await searchAndJump(page, T, "message 50000 from", 50000);
  step("big: found and shown in " + (Date.now() - t1) + " ms");
  seqs = await checkRun(page, "around the match");
  if (!seqs.includes(50000) || seqs.length !== PAGE) throw new Error("around the match: " + seqs[0] + ".." + seqs[seqs.length - 1]);
  await page.screenshot({ path: shotOf("search") });
}

// The agents panel of 1,000 agents holds the cards in view (and a margin), not a thousand; a refresh keeps
// the cards that did not change; scrolled to the end it shows the last agent, whose card still mentions.
async function agentsWindow(page, T, elements) {
  const cards = await page.$$eval(".agent-card", (l) => l.length);
  step("big: " + cards + " agent cards in the DOM");
  if (cards < 10 || cards >= 200) throw new Error(cards + " agent cards in the DOM for 1,000 agents");
  const parts = await page.evaluate(() => ["transcript", "graphs", "agents-panel"].map((id) =>
    id + " " + document.getElementById(id).getElementsByTagName("*").length).join(", "));
  step("big: of the page's " + elements + " elements: " + parts);
  // the transcript (400 rows) and the pictures (the timeline's 1,000 ticks) hold most of what is left
  if (elements >= 5000) throw new Error(elements + " elements in the page (11,116 when every card was drawn)");
  if (!(await page.$eval('.agent-card[data-id="a0000"]', (c) => c.__kept === true)))
    throw new Error("a card that did not change was drawn again");
  await page.waitForFunction(() => { // the reply's turn shows on a0999's card, drawn again
    const w = document.getElementById("agents-panel");
    w.scrollTop = w.scrollHeight;
    const c = document.querySelector('.agent-card[data-id="a0999"]');
    return c && /turns 1\//.test(c.textContent);
  }, { timeout: 20000, polling: 100 });
  const after = await page.$$eval(".agent-card", (l) => l.length);
  if (after >= 200) throw new Error(after + " agent cards after scrolling the panel");
  await page.$eval("#input", (i) => { i.value = ""; });
  await clickNow(page, '.agent-card[data-id="a0999"]', T);
  if (await page.$eval("#input", (i) => i.value) !== "@a0999 ") throw new Error("a0999's card does not mention it");
  await page.$eval("#input", (i) => { i.value = ""; });
  await page.screenshot({ path: shotOf("agents") });
  await page.$eval("#agents-panel", (w) => { w.scrollTop = 0; });
}

// ---- the pictures (serve_graphs.js), read from their SVG's data attributes ----
// The conversation graph as drawn: nodes {id: {tokens, messages}}, edges {"from>to": messages}, and the
// number of times the pane was drawn.
function drawn(page) {
  return page.evaluate(() => {
    const nodes = {}, edges = {};
    for (const n of document.querySelectorAll("#graph-conv g.node")) nodes[n.dataset.id] = { tokens: Number(n.dataset.tokens), messages: Number(n.dataset.messages) };
    for (const l of document.querySelectorAll("#graph-conv line")) edges[l.dataset.from + ">" + l.dataset.to] = Number(l.dataset.messages);
    return { nodes, edges, times: Number(document.getElementById("graphs").dataset.drawn || 0) };
  });
}
// Waits until the drawn graph satisfies fn (a function of drawn()'s result, run in node).
async function waitDrawn(page, what, fn, ms) {
  const end = Date.now() + (ms || 20000);
  for (let d; ; await new Promise((r) => setTimeout(r, 100))) {
    d = await drawn(page);
    if (fn(d)) return d;
    if (Date.now() > end) throw new Error("the pictures never showed " + what + ": " + JSON.stringify(d).slice(0, 600));
  }
}
async function showPictures(page, T) {
  await clickNow(page, "#show-graphs", T);
  await page.waitForFunction(() => document.body.classList.contains("show-graphs") && getComputedStyle(document.getElementById("graphs")).display === "flex", T);
}

// The stored chat's graph (GET …/graph) in drawn()'s shape.
async function storedGraph(page) {
  const j = await page.evaluate(async () => (await fetch(wpath() + "/chats/" + enc(st.chat) + "/graph")).json());
  const nodes = {}, edges = {};
  for (const n of j.nodes) nodes[n.id] = { tokens: n.input_tokens + n.output_tokens, messages: n.messages };
  for (const e of j.edges) edges[e.from + ">" + e.to] = e.messages;
  return { nodes, edges };
}
// Waits until the graph drawn is the stored chat's, node for node and edge for edge.
async function waitStored(page, what) {
  const same = (a, b) => JSON.stringify(a, Object.keys(a).sort()) === JSON.stringify(b, Object.keys(b).sort());
  const end = Date.now() + 20000;
  for (let d, s; ; await new Promise((r) => setTimeout(r, 100))) {
    [d, s] = [await drawn(page), await storedGraph(page)];
    const sort = (o) => Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
    if (same(sort(d.nodes), sort(s.nodes)) && same(sort(d.edges), sort(s.edges))) return d;
    if (Date.now() > end) throw new Error(what + ": drawn " + JSON.stringify(d) + ", stored " + JSON.stringify(s));
  }
}
// The chat's history is read while a reply comes: the read answers (with what the server held before the
// reply) only after the reply's llm-done went by; the reply's tokens still reach the picture.
async function heldRead(page, T, send) {
  const held = await page.evaluate(async () => (await fetch(wpath() + "/chats/" + enc(st.chat) + "/graph")).text());
  let hold = null;
  const onRequest = (r) => { if (!hold && r.url().endsWith("/graph")) hold = r; else r.continue(); };
  await page.setRequestInterception(true);
  page.on("request", onRequest);
  await page.evaluate(() => { graphs.load(st.chat).catch(() => {}); });
  for (const end = Date.now() + 20000; !hold; await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() > end) throw new Error("the pictures never read the chat again");
  const replies = await page.$$eval(".msg.agent:not(.live)", (l) => l.length);
  await send();
  await page.waitForFunction((n) => document.querySelectorAll(".msg.agent:not(.live)").length > n, T, replies);
  await hold.respond({ status: 200, contentType: "application/json", body: held });
  page.off("request", onRequest);
  await page.setRequestInterception(false);
}

// The pictures follow the answers: a message to ann thickens the edge human>ann, her reply's tokens grow
// her node and her line of tokens over time, also when the reply comes while the chat's history is read.
// A message deleted: the pictures are the stored chat's again.
async function picturesLive(page, T) {
  step("pictures: the conversation graph and tokens follow the answers");
  await showPictures(page, T);
  const before = await waitDrawn(page, "human>ann", (d) => d.edges["human>ann"] >= 2 && d.nodes.ann && d.nodes.ann.tokens > 0);
  const lineOf = () => page.$eval('#graph-tokens path[data-agent="ann"]', (p) => Number(p.dataset.last));
  const tokensBefore = await lineOf();
  if (tokensBefore !== before.nodes.ann.tokens) throw new Error("ann's line ends at " + tokensBefore + ", her node says " + before.nodes.ann.tokens);
  await heldRead(page, T, async () => {
    await page.type("#input", "@ann tell me more");
    await page.keyboard.press("Escape");
    await page.click("#send");
  });
  const after = await waitDrawn(page, "the new message and its reply's tokens", (d) =>
    d.edges["human>ann"] === before.edges["human>ann"] + 1 && d.nodes.ann.tokens > before.nodes.ann.tokens && d.times > before.times);
  await page.waitForFunction((n) => Number(document.querySelector('#graph-tokens path[data-agent="ann"]').dataset.last) > n, T, tokensBefore);
  // what the page drew live is what the server reads from the stored chat
  const chat = await page.evaluate(() => st.chat);
  const j = await page.evaluate(async (c) => (await fetch("/api/worlds/browser/chats/" + c + "/graph")).json(), chat);
  const ann = j.nodes.find((n) => n.id === "ann"), edge = j.edges.find((e) => e.from === "human" && e.to === "ann");
  if (!edge || edge.messages !== after.edges["human>ann"] || ann.input_tokens + ann.output_tokens !== after.nodes.ann.tokens)
    throw new Error("drawn " + JSON.stringify(after) + ", stored " + JSON.stringify(j));
  if (!(await page.$eval("#graph-time", (t) => t.textContent.includes("real clock")))) throw new Error("a real-clock chat has a timeline");
  await waitStored(page, "the reply that came during the read");
  await page.screenshot({ path: shotOf("pictures") });

  step("pictures: a message deleted, the graph is the stored chat's again");
  const seq = await page.$$eval(".msg.human", (l) => Number(l.filter((m) => m.textContent.includes("@ann tell me more")).pop().dataset.seq));
  await page.hover('.msg[data-seq="' + seq + '"]');
  await clickNow(page, '.msg[data-seq="' + seq + '"] .acts button:nth-last-child(1)', T);
  await page.waitForFunction((n) => !document.querySelector('.msg[data-seq="' + n + '"]'), T, seq);
  const cut = await waitStored(page, "the chat after the delete");
  if (cut.edges["human>ann"] !== after.edges["human>ann"] - 1) throw new Error("after the delete: " + JSON.stringify(cut));
  await page.screenshot({ path: shotOf("pictures-deleted") });
  await clickNow(page, "#show-graphs", T);
  await page.waitForFunction(() => !document.body.classList.contains("show-graphs"), T);
}

// 1,000 senders and 100,000 messages: the 50 busiest drawn, the rest counted; tokens over time for the 8
// agents with most; the timeline's last 500 ticks; the MCP servers' reason shown. Then the reply posted
// later adds its edge live.
async function bigPictures(page, T) {
  step("big: the pictures of 100,000 messages");
  const note = await page.$eval("#mcp-note", (n) => n.textContent);
  if (!/MCP servers not started: .+/.test(note)) throw new Error("the MCP note says '" + note + "'");
  const t0 = Date.now();
  await showPictures(page, T);
  const d = await waitDrawn(page, "50 nodes", (x) => Object.keys(x.nodes).length === 50 && x.times > 0, 30000);
  step("big: pictures drawn in " + (Date.now() - t0) + " ms");
  const more = await page.$eval("#graph-conv text.more", (t) => t.textContent);
  // 901 senders: human, world and the 899 agents whose seq%1000 is neither x1 (the human's) nor 500 (world's)
  if (!more.startsWith("+851 senders")) throw new Error("the senders not drawn: " + more);
  if (!(d.nodes.human && d.edges["human>a0002"] === 769 && d.edges["a0122>a0002"] > 0))
    throw new Error("the edges of human and a0122: " + JSON.stringify(d.edges).slice(0, 300));
  const lines = await page.$$eval("#graph-tokens path[data-agent]", (l) => l.length);
  if (lines !== 8) throw new Error(lines + " lines of tokens over time");
  const fires = await page.$$eval("#graph-time line.fire", (l) => l.length);
  if (fires < 1 || fires > 500) throw new Error(fires + " fires on the timeline");
  await page.screenshot({ path: shotOf("pictures") });
}

// A week on a virtual clock: the timeline shows its six deliveries from the schedule, the graph world's
// messages to the baker and the mayor.
async function weekTimeline(page, T) {
  step("week: the timeline of simulated time");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForFunction(() => document.querySelectorAll("#transcript .msg").length >= 13, T);
  await showPictures(page, T);
  const d = await waitDrawn(page, "world>baker", (x) => x.edges["world>baker"] === 5 && x.edges["world>mayor"] === 1);
  await page.waitForFunction(() => document.querySelectorAll("#graph-time line.fire").length === 6, T);
  const first = await page.$eval("#graph-time line.fire title", (t) => t.textContent);
  if (!first.includes("2026-03-02T07:00")) throw new Error("the first delivery: " + first);
  if (d.nodes.baker.messages !== 5) throw new Error("the baker's node: " + JSON.stringify(d.nodes.baker));
  step("week: a message posted now is a tick at the world's simulated time");
  const ticks = await page.$$eval("#graph-time circle.tick", (l) => l.length);
  await page.type("#input", "a note for the record");
  await page.keyboard.press("Enter");
  // the note is seq 14 (both agents answer it too: each is a tick as well)
  await page.waitForFunction((n) => document.querySelectorAll("#graph-time circle.tick").length > n &&
    document.querySelector('#graph-time circle.tick[data-seq="14"]'), T, ticks);
  await page.screenshot({ path: shot });
}

// Searches the chat for q (Enter in the search box), expects one result, seq, and clicks it: the message
// is shown, marked.
async function searchAndJump(page, T, q, seq) {
  await page.click("#search", { clickCount: 3 });
  await page.type("#search", q);
  await page.keyboard.press("Enter");
  await page.waitForSelector('#results:not([hidden]) li[data-seq="' + seq + '"]', T);
  const n = await page.$$eval("#results li[data-seq]", (l) => l.length);
  if (n !== 1) throw new Error("search '" + q + "': " + n + " results");
  await clickNow(page, '#results li[data-seq="' + seq + '"]', T);
  await page.waitForSelector('.msg.hit[data-seq="' + seq + '"]', T);
  if (!(await page.$eval("#results", (r) => r.hidden))) throw new Error("the results stayed open");
}

// The text of the elements sel names, joined.
function texts(page, sel) { return page.$$eval(sel, (l) => l.map((e) => e.textContent).join("\n")); }
// 1 when sel names an element that is laid out (not display: none, nor inside one).
function visible(page, sel) { return page.$eval(sel, (e) => e.getClientRects().length > 0); }

// The page opens the world named first (browser, not the alphabetically first aardvark), with world and
// chat in the address; bookkeeping is hidden until the toggle shows it.
async function opens(page, T) {
  step("load the page: the world named first, its chat in the address");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForSelector("#worlds li", T);
  await page.waitForFunction(() => [...document.querySelectorAll(".msg")].some((m) => m.textContent.includes("first answer")), T);
  const on = await page.$eval("#worlds li.on", (l) => l.dataset.id);
  if (on !== "browser") throw new Error("the page opened world " + on + ", not the one named first");
  const chat = await page.$eval("#chats li.on", (l) => l.dataset.id);
  const hash = await page.evaluate(() => location.hash);
  if (hash !== "#/w/browser/c/" + chat) throw new Error("the address is '" + hash + "'");
  if (!(await page.$("link[rel=icon]"))) throw new Error("no favicon");
  return chat;
}

async function bookkeeping(page, T) {
  step("bookkeeping hidden, shown by the toggle");
  await page.waitForSelector(".ev.ev-turn-end", T);
  if (await visible(page, ".ev.ev-turn-end")) throw new Error("turn-end is shown without the toggle");
  await page.click("#show-book");
  if (!(await visible(page, ".ev.ev-turn-end"))) throw new Error("the toggle does not show turn-end");
  await page.screenshot({ path: shotOf("bookkeeping") });
  await page.click("#show-book");
  if (await visible(page, ".ev.ev-turn-end")) throw new Error("the toggle does not hide turn-end again");
}

// A reply holding Markdown and hostile HTML: rendered, and nothing in it runs.
async function markdownInert(page, T) {
  step("a reply in Markdown with hostile HTML: rendered, inert");
  await page.evaluate(() => { window.__pwned = 0; });
  await page.type("#input", "@md show me");
  await page.keyboard.press("Escape");
  await page.click("#send");
  await page.waitForFunction(() => [...document.querySelectorAll(".msg.agent:not(.live) .body.md strong")].some((b) => b.textContent === "bold"), T);
  const html = await page.$$eval(".msg.agent .body.md", (l) => l[l.length - 1].innerHTML);
  if (!html.includes("<code>code</code>") || !html.includes("<li>item</li>")) throw new Error("not rendered as Markdown: " + html);
  const kept = await page.$$eval(".msg.agent .body.md", (l) => {
    const b = l[l.length - 1], bad = [];
    if (!b.querySelector("a")) bad.push("no link");
    for (const e of b.querySelectorAll("*")) {
      if (/^(script|iframe|object|embed)$/i.test(e.tagName)) bad.push(e.tagName);
      for (const a of e.attributes) if (/^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)) bad.push(e.tagName + " " + a.name);
    }
    return bad.join(", ");
  });
  if (kept) throw new Error("hostile HTML kept (" + kept + "): " + html);
  await page.$$eval(".msg.agent .body.md a", (l) => l.forEach((a) => a.click())); // a javascript: link would run now
  await page.hover(".msg.agent .body.md");
  const pwned = await page.evaluate(() => window.__pwned);
  if (pwned !== 0) throw new Error("a handler in a reply ran (" + pwned + ")");
  step("message numbers on hover");
  await page.hover("#input");
  if (await page.$eval('.msg[data-seq="1"] .num', (n) => getComputedStyle(n).visibility) !== "hidden") throw new Error("numbers shown without hover");
  await page.hover('.msg[data-seq="1"]');
  const num = await page.$eval('.msg[data-seq="1"] .num', (n) => getComputedStyle(n).visibility + " " + n.textContent);
  if (num !== "visible #1") throw new Error("the number on hover: " + num);
  await page.screenshot({ path: shotOf("markdown") });
}

async function agentsPanel(page, T) {
  step("the agents panel: provider/model, turns of the limit, phase; a click mentions");
  // the card says what the server says (turns are counted since the last human message)
  await page.waitForFunction(async () => {
    const w = await (await fetch("/api/worlds/browser")).json(), ann = w.agents.find((a) => a.id === "ann");
    const c = document.querySelector('.agent-card[data-id="ann"]');
    return c && c.textContent.includes("turns " + ann.turns + "/" + w.turn_limit) && w.turn_limit === 5;
  }, { timeout: 20000, polling: 200 });
  const ann = await page.$eval('.agent-card[data-id="ann"]', (c) => c.textContent);
  if (!ann.includes("openai · m") || !ann.includes("idle")) throw new Error("ann's card: " + ann);
  await page.$eval("#input", (i) => { i.value = ""; });
  await page.click('.agent-card[data-id="careful"]');
  const typed = await page.$eval("#input", (i) => i.value);
  if (typed !== "@careful ") throw new Error("a click on careful typed '" + typed + "'");
  await page.$eval("#input", (i) => { i.value = ""; });
  step("an agent in memory mode stream lists its memories under its card; a click on the toggle mentions no one");
  if (await page.$('.agent-card[data-id="ann"] .memories-toggle')) throw new Error("ann (mode window) offers memories");
  await clickNow(page, '.agent-card[data-id="md"] .memories-toggle', T);
  await page.waitForFunction(() => { const l = document.querySelector('.agent-card[data-id="md"] .memories');
    return l && /human: @md show me/.test(l.textContent) && /md: \*\*bold\*\*/.test(l.textContent); }, T);
  if (await page.$eval("#input", (i) => i.value) !== "") throw new Error("the memories toggle mentioned md");
  await clickNow(page, '.agent-card[data-id="md"] .memories-toggle', T);
  await page.waitForFunction(() => !document.querySelector('.agent-card[data-id="md"] .memories'), T);
}

// The tool steps of the approved call are stored: a reload shows them again, on the same chat.
async function reloadKeepsSteps(page, T, chat) {
  step("a reload keeps the tool steps and the view");
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.waitForFunction(() => document.querySelector(".ev.ev-tool-call") && document.querySelector(".ev.ev-tool-result"), T);
  const steps = await texts(page, ".ev.step");
  if (!steps.includes("tool=save_context")) throw new Error("the steps after a reload: " + steps);
  if (await page.evaluate(() => location.hash) !== "#/w/browser/c/" + chat) throw new Error("the reload moved the view");
  await page.waitForFunction(() => /tokens [1-9]\d* in \/ [1-9]\d* out/.test(document.querySelector('.agent-card[data-id="ann"]').textContent), T);
  await page.screenshot({ path: shotOf("reload") });
}

// Another chat is clicked while a reply comes in: the page asks; declined, the reply goes on in its chat.
async function switchAsks(page, T, dialogs, first) {
  step("switching chats while a reply comes asks first");
  const other = await page.$eval("#chats li:not(.on)", (l) => l.dataset.id);
  await page.type("#input", "@ann take your time");
  await page.keyboard.press("Escape");
  await page.click("#send");
  await page.waitForSelector(".msg.live", T);
  dialogs.answer = false;
  const before = dialogs.seen.length, shown = await page.evaluate(() => window.__dialogs || 0);
  await clickNow(page, '#chats li[data-id="' + other + '"]', T);
  await page.waitForFunction((n) => (window.__dialogs || 0) > n, T, shown);
  if (dialogs.seen.length !== before + 1 || !dialogs.seen[before].includes("still coming")) throw new Error("no question before switching: " + dialogs.seen.join(" | "));
  dialogs.answer = true;
  await page.waitForFunction(() => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) => m.textContent.includes("eight slow words")), T);
  if (await page.$eval("#chats li.on", (l) => l.dataset.id) !== first) throw new Error("the chat was switched");
  return other;
}

async function mainFlow(page, T, dialogs) {
  const first = await opens(page, T);
  await page.screenshot({ path: shotOf("open") });
  step("type with @ completion and send");
  await page.click("#input");
  await page.keyboard.type("@an");
  await page.waitForSelector("#complete li", T);
  await page.keyboard.press("Tab");
  const typed = await page.$eval("#input", (i) => i.value);
  if (typed !== "@ann ") throw new Error("completion gave '" + typed + "'");
  await page.keyboard.type("tell me more");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => [...document.querySelectorAll(".msg.human")].some((m) => m.textContent.includes("@ann tell me more")), T);

  step("the reply streams in, the chat's count follows");
  await page.waitForSelector(".msg.live", T);
  await page.waitForFunction(() => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
    m.textContent.includes("slow words of a streamed answer")), T);
  if (await page.$(".msg.live")) throw new Error("a live line stayed after the reply");
  await page.waitForFunction(() => { const c = document.querySelector("#chats li.on .count"); return c && c.textContent === " (4)"; }, T);
  await bookkeeping(page, T);
  await markdownInert(page, T);
  await agentsPanel(page, T);
  await picturesLive(page, T);

  step("approve a tool");
  await page.type("#input", "@careful remember this");
  await page.keyboard.press("Escape");
  await page.click("#send");
  await page.waitForSelector(".approval button.approve", T);
  await page.screenshot({ path: shotOf("approval") });
  await clickNow(page, ".approval button.approve", T);
  await page.waitForFunction(() => [...document.querySelectorAll(".ev")].some((e) => e.textContent.includes("approval: agent=careful tool=save_context approved=true")), T);
  await page.waitForFunction(() => !document.querySelector(".approval"), T);
  await page.waitForSelector(".ev.ev-tool-result", T);
  await page.screenshot({ path: shot });
  await reloadKeepsSteps(page, T, first);
  await askKeepsTyping(page, T, step);
  step("search the chat, jump to a match; the Markdown export");
  await searchAndJump(page, T, "first answer", 2);
  await page.click("#export-md");

  step("new chat, switch back");
  const before = await page.$$eval("#chats li", (l) => l.length);
  await clickNow(page, "#new-chat", T);
  await page.waitForFunction((n) => document.querySelectorAll("#chats li").length === n + 1, T, before);
  await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id !== id, T, first);
  // The sidebar's refresh can mark the new chat before the page has shown it: the address changes in the
  // same task that empties the transcript, so that is the moment to look.
  const fresh = await page.$eval("#chats li.on", (l) => l.dataset.id);
  await page.waitForFunction((h) => location.hash === h, T, "#/w/browser/c/" + fresh)
    .catch(() => { throw new Error("the address did not follow the new chat"); });
  if (await page.$(".msg")) throw new Error("the new chat shows messages");
  await clickNow(page, '#chats li[data-id="' + first + '"]', T);
  await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id === id, T, first);
  await page.waitForFunction(() => [...document.querySelectorAll(".msg")].some((m) => m.textContent.includes("first answer")), T);
  await switchAsks(page, T, dialogs, first);

  step("a link to the other chat lands on it, while the page reads its chat again");
  // The page reads its chat again on a chat event or a resync (openCurrent with no chat of its own, as
  // a stream that fell behind gets under load): one that starts while the link is opened keeps the link.
  await page.evaluate((h) => new Promise((done) => {
    window.addEventListener("hashchange", () => { openCurrent().catch(() => {}); done(); }, { once: true });
    location.hash = h; // the page's own hashchange listener runs first
  }), "#/w/browser/c/" + fresh);
  await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id === id, T, fresh);
  step("a link back to the first chat");
  await page.goto(base + "/#/w/browser/c/" + first, { waitUntil: "domcontentloaded" });
  await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id === id, T, first);
  await page.waitForFunction(() => [...document.querySelectorAll(".msg")].some((m) => m.textContent.includes("first answer")), T);
  step("a link followed by another before it opened: the last one wins"); // (it named the chat still shown)
  await page.evaluate((f, b) => new Promise((done) => {
    window.addEventListener("hashchange", () => { location.hash = b; done(); }, { once: true });
    location.hash = f; // the page's own listener starts opening f first
  }), "#/w/browser/c/" + fresh, "#/w/browser/c/" + first);
  await page.waitForFunction(() => st.want === null, T);
  const landed = await page.evaluate(() => st.chat);
  if (landed !== first) throw new Error("the last link named " + first + ", the page shows " + landed);

  step("delete");
  await clickNow(page, "#delete-chat", T);
  await page.waitForFunction((id) => !document.querySelector('#chats li[data-id="' + id + '"]'), T, first);
  await page.waitForFunction(() => document.querySelectorAll("#chats li.on").length === 1, T);
}

// An empty database: the page says what to do, with no error.
async function emptyDatabase(page, T) {
  step("an empty database: what to do");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForFunction(() => !document.getElementById("empty").hidden, T);
  const say = await page.$eval("#empty", (e) => e.textContent);
  if (!say.includes("agora serve examples/debate.json")) throw new Error("the empty page says: " + say);
  for (const b of ["#new-chat", "#delete-chat", "#export", "#cancel"]) await page.click(b);
  await page.type("#input", "hello");
  await page.keyboard.press("Enter");
  await page.screenshot({ path: shot });
}

async function main() {
  const browser = await launch();
  let ok = false;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    const offsite = [], errors = [], dialogs = { answer: true, seen: [] };
    page.on("request", (r) => { if (!r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:")) offsite.push(r.url()); });
    page.on("dialog", (d) => {
      dialogs.seen.push(d.message());
      page.evaluate(() => { window.__dialogs = (window.__dialogs || 0) + 1; }).catch(() => {});
      return dialogs.answer ? d.accept() : d.dismiss();
    });
    page.on("pageerror", (e) => { errors.push(e.message); step("page error: " + e.message); });
    const T = { timeout: 20000 };
    try {
      if (token) await withToken(page, T);
      else if (big) await bigWorld(page, T);
      else if (empty) await emptyDatabase(page, T);
      else if (week) await weekTimeline(page, T);
      else await mainFlow(page, T, dialogs);
    } catch (e) { // what the page showed when a wait failed: its status line, where the transcript stood
      step("the status line said: '" + await page.$eval("#status", (x) => x.textContent).catch(() => "?") + "'");
      step("the transcript: " + await page.evaluate(() => JSON.stringify({ tail: st.tail, liveMax: st.liveMax,
        last: [...document.querySelectorAll("#transcript .msg")].slice(-2).map((m) => m.dataset.seq + " " + m.textContent.slice(0, 80)) }))
        .catch((x) => x.message));
      step("the address and the chats: " + await page.evaluate(() => location.hash + " " + JSON.stringify(
        [...document.querySelectorAll("#chats li")].map((l) => (l.classList.contains("on") ? "*" : "") + l.dataset.id)))
        .catch((x) => x.message));
      throw e;
    }
    assertClean(errors, offsite);
    ok = true;
  } finally {
    await browser.close();
  }
  return ok;
}

main().then((ok) => process.exit(ok ? 0 : 1), (e) => { step("FAILED: " + e.message); process.exit(1); });
