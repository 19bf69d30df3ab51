// The parity world through agora serve's page in headless Chromium (run by tests/test_parity.c): the
// person's message typed and sent, the tool approval clicked, the ask_human question answered in its
// text box, and the reply seen. Or the recall world (long-term memory): its message sent, the last reply
// of its chain seen, and the archivist's memories opened under its card, where the note it stored with
// remember and the insight of its reflection show. What was stored is compared by the C test, not here.
// Usage: node parity_page.js BASE_URL [parity|recall]   (AGORA_PEERS names the installed peers)
"use strict";
const { launch, clickNow } = require(__dirname + "/support/browser.js");
const [base, world = "parity"] = process.argv.slice(2);

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
    if (world === "recall") return await recall(page, T);
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

// Types text, sends it, and waits until an agent's stored message holds reply.
async function sendAndSee(page, T, text, reply) {
  step("send: " + text);
  await page.type("#input", text);
  await page.keyboard.press("Escape"); /* closes the @ completion */
  await page.click("#send");
  await page.waitForFunction((r) => [...document.querySelectorAll(".msg.agent:not(.live)")].some((m) =>
    m.textContent.includes(r)), T, reply);
}

async function recall(page, T) {
  await sendAndSee(page, T, "@archivist the bridge is closed until spring", "take the ferry");
  await sendAndSee(page, T, "@archivist how do we cross?", "noted: the old quay");
  step("the archivist's memories show its notes and its insights");
  const card = '.agent-card[data-id="archivist"]';
  await clickNow(page, card + " .memories-toggle", T);
  await page.waitForFunction((c) => { const l = document.querySelector(c + " .memories");
    return l && ["the bridge is closed until spring", "the ferry leaves from the old quay", "the ferry replaces it",
                 "the way across now"].every((t) => l.textContent.includes(t)); }, T, card);
  return true;
}

main().then((ok) => process.exit(ok ? 0 : 1), (e) => { step("FAILED: " + e.message); process.exit(1); });
