/* The world's insides, shared by world.c (agents, delivery, quietness), world_remote.c (a world spread
 * over processes) and world_sim.c (its time). Not for use outside world/. */
#ifndef AG_WORLD_INT_H
#define AG_WORLD_INT_H

#include "agents/mention.h"
#include "world/template.h"
#include "world/world_mcp.h"
#include "world/world.h"

typedef struct world_slot {
  world *w;
  agent *a;
  agent_host host;
  int thinking; /* the agent's phase is not idle, as its last phase report said */
  int rerun; /* the agent's turn is a re-run after a crash (world_rerun), until it ends */
  uint64_t started_seq; /* the message its latest call answers (this chat) */
  unsigned sent; /* messages published in the current turn: part of their de-duplication ids */
} world_slot;

struct world {
  struct event_base *base;
  bus *bus;
  llm_client *llm;
  world_spec spec;          /* settings; agents[] and steps[] are not kept here */
  world_slot **slots;
  size_t n_slots, cap_slots;
  const char **ids;         /* agent ids for mention parsing, borrowed from the agents */
  size_t cap_ids;           /* room in ids */
  /* id → slot, open addressing: a message from an agent reaches only the agents it mentions. */
  world_slot **index;
  size_t index_cap;
  unsigned sub;             /* the world's subscription: it hands messages to its agents */
  size_t thinking;          /* slots thinking: counted from the agents' phase reports only */
  uint64_t last_seq;
  int emit_chunks;
  int interrupted;
  size_t failed_calls;
  approval_desk *approvals;
  template_vars *vars;      /* for `{{name}}` in prompts and texts (world_render) */
  int sim_on;               /* a virtual clock: messages carry sim_now */
  int64_t sim_now;
  int64_t sim_start;        /* where a new chat's simulated time begins */
  uint64_t time_epoch;      /* world_time_rebase calls so far */
  int64_t sched_from;       /* the last rebase's schedule start */
  world_mcp *mcp;           /* the MCP servers, once world_mcp_start ran */
  world_cluster cluster;    /* is_local NULL: one process */
  uint64_t delivering;      /* seq of the message being handed to the agents */
};

/* The slot of agent id (NULL: none), through the world's id index. */
world_slot *world__find_slot(const world *w, const char *id);
/* Parses m's mentions once, at publish or receipt (any: every mention, for the unknown-mention event). */
int world__parse(world *w, ag_msg *m, mention_list *any);

#endif
