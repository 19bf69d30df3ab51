/* The console's /edit [SEQ] TEXT and /retry (issue 13 §3): argument parsing around chat/resend.h, the
 * code agora serve's message routes share (the bus delivers later, so the note comes before the replies). */
#include "console/console_int.h"

#include "chat/resend.h"

#include <stdlib.h>
#include <string.h>

static void said_cut(console *c, uint64_t keep) {
  con_print(c, "chat cut after message %llu; sending again\n", (unsigned long long)keep);
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
  int rc = chat_resend_edit(c->cw.cs, seq, text, &kept, em);
  if (!rc) said_cut(c, kept);
  return rc;
}

int con_cmd_retry(console *c, char *args, ag_errmsg *em) {
  if (args[0]) return ag_fail(em, AG_ERR_INVALID, "usage: /retry");
  uint64_t kept = 0;
  int rc = chat_resend_retry(c->cw.cs, &kept, em);
  if (!rc) said_cut(c, kept);
  return rc;
}
