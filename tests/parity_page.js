// The parity world through agora serve's page in headless Chromium (run by tests/test_parity.c): the
// person's message typed and sent, the tool approval clicked, the ask_human question answered in its
// text box, and the reply seen. What was stored is compared by the C test, not here.
// Usage: node parity_page.js BASE_URL   (AGORA_PEERS names the installed peers)
"use strict";
const { launch, clickNow } = require(__dirname + "/support/browser.js");
const [base] = process.argv.slice(2);

function step(name) { process.stderr.write("parity_page: " + name + "\n"); }

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => step("page error: " + e.message));
    const T = { timeout: 30000 };
    step("load the page");
    await page.goto(base + "/", { waitUntil: "domcontentloaded" });
    await page.waitForSelector("#worlds li", T);
    step("the agents panel lists the clerk's MCP tools");
    await page.waitForFunction(() => [...document.querySelectorAll(".agent-card .tools")].some((t) =>
      /\becho\b/.test(t.textContent) && /\badd\b/.test(t.textContent)), T);
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
