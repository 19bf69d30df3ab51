// agora serve's web page in a real browser (headless Debian chromium driven by puppeteer-core, run by
// tests/test_serve_page.c): the transcript shows, a message typed with @ completion is posted, the reply
// streams in, a tool is approved, chats are switched and deleted; a screenshot is saved.
// Usage: node serve_page.js BASE_URL SCREENSHOT.png   (AGORA_PEERS names the installed peers)
//        node serve_page.js BASE_URL SCREENSHOT.png TOKEN   the server needs TOKEN: the page asks for it once
"use strict";
const puppeteer = require(process.env.AGORA_PEERS + "/node_modules/puppeteer-core");
const [base, shot, token] = process.argv.slice(2);

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
    if (token) {
      await withToken(page, T);
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
