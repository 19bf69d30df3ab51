// The parity world through agora serve's page in headless Chromium (run by tests/test_parity.c): the
// person's message typed and sent, the tool approval clicked, the ask_human question answered in its
// text box, and the reply seen. What was stored is compared by the C test, not here.
// Usage: node parity_page.js BASE_URL   (AGORA_PEERS names the installed peers)
"use strict";
const puppeteer = require(process.env.AGORA_PEERS + "/node_modules/puppeteer-core");
const [base] = process.argv.slice(2);

// Nothing may leave the machine (as tests/serve_page.js).
const args = ["--no-sandbox", "--headless=new", "--no-first-run", "--no-default-browser-check",
  "--disable-background-networking", "--disable-component-update", "--disable-default-apps", "--disable-sync",
  "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
  "--disable-breakpad", "--disable-extensions", "--no-pings", "--no-proxy-server", "--safebrowsing-disable-auto-update",
  "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];

function step(name) { process.stderr.write("parity_page: " + name + "\n"); }

// Clicks what sel names at that moment (the list re-renders as events arrive).
async function clickNow(page, sel, T) {
  await page.waitForSelector(sel, T);
  await page.waitForFunction((s) => { const el = document.querySelector(s); if (!el) return false; el.click(); return true; }, T, sel);
}

async function main() {
  const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", args, headless: true });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => step("page error: " + e.message));
    const T = { timeout: 30000 };
    step("load the page");
    await page.goto(base + "/", { waitUntil: "domcontentloaded" });
    await page.waitForSelector("#worlds li", T);
    step("send the message");
    await page.type("#input", "@clerk file the ledger");
    await page.keyboard.press("Escape"); /* closes the @ completion */
    await page.click("#send");
    step("approve the tool");
    await clickNow(page, ".approval:not(:has(input.answer)) button.approve", T);
    step("answer ask_human");
    await page.waitForSelector(".approval input.answer", T);
    await page.type(".approval input.answer", "the top shelf");
    await clickNow(page, ".approval:has(input.answer) button.approve", T);
    step("the reply shows");
    await page.waitForFunction(() => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
      m.textContent.includes("Filed on the shelf")), T);
    return true;
  } finally {
    await browser.close();
  }
}

main().then((ok) => process.exit(ok ? 0 : 1), (e) => { step("FAILED: " + e.message); process.exit(1); });
