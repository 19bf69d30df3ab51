// agora serve's page in a real browser, part of tests/serve_page.js (run by tests/test_serve_page.c), kept
// apart so that serve_page.js stays under the project's 600 lines: an ask_human prompt outliving a re-read.
"use strict";
const { clickNow } = require(__dirname + "/support/browser.js");

// An ask_human question half answered when the page reads its chat again (openCurrent, as after a chat
// event, a resync or a link): the box keeps the text, the focus and the caret, typing goes on where it
// was; the person switches to another world and back: the box holds the text still; and the agent gets
// exactly what was typed.
async function askKeepsTyping(page, T, step) {
  step("an answer being typed outlives a re-read of the chat");
  await page.type("#input", "@asker where does it go?");
  await page.keyboard.press("Escape");
  await page.click("#send");
  await page.waitForSelector(".approval input.answer", T);
  await page.click(".approval input.answer");
  await page.keyboard.type("the shelf");
  for (let i = 0; i < "shelf".length; i++) await page.keyboard.press("ArrowLeft"); // the caret after "the "
  await page.$eval("#transcript", (t) => { t.firstElementChild.__old = true; });
  await page.evaluate(() => openCurrent());
  if (await page.$eval("#transcript", (t) => t.firstElementChild && t.firstElementChild.__old))
    throw new Error("the chat was not read again");
  const kept = await page.$eval(".approval input.answer", (i) => [i.value, document.activeElement === i, i.selectionStart]);
  if (kept[0] !== "the shelf" || !kept[1] || kept[2] !== 4) throw new Error("after a re-read the box holds '" + kept[0] +
    "', focused " + kept[1] + ", caret at " + kept[2] + " (was 'the shelf', focused, at 4)");
  await page.keyboard.type("top ");
  const typed = await page.$eval(".approval input.answer", (i) => i.value);
  if (typed !== "the top shelf") throw new Error("typing after the re-read gave '" + typed + "'");
  // To another world (its cards only: this one goes) and back: the draft is this world's, kept by id.
  await clickNow(page, '#worlds li[data-id="aardvark"]', T);
  await page.waitForFunction(() => document.querySelector("#worlds li.on")?.dataset.id === "aardvark" &&
    st.world === "aardvark" && !document.querySelector(".approval"), T);
  await clickNow(page, '#worlds li[data-id="browser"]', T);
  await page.waitForSelector(".approval input.answer", T);
  const back = await page.$eval(".approval input.answer", (i) => i.value);
  if (back !== "the top shelf") throw new Error("back from another world the box holds '" + back + "' (was 'the top shelf')");
  await clickNow(page, ".approval:has(input.answer) button.approve", T);
  await page.waitForFunction(() => !document.querySelector(".approval"), T);
  // the stored step (written with the turn's state, maybe after its reply shows): what ask_human returned
  const results = await (await page.waitForFunction(async () => {
    const j = await (await fetch(wpath() + "/chats/" + enc(st.chat) + "/messages?steps=1&after=0&limit=100")).json();
    const l = j.steps.filter((e) => e.event === "tool-result" && e.tool === "ask_human");
    return l.length ? l : null;
  }, { timeout: 20000, polling: 200 })).jsonValue();
  if (results.length !== 1 || results[0].error || JSON.stringify(results[0].result) !== JSON.stringify({ answer: "the top shelf" }))
    throw new Error("asker got " + JSON.stringify(results));
  await page.evaluate(() => openCurrent()); // answered: a re-read brings no box back
  if (await page.$(".approval")) throw new Error("an answered question came back after a re-read");
}

module.exports = { askKeepsTyping };
