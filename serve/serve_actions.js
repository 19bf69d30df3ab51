// agora serve's page: the chat and message actions of issue 24 (rename, retry, and on a message edit,
// branch and delete), on the routes docs/serve.md lists. Loaded after app.js, whose helpers it uses
// (api, wpath, enc, st, openCurrent, refreshChats): kept apart so that app.js stays one concept.
"use strict";
// ---- message and chat actions (issue 24): the console's /edit, /retry and a cut, over the API ----
// On hover a stored message offers: branch here, delete from here, and for a human message edit. The chat
// is shown again after a change (the messages after the cut are gone).
function msgAction(label, title, fn, id) {
  const b = document.createElement("button");
  b.type = "button"; b.textContent = label; b.title = title; if (id) b.id = id; else b.className = "act";
  b.onclick = (e) => { e.stopPropagation(); fn(); };
  return b;
}
function msgPath(seq) { return wpath() + "/chats/" + enc(st.chat) + "/messages/" + seq; }
function addMsgActions(d) {
  const seq = Number(d.dataset.seq), chat = st.chat;
  if (!seq || !chat || d.querySelector(".acts")) return;
  const bar = document.createElement("span");
  bar.className = "acts";
  if (d.classList.contains("human")) bar.append(msgAction("edit", "edit this message and send it again", () => {
    const old = d.querySelector(".body").textContent, text = prompt("Edit message #" + seq, old);
    if (text && text !== old) api("PUT", msgPath(seq), { text }).then(() => openCurrent()).catch(() => {});
  }));
  bar.append(msgAction("branch", "a new chat with the messages up to this one", () =>
    api("POST", wpath() + "/chats/" + enc(chat) + "/branch", { at: seq }).then(() => refreshChats()).catch(() => {})));
  bar.append(msgAction("delete", "delete this message and every one after it", () =>
    confirm("Delete message #" + seq + " and every one after it?") &&
    api("DELETE", msgPath(seq)).then(() => openCurrent()).catch(() => {})));
  d.append(bar);
}
$("transcript").addEventListener("mouseover", (e) => {
  const d = e.target.closest && e.target.closest(".msg[data-seq]");
  if (d) addMsgActions(d);
});
function addChatActions() {
  const retry = msgAction("Retry", "send the last human message again (what followed it goes)", () =>
    st.chat && api("POST", wpath() + "/chats/" + enc(st.chat) + "/retry").then(() => openCurrent()).catch(() => {}), "retry");
  const rename = msgAction("Rename", "give this chat a title", () => {
    const title = st.chat && prompt("Title of this chat", $("title").textContent);
    if (title) api("PATCH", wpath() + "/chats/" + enc(st.chat), { title }).then(() => refreshChats()).catch(() => {});
  }, "rename");
  $("cancel").after(retry, rename);
}
addChatActions();
// An empty database: a world can be made here (POST /api/worlds), from a world file's JSON the person edits;
// an error names the field (the status line), a world made is opened.
function addCreateWorld() {
  const p = document.createElement("p"), doc = document.createElement("textarea");
  doc.id = "new-world"; doc.rows = 8; doc.cols = 60; doc.spellcheck = false;
  doc.value = JSON.stringify({ name: "My world", agents: [
    { name: "Ann", provider: "openai", model: "gpt-4o-mini", system_prompt: "You are Ann." }] }, null, 2);
  const make = msgAction("Create this world", "POST /api/worlds: checked as a world file", () => {
    let body;
    try { body = JSON.parse(doc.value); } catch (e) { status("not a JSON document: " + e.message); return; }
    api("POST", "/api/worlds", body).then(() => { status(""); return loadWorlds(); }).catch(() => {}); // api() says why
  }, "create-world");
  p.append("or write one here (a world file's JSON):", document.createElement("br"), doc, document.createElement("br"), make);
  $("empty").append(p);
}
addCreateWorld();
