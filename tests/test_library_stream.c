/* The event stream of a chat (API version 10, include/agora_server.h): agora_subscribe_chat sees one
 * chat's events, each with its chat and position (what agora serve's SSE ids are made of), and an idle
 * mark once the bus has delivered what it had, after the last of them; a subscription to every chat sees
 * the next chat's events with their own positions. Linked against libagora.so, nothing internal. */
#include "agora.h"
#include "support/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char town[] = "{\"name\": \"Stream\", \"defaults\": {\"provider\": \"script\"}, \"agents\": ["
                           " {\"name\": \"ann\", \"replies\": [\"@human one\", \"@human two\"]}]}";

/* What one subscription saw. */
typedef struct seen {
  char chat[AGORA_ID_MAX]; /* the chat every event should be in */
  int messages, idle, saved, elsewhere, behind, json_idle;
  uint64_t last_seq, position; /* the last message's seq; the last event's position */
  char last_kind[32];
} seen;

static void on_event(const agora_event *ev, void *ctx) {
  seen *s = ctx;
  const char *chat = agora_event_chat(ev), *kind = agora_event_kind(ev);
  if (!chat || strcmp(chat, s->chat)) s->elsewhere++;
  uint64_t pos = agora_event_position(ev);
  if (pos < s->position) s->behind++; /* positions never go back within a chat */
  s->position = pos;
  if (agora_event_type(ev) == AGORA_EVENT_MESSAGE) {
    s->messages++;
    s->last_seq = agora_event_seq(ev);
    if (pos != s->last_seq) s->behind++;
  }
  if (agora_event_type(ev) == AGORA_EVENT_IDLE) s->idle++, s->json_idle += agora_event_json(ev) != NULL;
  if (!strcmp(kind, "state-saved")) s->saved++;
  snprintf(s->last_kind, sizeof s->last_kind, "%s", kind);
}

static void one_chat_then_the_next(void) {
  char *db = unit_tmpdir();
  agora_world *w = NULL;
  CHECK_INT(agora_world_open(town, db, NULL, &w), AGORA_OK);
  if (!w) goto done;
  seen one = {.messages = 0}, all = {.messages = 0};
  snprintf(one.chat, sizeof one.chat, "%s", agora_chat_current(w));
  snprintf(all.chat, sizeof all.chat, "%s", one.chat);
  int a = agora_subscribe_chat(w, one.chat, AGORA_SUB_IDLE, on_event, &one);
  CHECK(a > 0);
  CHECK(agora_subscribe_chat(w, NULL, 0, on_event, &all) > 0);
  CHECK_INT(agora_publish(w, "human", "@ann hi"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(one.messages, 2);
  CHECK_INT(one.last_seq, 2);
  CHECK_INT(one.position, 2);
  CHECK_INT(one.elsewhere, 0);
  CHECK_INT(one.behind, 0);
  CHECK(one.saved >= 1); /* the saves are in the stream, after storage */
  CHECK(one.idle >= 1);
  CHECK_INT(one.json_idle, 0);
  CHECK_STR(one.last_kind, "idle"); /* the mark comes after the last event delivered */
  CHECK_INT(all.idle, 0);           /* only to a subscription that asked */
  CHECK_INT(all.messages, 2);
  /* a new chat: the first subscription hears nothing of it, the other sees it from its own start */
  CHECK_INT(agora_chat_title(w, "first"), AGORA_OK); /* a chat still titled "New Chat" would be reused */
  CHECK_INT(agora_chat_new(w), AGORA_OK);
  snprintf(all.chat, sizeof all.chat, "%s", agora_chat_current(w));
  CHECK(strcmp(all.chat, one.chat) != 0);
  all.position = 0;
  int before = one.messages + one.idle + one.saved;
  CHECK_INT(agora_publish(w, "human", "@ann again"), AGORA_OK);
  CHECK_INT(agora_run_until_quiet(w), AGORA_OK);
  CHECK_INT(one.messages + one.idle + one.saved, before);
  CHECK_INT(all.messages, 4);
  CHECK_INT(all.last_seq, 2); /* the new chat's own numbers */
  CHECK_INT(all.elsewhere, 0);
  CHECK_INT(all.behind, 0);
  CHECK_INT(agora_unsubscribe(w, a), AGORA_OK);
  /* wrong use: unknown flags, a chat that is no id, no function */
  CHECK_INT(agora_subscribe_chat(w, NULL, 0x10, on_event, &one), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "agora_subscribe_chat", "flags");
  CHECK_INT(agora_subscribe_chat(w, "", 0, on_event, &one), AGORA_ERR_INVALID);
  CHECK_HAS(agora_errmsg(), "chat");
  CHECK_INT(agora_subscribe_chat(w, NULL, 0, NULL, NULL), AGORA_ERR_INVALID);
done:
  agora_world_close(w);
  unit_rmrf(db);
  free(db);
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(one_chat_then_the_next)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
