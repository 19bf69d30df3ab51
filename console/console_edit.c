/* The console's /edit [SEQ] TEXT and /retry (issue 13 §3): the current chat is cut after the message
 * before (chat_session_truncate: one transaction), then the new or same text is sent again as the
 * human, so the agents answer it afresh. */
#include "console/console_int.h"

#include "chat/transcript.h"

#include <stdlib.h>
#include <string.h>

/* A message of the current chat: seq (0: the last human one) with its kind and text (owned). */
typedef struct found_msg {
  uint64_t want, seq;
  ag_kind kind;
  char *sender, *text;
} found_msg;

static int found_cb(const chat_entry *e, void *arg) {
  found_msg *f = arg;
  if (f->want && e->msg->seq != f->want) return CHAT_STOP;
  if (!f->want && e->msg->kind != AG_KIND_HUMAN) return 0;
  free(f->sender);
  free(f->text);
  f->seq = e->msg->seq;
  f->kind = e->msg->kind;
  f->sender = strdup(e->msg->sender);
  f->text = strdup(e->msg->text);
  if (!f->sender || !f->text) return AG_ERR_NOMEM;
  return f->want ? CHAT_STOP : 0;
}

/* Cuts the chat after keep and sends text as the human. */
static int resend(console *c, uint64_t keep, const char *text, ag_errmsg *em) {
  int rc = chat_session_truncate(c->cw.cs, keep, em);
  if (rc) return rc;
  con_print(c, "chat cut after message %llu; sending again\n", (unsigned long long)keep);
  rc = world_publish(c->cw.w, "human", text, NULL);
  return rc ? ag_fail(em, rc, "cannot send the message: %s", ag_strerror(rc)) : AG_OK;
}

/* The chat is quiet and current: the common checks, then message want (0: the last human one). */
static int find(console *c, uint64_t want, const char *verb, found_msg *f, ag_errmsg *em) {
  *f = (found_msg){.want = want}; /* first: the callers free f's strings on every path */
  const char *id = chat_session_current(c->cw.cs);
  if (!id) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!world_is_quiet(c->cw.w)) return ag_fail(em, AG_ERR_STATE, "wait until the replies in flight are in");
  int rc = chat_messages_each(c->st, id, want ? want : 1, found_cb, f, em);
  if (!rc && !f->seq) {
    rc = want ? ag_fail(em, AG_ERR_NOT_FOUND, "this chat has no message %llu", (unsigned long long)want)
              : ag_fail(em, AG_ERR_NOT_FOUND, "this chat has no human message to %s", verb);
  }
  return rc;
}

/* "/edit SEQ TEXT", or "/edit TEXT" for the last human message: a first word that is a number is SEQ. */
int con_cmd_edit(console *c, char *args, ag_errmsg *em) {
  char *end = args, *text = args;
  unsigned long long seq = args[0] >= '0' && args[0] <= '9' ? strtoull(args, &end, 10) : 0;
  if (seq && (*end == ' ' || *end == '\t')) text = con_trim(end);
  else if (seq && *end) seq = 0; /* "2nd thoughts": text */
  if (!text[0] || (seq && text == args))
    return ag_fail(em, AG_ERR_INVALID, "usage: /edit [SEQ] TEXT (a human message of this chat; the last one without SEQ)");
  found_msg f;
  int rc = find(c, seq, "edit", &f, em);
  if (!rc && f.kind != AG_KIND_HUMAN)
    rc = ag_fail(em, AG_ERR_INVALID, "message %llu is from %s: only a human message can be edited", seq, f.sender);
  if (!rc) rc = resend(c, f.seq - 1, text, em);
  free(f.sender);
  free(f.text);
  return rc;
}

int con_cmd_retry(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /retry");
  found_msg f;
  int rc = find(c, 0, "retry", &f, em);
  if (!rc) rc = resend(c, f.seq - 1, f.text, em);
  free(f.sender);
  free(f.text);
  return rc;
}
