// agora serve's web page in a real browser (headless Debian chromium driven by puppeteer-core, run by
// tests/test_serve_page.c): the transcript shows, a message typed with @ completion is posted, the reply
// streams in, a tool is approved, chats are switched and deleted; a screenshot is saved.
// Usage: node serve_page.js BASE_URL SCREENSHOT.png   (AGORA_PEERS names the installed peers)
//        node serve_page.js BASE_URL SCREENSHOT.png TOKEN   the server needs TOKEN: the page asks for it once
//        node serve_page.js BASE_URL SCREENSHOT.png --big   a world of 1,000 agents, a chat of 100,000 messages
"use strict";
const puppeteer = require(process.env.AGORA_PEERS + "/node_modules/puppeteer-core");
const [base, shot, third] = process.argv.slice(2);
const big = third === "--big", token = big ? undefined : third;
const MESSAGES = 100000, PAGE = 100, MAX_ROWS = 400; /* the page's PAGE and MAX_ROWS */

// Nothing may leave the machine: no background services, updates or proxies of the browser's own.
const args = ["--no-sandbox", "--headless=new", "--no-first-run", "--no-default-browser-check",
  "--disable-background-networking", "--disable-component-update", "--disable-default-apps", "--disable-sync",
  "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
  "--disable-breakpad", "--disable-extensions", "--no-pings", "--no-proxy-server", "--safebrowsing-disable-auto-update",
  "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];

function step(name) { process.stderr.write("serve_page: " + name + "\n"); }

// Clicks the element sel names as it is at that moment, inside the page: lists re-render as events
// arrive, and puppeteer's page.click on a handle that was replaced in between fails with "Node is
// detached from document" (seen once under ASan, where the server is slower).
async function clickNow(page, sel, T) {
  await page.waitForSelector(sel, T);
  await page.waitForFunction((s) => { const el = document.querySelector(s); if (!el) return false; el.click(); return true; }, T, sel);
}

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
  await page.evaluate(() => {
    window.chunksSeen = [];
    const orig = addChunk; // the page's own, wrapped to see the chunks go by
    addChunk = (e) => { window.chunksSeen.push(e.agent); return orig(e); }; // eslint-disable-line no-func-assign
  });
  await page.keyboard.type("hello big world");
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => [...document.querySelectorAll(".msg.human")].some((m) =>
    m.dataset.seq === String(n + 1) && m.textContent.includes("@a0999 hello big world")), T, MESSAGES);
  await page.waitForSelector(".msg.live", T);
  await page.waitForFunction((n) => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
    m.dataset.seq === String(n + 2) && m.textContent.includes("streamed reply to the big world")), T, MESSAGES);
  const chunks = await page.evaluate(() => window.chunksSeen.filter((a) => a === "a0999").length);
  if (chunks < 2) throw new Error("the reply came in " + chunks + " chunks");
  if (await page.$(".msg.live")) throw new Error("a live line stayed after the reply");
  await checkRun(page, "after the reply");
  await page.screenshot({ path: shot });
}

async function main() {
  const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", args, headless: true });
  let ok = false;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    const offsite = [];
    page.on("request", (r) => { if (!r.url().startsWith(base) && !r.url().startsWith("blob:")) offsite.push(r.url()); });
    page.on("dialog", (d) => d.accept());
    page.on("pageerror", (e) => step("page error: " + e.message));
    const T = { timeout: 20000 };
    if (token || big) {
      await (big ? bigWorld(page, T) : withToken(page, T));
      if (offsite.length) throw new Error("requests off the server: " + offsite.join(", "));
      ok = true;
      return ok;
    }

    step("load the page and see the transcript");
    await page.goto(base + "/", { waitUntil: "domcontentloaded" });
    await page.waitForSelector("#worlds li", T);
    await page.waitForFunction(() => [...document.querySelectorAll(".msg")].some((m) => m.textContent.includes("first answer")), T);

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

    step("the reply streams in");
    await page.waitForSelector(".msg.live", T);
    await page.waitForFunction(() => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
      m.textContent.includes("slow words of a streamed answer")), T);
    if (await page.$(".msg.live")) throw new Error("a live line stayed after the reply");

    step("approve a tool");
    await page.type("#input", "@careful remember this");
    await page.keyboard.press("Escape");
    await page.click("#send");
    await page.waitForSelector(".approval button.approve", T);
    await clickNow(page, ".approval button.approve", T);
    await page.waitForFunction(() => [...document.querySelectorAll(".ev")].some((e) => e.textContent.includes("approval: agent=careful tool=save_context approved=true")), T);
    await page.waitForFunction(() => !document.querySelector(".approval"), T);
    await page.screenshot({ path: shot });

    step("new chat, switch back, delete");
    const before = await page.$$eval("#chats li", (l) => l.length);
    const first = await page.$eval("#chats li.on", (l) => l.dataset.id);
    await clickNow(page, "#new-chat", T);
    await page.waitForFunction((n) => document.querySelectorAll("#chats li").length === n + 1, T, before);
    await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id !== id, T, first);
    if (await page.$(".msg")) throw new Error("the new chat shows messages");
    await clickNow(page, '#chats li[data-id="' + first + '"]', T);
    await page.waitForFunction((id) => document.querySelector("#chats li.on") && document.querySelector("#chats li.on").dataset.id === id, T, first);
    await page.waitForFunction(() => [...document.querySelectorAll(".msg")].some((m) => m.textContent.includes("first answer")), T);
    await clickNow(page, "#delete-chat", T);
    await page.waitForFunction((id) => !document.querySelector('#chats li[data-id="' + id + '"]'), T, first);
    await page.waitForFunction(() => document.querySelectorAll("#chats li.on").length === 1, T);
    if (offsite.length) throw new Error("requests off the server: " + offsite.join(", "));
    ok = true;
  } finally {
    await browser.close();
  }
  return ok;
}

main().then((ok) => process.exit(ok ? 0 : 1), (e) => { step("FAILED: " + e.message); process.exit(1); });
