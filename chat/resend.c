/* The current chat cut and its human message sent again (chat/resend.h): shared by the console's /edit
 * and /retry and by agora serve's message routes, so that both doors mean the same thing. */
#include "chat/resend.h"

#include "chat/session_int.h"
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

static void found_free(found_msg *f) {
  free(f->sender);
  free(f->text);
}

/* The chat is quiet and current: the common checks, then message want (0: the last human one). */
static int find(chat_session *cs, uint64_t want, const char *verb, found_msg *f, ag_errmsg *em) {
  *f = (found_msg){.want = want}; /* first: the callers free f's strings on every path */
  const char *id = chat_session_current(cs);
  if (!id) return ag_fail(em, AG_ERR_STATE, "no current chat");
  if (!world_quiet_now(cs->w)) return ag_fail(em, AG_ERR_STATE, "wait until the replies in flight are in");
  int rc = chat_messages_each(cs->st, id, want ? want : 1, found_cb, f, em);
  if (!rc && !f->seq) {
    rc = want ? ag_fail(em, AG_ERR_NOT_FOUND, "this chat has no message %llu", (unsigned long long)want)
              : ag_fail(em, AG_ERR_NOT_FOUND, "this chat has no human message to %s", verb);
  }
  return rc;
}

/* Cuts the chat after keep and sends text as the human. */
static int resend(chat_session *cs, uint64_t keep, const char *text, uint64_t *kept, ag_errmsg *em) {
  int rc = chat_session_truncate(cs, keep, em);
  if (rc) return rc;
  if (kept) *kept = keep;
  rc = world_publish(cs->w, "human", text, NULL);
  return rc ? ag_fail(em, rc, "cannot send the message: %s", ag_strerror(rc)) : AG_OK;
}

int chat_resend_edit(chat_session *cs, uint64_t seq, const char *text, uint64_t *kept, ag_errmsg *em) {
  found_msg f;
  int rc = find(cs, seq, "edit", &f, em);
  if (!rc && f.kind != AG_KIND_HUMAN)
    rc = ag_fail(em, AG_ERR_INVALID, "message %llu is from %s: only a human message can be edited",
                 (unsigned long long)f.seq, f.sender);
  if (!rc) rc = resend(cs, f.seq - 1, text, kept, em);
  found_free(&f);
  return rc;
}

int chat_resend_retry(chat_session *cs, uint64_t *kept, ag_errmsg *em) {
  found_msg f;
  int rc = find(cs, 0, "retry", &f, em);
  if (!rc) rc = resend(cs, f.seq - 1, f.text, kept, em);
  found_free(&f);
  return rc;
}

int chat_resend_cut(chat_session *cs, uint64_t seq, ag_errmsg *em) {
  if (!seq) return ag_fail(em, AG_ERR_NOT_FOUND, "there is no message 0");
  found_msg f;
  int rc = find(cs, seq, "delete", &f, em);
  if (!rc) rc = chat_session_truncate(cs, seq - 1, em);
  found_free(&f);
  return rc;
}
