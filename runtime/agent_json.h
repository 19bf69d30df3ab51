/* An agent as it is now, in JSON: what `agora serve`'s GET /api/worlds/{id} lists and libagora's
 * agora_agents hands out (its settings in short, the turns used, whether it is thinking, its phase). */
#ifndef AG_RT_AGENT_JSON_H
#define AG_RT_AGENT_JSON_H

#include <cjson/cJSON.h>

#include "agents/agent.h"

/* {"id","name","provider","model"?,"key_withheld","turns","thinking","phase","memory","mcp_tools":[...]};
 * the caller's (cJSON_Delete), NULL when out of memory. */
cJSON *rt_agent_json(const agent *a);

#endif
