// The page's chat and message actions (serve/serve_actions.js, issue 24) in a real browser (headless
// Debian chromium driven by puppeteer-core, run by tests/test_serve_api2.c): on a chat of four messages
// (@a one, r1, @a two, r2), a human message is edited and sent again, the last turn retried, a message
// deleted with those after it, the chat branched at a message and renamed. No page error, nothing fetched
// from elsewhere. The screenshot, with a message's actions shown, is left at SCREENSHOT.
// With --empty, on an empty database: a world is created from the page (bad JSON and a bad field named on
// the status line first), then opened.
// Usage: node serve_actions_page.js BASE_URL SCREENSHOT.png [--empty]   (AGORA_PEERS names the installed peers)
"use strict";
const { launch, assertClean } = require(__dirname + "/support/browser.js");
const [base, shot, mode] = process.argv.slice(2);

function step(name) { process.stderr.write("serve_actions_page: " + name + "\n"); }
const msg = (seq) => '#transcript .msg[data-seq="' + seq + '"]';
// The texts of the messages shown, "SEQ TEXT" each, top to bottom.
function shown(page) {
  return page.$$eval("#transcript .msg[data-seq]", (l) => l.filter((m) => m.dataset.seq)
    .map((m) => m.dataset.seq + " " + m.querySelector(".body").textContent.trim()).join("|"));
}
// Marks the messages shown now: waitShown then waits for the page to show the chat again after an action.
function markOld(page) { return page.$$eval("#transcript .msg", (l) => l.forEach((m) => { m.dataset.old = "1"; })); }
async function waitShown(page, T, want) {
  await page.waitForFunction((w) => !document.querySelector("#transcript .msg[data-old]") && [...document.querySelectorAll("#transcript .msg[data-seq]")]
    .filter((m) => m.dataset.seq).map((m) => m.dataset.seq + " " + m.querySelector(".body").textContent.trim()).join("|") === w, T, want)
    .catch(async () => { throw new Error("expected " + want + ", the page shows " + await shown(page)); });
}
// Hovers message seq and clicks its action label.
async function act(page, seq, label) {
  await markOld(page);
  await page.hover(msg(seq) + " .who");
  await page.waitForSelector(msg(seq) + " .acts", { visible: true, timeout: 5000 });
  const done = await page.$$eval(msg(seq) + " .acts button", (l, t) => {
    const b = l.find((x) => x.textContent === t);
    if (b) b.click();
    return !!b;
  }, label);
  if (!done) throw new Error("message " + seq + " has no '" + label + "' action");
}

async function flow(page, T, answers) {
  step("the chat opens");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await waitShown(page, T, "1 @a one|2 r1|3 @a two|4 r2");
  if (await page.$(msg(2) + " .acts button")) throw new Error("an agent's message has actions before a hover");
  step("edit message 3: sent again, answered afresh");
  answers.push("@a TWO");
  await act(page, 3, "edit");
  await waitShown(page, T, "1 @a one|2 r1|3 @a TWO|4 r2");
  await page.hover(msg(2) + " .who");
  const agentActs = await page.$$eval(msg(2) + " .acts button", (l) => l.map((b) => b.textContent).join(","));
  if (agentActs !== "branch,delete") throw new Error("an agent's message offers " + agentActs);
  await page.screenshot({ path: shot });
  step("retry: the last human message again");
  const retried = page.waitForResponse((r) => r.url().endsWith("/retry") && r.request().method() === "POST", T);
  await markOld(page);
  await page.click("#retry");
  if ((await retried).status() !== 202) throw new Error("retry answered " + (await retried).status());
  await waitShown(page, T, "1 @a one|2 r1|3 @a TWO|4 r2");
  step("delete message 3 and those after it");
  await act(page, 3, "delete");
  await waitShown(page, T, "1 @a one|2 r1");
  step("branch at message 1: a second chat");
  await act(page, 1, "branch");
  await page.waitForFunction(() => document.querySelectorAll("#chats li").length === 2, T);
  step("rename the chat");
  answers.push("Renamed by the page");
  await page.click("#rename");
  await page.waitForFunction(() => [...document.querySelectorAll("#chats li .name")].some((n) => n.textContent === "Renamed by the page"), T);
}

// Creates a world from the empty page: the status line names what is wrong until it is right.
async function createWorld(page, T) {
  step("empty: a world created here");
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  await page.waitForSelector("#new-world", { visible: true, timeout: 20000 });
  const tryDoc = async (text, want) => {
    await page.$eval("#new-world", (t, v) => { t.value = v; }, text);
    await page.click("#create-world");
    if (want) await page.waitForFunction((w) => document.getElementById("status").textContent.includes(w), T, want)
      .catch(async () => { throw new Error("status: " + await page.$eval("#status", (e) => e.textContent) + ", expected " + want); });
  };
  await tryDoc("{\"name\": ", "not a JSON document");
  await tryDoc('{"name": "Made here", "agents": [{"name": "x", "provider": "nope"}]}', "agents[0].provider");
  await tryDoc('{"name": "Made here", "agents": [{"name": "x", "provider": "script", "replies": ["made"]}]}', null);
  await page.waitForFunction(() => [...document.querySelectorAll("#worlds li")].some((l) => l.textContent === "Made here") &&
    document.getElementById("empty").hidden && document.querySelector("#agents .agent-card") &&
    !document.getElementById("status").textContent, T);
  await page.screenshot({ path: shot });
}

async function main() {
  const browser = await launch();
  let ok = false;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    const offsite = [], errors = [], answers = [];
    page.on("request", (r) => { if (!r.url().startsWith(base)) offsite.push(r.url()); });
    page.on("dialog", (d) => (d.type() === "prompt" ? d.accept(answers.shift()) : d.accept()));
    page.on("pageerror", (e) => { errors.push(e.message); step("page error: " + e.message); });
    if (mode === "--empty") await createWorld(page, { timeout: 20000 });
    else await flow(page, { timeout: 20000 }, answers);
    assertClean(errors, offsite);
    ok = true;
  } finally {
    await browser.close();
  }
  return ok;
}

main().then((ok) => process.exit(ok ? 0 : 1), (e) => { step("FAILED: " + e.message); process.exit(1); });
