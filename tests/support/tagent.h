/* An agent alone, no world: the fixture of the agent-level tests (turn phases, memory ratings). */
#ifndef AG_TEST_TAGENT_H
#define AG_TEST_TAGENT_H

#include "agents/agent.h"

#include <stddef.h>

/* agent_new from s (the caller's, freed here) answering with the n scripted replies (borrowed for the
 * call: the agent copies them), on llm and host (both borrowed for the agent's life). A failure fails the
 * running test and leaves *out NULL. */
void tagent_new(agent_settings *s, const llm_script_reply *replies, size_t n, llm_client *llm, agent_host *host,
                agent **out);

#endif
