/* libagora: an open world's MCP servers as `agora serve` shows them, and a restart of one (API version 11,
 * include/agora_server.h), on serve's own code (runtime/mcp_status.c). */
#include "lib/agora_int.h"

#include "runtime/mcp_status.h"

#include <stddef.h>

/* A world closing later has no runtime any more: nothing of its servers is left to show or restart. */
static int usable(agora_world *w, const char *fn, ag_errmsg *em) {
  if (!w) return ag_fail(em, AG_ERR_INVALID, "%s: the world is NULL", fn);
  if (agora__closing_id(w, 0)) return ag_fail(em, AG_ERR_STATE, "%s: the world is closing", fn);
  return AG_OK;
}

int agora_mcp_servers(agora_world *w, char **json) {
  ag_errmsg em = {""};
  int rc = !json ? ag_fail(&em, AG_ERR_INVALID, "agora_mcp_servers: json is NULL") : AG_OK;
  if (json) *json = NULL;
  if (!rc) rc = usable(w, "agora_mcp_servers", &em);
  if (!rc) {
    cJSON *j = rt_mcp_status_json(w->rt, world_time_spec(w->w));
    rc = j ? agora__hand_out(j, json, &em) : ag_fail(&em, AG_ERR_NOMEM, "out of memory");
  }
  return agora__fail(rc, &em);
}

int agora_mcp_restart(agora_world *w, const char *server) {
  ag_errmsg em = {""};
  int rc = !server ? ag_fail(&em, AG_ERR_INVALID, "agora_mcp_restart: server is NULL") : AG_OK;
  if (!rc) rc = usable(w, "agora_mcp_restart", &em);
  if (!rc) rc = rt_mcp_restart(w->rt, world_id(w->w), server, NULL, &em);
  return agora__fail(rc, &em);
}
