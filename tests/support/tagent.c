#include "support/tagent.h"

#include "support/unit.h"

void tagent_new(agent_settings *s, const llm_script_reply *replies, size_t n, llm_client *llm, agent_host *host,
                agent **out) {
  s->llm.script.replies = (llm_script_reply *)replies;
  s->llm.script.n_replies = n;
  ag_errmsg em = {""};
  *out = NULL;
  if (agent_new(s, llm, host, out, &em)) unit_fail_(__FILE__, __LINE__, "agent_new: %s", em.text);
  s->llm.script.replies = NULL; /* borrowed, not the settings' to free */
  s->llm.script.n_replies = 0;
  agent_settings_free(s);
}
