/* World files (docs/world-file.md): strict loading into a world_spec, with every error naming the
 * file and the JSON path ("world.json: agents[1].provider: unknown provider 'nope'"). */
#ifndef AG_WORLD_FILE_H
#define AG_WORLD_FILE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "agents/agent.h"
#include "llm/budget.h"
#include "llm/cache.h"
#include "llm/limiter.h"
#include "world/cron.h"

/* bytes: a world of 1,000,000 agents with a short script each is about 60 MB; the cap leaves room
 * for longer prompts while a file that is no world (a disk image, a log) is refused before it is read */
#define WORLD_FILE_MAX (256u << 20)

typedef struct world_step {
  int new_chat; /* {"new_chat": true}; otherwise a message (or a wait) */
  int64_t wait_ms; /* {"wait": "2h"}: > 0, and from/text are NULL */
  char *from;   /* owned */
  char *text;   /* owned */
} world_step;

/* A world's clock (docs/time.md): real (wall time) or virtual (discrete-event simulation). */
typedef struct world_clock_spec {
  int is_virtual;
  int has_start, has_until;
  int64_t start_ms, until_ms; /* epoch ms, UTC */
} world_clock_spec;

typedef enum world_sched_kind { WORLD_SCHED_CRON, WORLD_SCHED_EVERY, WORLD_SCHED_AT } world_sched_kind;

/* One `schedule` item. */
typedef struct world_sched_item {
  world_sched_kind kind;
  cron cron;         /* WORLD_SCHED_CRON */
  int64_t ms;        /* the period (EVERY) or the instant (AT) */
  char *spec;        /* owned: the item's cron/every/at text as written */
  char *from;        /* owned */
  char *text;        /* owned, a template (world/template.h) */
  int skip_when_busy;/* when_busy: "skip" */
} world_sched_item;

/* One `mcp_servers` entry (world/mcp_spec.c, docs/mcp.md): a command to start (stdio) or a URL
 * (Streamable HTTP). env and header values are kept as written: ${VAR} is read from the environment
 * only when the server starts, so a spec (and what is stored from it) holds variable names, never
 * their values. All strings owned. */
typedef struct world_mcp_server {
  char *name;
  char *command;           /* stdio; a relative path is resolved against the world file's folder */
  char **args;
  size_t n_args;
  char **env_names, **env_values;
  size_t n_env;
  char *cwd;               /* NULL: the world file's folder (or Agora's when the spec has no file) */
  long timeout_ms;         /* 0: the client's default */
  char *url;               /* Streamable HTTP */
  char **header_names, **header_values;
  size_t n_headers;
} world_mcp_server;

/* Everything a world file says. All memory owned by the spec. */
typedef struct world_spec {
  char *name;
  char id[64];
  char *description;     /* may be NULL */
  int turn_limit;        /* default 5 */
  int memory_window;     /* default 10 */
  char *main_agent;      /* an agent id, or NULL */
  agent_settings *agents;
  size_t n_agents;
  world_step *steps;
  size_t n_steps;
  char **var_names, **var_values; /* `variables`, n_vars each, owned */
  size_t n_vars;
  world_clock_spec clock;
  world_sched_item *sched;
  size_t n_sched;
  world_mcp_server *mcp;  /* `mcp_servers`, in file order */
  size_t n_mcp;
  llm_budget budget;      /* `budget` and `pricing` (world/llm_spec.c); all 0: none */
  llm_cache_mode llm_cache; /* `llm_cache` (world/llm_spec.c), default off; --llm-cache overrides it */
  llm_rate_limits rate_limits; /* `rate_limits` (world/llm_spec.c), by base URL or "default" */
} world_spec;

/* Reads and validates path. On failure em says "<path>: <json path>: <reason>" and the code is
 * AG_ERR_INVALID (or AG_ERR_NOT_FOUND/AG_ERR_IO/AG_ERR_TOO_BIG for the file itself). */
int world_spec_load(const char *path, world_spec *out, ag_errmsg *em);
/* The same for JSON text; label names the source in messages. */
int world_spec_parse(const char *json, size_t len, const char *label, world_spec *out, ag_errmsg *em);
/* The same for a parsed document (borrowed). */
int world_spec_from_json(const cJSON *root, const char *label, world_spec *out, ag_errmsg *em);
/* The settings as a JSON document in world-file form, without the script (for storage and
 * snapshots). Never contains a key: only the name of the variable that holds it. Caller owns. */
cJSON *world_spec_to_json(const world_spec *spec);
/* One agent's settings in world-file form (caller owns). */
cJSON *world_agent_to_json(const agent_settings *s);
void world_spec_free(world_spec *spec);
/* Frees the agents' settings only (n_agents 0): a world built from spec holds its own copies, and at a million
 * agents the spec's are a few hundred MB that the first message could use. */
void world_spec_free_agents(world_spec *spec);

#endif
