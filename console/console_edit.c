/* The console's /edit [SEQ] TEXT and /retry (issue 13 §3): argument parsing around agora_chat_edit and
 * agora_chat_retry, the code agora serve's message routes share (the world delivers later, so the note
 * comes before the replies). */
#include "console/console_int.h"

#include <stdlib.h>
#include <string.h>

static int said_cut(console *c, int rc, uint64_t keep, ag_errmsg *em) {
  if (rc) return con_lib_fail(rc, em);
  con_print(c, "chat cut after message %llu; sending again\n", (unsigned long long)keep);
  return AG_OK;
}

/* "/edit SEQ TEXT", or "/edit TEXT" for the last human message: a first word that is a number is SEQ. */
int con_cmd_edit(console *c, char *args, ag_errmsg *em) {
  char *end = args, *text = args;
  unsigned long long seq = args[0] >= '0' && args[0] <= '9' ? strtoull(args, &end, 10) : 0;
  if (seq && (*end == ' ' || *end == '\t')) text = con_trim(end);
  else if (seq && *end) seq = 0; /* "2nd thoughts": text */
  if (!text[0] || (seq && text == args))
    return ag_fail(em, AG_ERR_INVALID, "usage: /edit [SEQ] TEXT (a human message of this chat; the last one without SEQ)");
  uint64_t kept = 0;
  int rc = agora_chat_edit(c->w, seq, text, &kept); /* before kept is read */
  return said_cut(c, rc, kept, em);
}

int con_cmd_retry(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /retry");
  uint64_t kept = 0;
  int rc = agora_chat_retry(c->w, &kept);
  return said_cut(c, rc, kept, em);
}
