/* libagora: the current chat's past edited (API version 6, include/agora.h): the console's /edit, /retry
 * and /clear and agora serve's PUT/DELETE …/messages/{seq} and POST …/retry, on the same code
 * (chat/resend.h, chat_session_clear_agent). */
#include "lib/agora_int.h"

#include "chat/resend.h"

/* The world's session, or why there is none; refused on a chat the world shares over NATS. */
static chat_session *session(agora_world *w, const char *fn, ag_errmsg *em) {
  chat_session *cs = rt_session(w->rt);
  const char *cur = cs ? chat_session_current(cs) : NULL, *refused = NULL;
  if (!cs) ag_fail(em, AG_ERR_STATE, "%s: the world was opened without a database (AGORA_NO_SAVE)", fn);
  else if (cur && (refused = rt_nats_refuses(rt_join(w->rt), "truncate", cur)))
    ag_fail(em, AG_ERR_STATE, "%s: %s", fn, refused);
  return cs && !refused ? cs : NULL;
}

int agora_chat_edit(agora_world *w, uint64_t seq, const char *text, uint64_t *kept) {
  ag_errmsg em = {""};
  chat_session *cs = session(w, "agora_chat_edit", &em);
  int rc = !cs ? AG_ERR_STATE
           : !text || !text[0] ? ag_fail(&em, AG_ERR_INVALID, "agora_chat_edit: the text is empty")
                               : chat_resend_edit(cs, seq, text, kept, &em);
  return agora__fail(rc, &em);
}

int agora_chat_retry(agora_world *w, uint64_t *kept) {
  ag_errmsg em = {""};
  chat_session *cs = session(w, "agora_chat_retry", &em);
  return agora__fail(cs ? chat_resend_retry(cs, kept, &em) : AG_ERR_STATE, &em);
}

int agora_chat_cut(agora_world *w, uint64_t seq) {
  ag_errmsg em = {""};
  chat_session *cs = session(w, "agora_chat_cut", &em);
  int rc = !cs ? AG_ERR_STATE
           : !seq ? ag_fail(&em, AG_ERR_INVALID, "agora_chat_cut: seq 0 (messages are numbered from 1)")
                  : chat_resend_cut(cs, seq, &em);
  return agora__fail(rc, &em);
}

int agora_agent_forget(agora_world *w, const char *agent) {
  ag_errmsg em = {""};
  chat_session *cs = rt_session(w->rt);
  int rc = !agent ? ag_fail(&em, AG_ERR_INVALID, "agora_agent_forget: agent is NULL")
           : agora__local_only(w, "agora_agent_forget", &em) ? AG_ERR_STATE
           : !cs  ? ag_fail(&em, AG_ERR_STATE, "agora_agent_forget: the world was opened without a database "
                            "(AGORA_NO_SAVE)")
                  : chat_session_clear_agent(cs, agent, &em);
  return agora__fail(rc, &em);
}
