/* A World: one libevent loop, one bus, the agents, and the world settings they decide by. It turns
 * agents' reports into bus events and knows when it is quiet (nothing queued, no agent thinking).
 * The core never prints: everything observable is a bus message or event. */
#ifndef AG_WORLD_H
#define AG_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "agents/agent.h"
#include "world/approval.h"
#include "world/bus.h"
#include "world/world_file.h"

typedef struct world world;

/* Heap a public message answered by every agent allocates per agent at once, measured on scripted agents
 * (bench_million: 0.12 page faults per agent, ~500 bytes): each agent's call in flight, its queued and
 * llm-start events, and the inbox and memory it makes at its first message. The runtime reserves this
 * much per agent once a world is built (ag_heap_reserve), so the first such message does not fault page
 * by page. */
#define WORLD_WAVE_BYTES 512

/* Creates a world from spec (copied; the script is not kept) on base (borrowed; must outlive the
 * world). Errors name the failing agent in em. */
int world_new(struct event_base *base, const world_spec *spec, world **out, ag_errmsg *em);
/* Cancels calls in flight and frees everything. */
void world_free(world *w);

const char *world_id(const world *w);
const char *world_name(const world *w);
struct event_base *world_base(const world *w);
bus *world_bus(const world *w);
llm_client *world_llm(const world *w);

int world_turn_limit(const world *w);
void world_set_turn_limit(world *w, int limit);
int world_memory_window(const world *w);
const char *world_main_agent(const world *w);
/* Takes from's turn limit, memory window (every agent's too), main agent and variables (copied): the
 * settings a person may change while the world is open (PATCH /api/worlds/{id}). Call it when the world
 * is quiet; from was validated as a world file (its main agent is one of w's). Nothing changes on
 * AG_ERR_NOMEM. */
int world_set_settings(world *w, const world_spec *from);
/* The world's settings and agents in world-file form (caller owns). */
cJSON *world_settings_json(const world *w);

/* Agents, in the order they were added. */
size_t world_agent_count(const world *w);
agent *world_agent_at(const world *w, size_t i);
/* By id or display name (case-insensitive); NULL when none. */
agent *world_agent_find(const world *w, const char *name_or_id);
/* Adds an agent (settings copied); AG_ERR_EXISTS when its id is taken. Emits agent-added. */
int world_add_agent(world *w, const agent_settings *s, ag_errmsg *em);
/* Removes an agent, cancelling its call. Emits agent-removed. AG_ERR_NOT_FOUND when none. */
int world_remove_agent(world *w, const char *name_or_id);
/* Gives agent s->name new settings (copied; see agent_reconfigure): memory and turn count stay. */
int world_update_agent(world *w, const agent_settings *s, ag_errmsg *em);

/* Publishes a message from sender (human, world, system or an agent id); the world sets seq and
 * time, parses mentions, and queues it. *out (may be NULL) is the queued message, borrowed. */
int world_publish(world *w, const char *sender, const char *text, ag_msg **out);
/* Queues a system event (copied; ev is borrowed). */
int world_emit(world *w, const world_event *ev);

/* The next message gets seq last + 1 (a chat continued or restored). */
void world_set_last_seq(world *w, uint64_t last);
uint64_t world_last_seq(const world *w);
/* Forgets the conversation: every agent's memory and turns, calls in flight; seq restarts at 1. */
void world_reset_conversation(world *w);

/* Report llm-chunk events (console, --json --stream). */
void world_set_emit_chunks(world *w, int on);

int world_is_quiet(const world *w);
/* world_is_quiet after delivering what is already published: the check before a person's action (an
 * edit, a branch, a delete), which must not be refused for an event that was only waiting for the
 * loop's next pass (the loop may serve a request before the drain a callback just scheduled). */
int world_quiet_now(world *w);
/* Number of agents thinking right now. */
size_t world_thinking(const world *w);
/* The ids of w's agents thinking right now, ", "-separated, into out (cap bytes; names that do not fit
 * are left out): what the cancelled event names. "" when nobody is thinking. */
void world_thinking_names(const world *w, char *out, size_t cap);
/* Runs the loop until the world is quiet. AG_ERR_STATE if the loop has nothing left to wait for
 * while the world is not quiet (a bug), AG_ERR_CANCELLED if world_interrupt was called. */
int world_run_until_quiet(world *w);
/* Makes world_run_until_quiet return (from a signal or input handler on the loop). */
void world_interrupt(world *w);
/* 1 when world_interrupt was called since world_run_until_quiet last began or world_interrupt_clear, for
 * a loop of its own to look at (the clock's real-time wait); world_interrupt_clear starts such a loop. */
int world_interrupted(const world *w);
void world_interrupt_clear(world *w);
/* Cancels every reply in flight (Ctrl-C); each cancelled turn ends with a turn-end event. */
void world_cancel_all(world *w);
/* Runs agent agent_id's turn answering m (borrowed) again: a turn in flight or waiting in its inbox
 * when the process stopped (docs/time.md). A message that is already the newest entry of its restored
 * memory is not remembered twice; the turn's turn-queued and llm-start events say rerun.
 * AG_ERR_NOT_FOUND for an unknown agent. */
int world_rerun(world *w, const char *agent_id, ag_msg *m);

/* Approvals (world/approval.h): a tool call declared "approve": true asks the approver and the agent's
 * turn waits for world_approval_answer while everything else goes on. Without an approver every such
 * call is denied at once (the denial goes back to the model as the tool's result). ap is copied, ud
 * borrowed; NULL removes the approver. */
void world_set_approver(world *w, const world_approver *ap, void *ud);
/* Milliseconds a request waits before it is denied (withdrawn with timed_out 1); 0 (default): none. */
void world_set_approval_timeout(world *w, long ms);
/* Answers request id (1 allow, 0 deny); the agent goes on from the loop. AG_ERR_NOT_FOUND when the
 * request is not pending (ended, cancelled, timed out), AG_ERR_STATE when already answered. */
int world_approval_answer(world *w, uint64_t id, int allow);
/* Answers request id with a text (copied): an ask_human question's answer (allow 1), or why nobody
 * answers it (allow 0, text may be NULL). Codes as world_approval_answer. */
int world_approval_reply(world *w, uint64_t id, int allow, const char *text);
/* Requests waiting for an answer. */
size_t world_approvals_pending(const world *w);

/* Time (docs/time.md). The world's settings with its variables, clock and schedule (borrowed). */
const world_spec *world_time_spec(const world *w);
/* 1 when the world runs on a virtual clock: messages are stamped with sim_ms. */
int world_is_virtual(const world *w);
/* The world's time: simulated in virtual mode, else the wall time (epoch ms). */
int64_t world_now(const world *w);
/* Moves the virtual clock (the clock driver, world/clock.h, does this). */
void world_set_sim_time(world *w, int64_t ms);
/* The virtual clock jumps to ms because another chat (with its own time) became current: unlike the
 * clock's own moves it may go backwards, and the clock driver rebuilds its schedule from there
 * (world_time_epoch counts these jumps). delivered: what fell due at ms itself was delivered already (a
 * stored chat resting at ms), so the schedule goes on after ms; else (a new chat) from ms.
 * world_sim_start is where a new chat's time begins: the clock's `start`, else the real time when the
 * world was built. */
void world_time_rebase(world *w, int64_t ms, int delivered);
uint64_t world_time_epoch(const world *w);
/* The instant the schedule starts from (world_now, or just after a rebase that delivered it). */
int64_t world_schedule_from(const world *w);
int64_t world_sim_start(const world *w);
/* text with its `{{name}}` rendered at world_now (date, time, weekday), agent_name (may be NULL) as
 * {{agent}}. *out is the caller's. AG_ERR_INVALID with em for an unknown or malformed variable. */
int world_render(world *w, const char *text, const char *agent_name, char **out, ag_errmsg *em);

/* A world spread over processes (cluster/, docs/distributed.md). The bus's transport carries the
 * messages and brings them back in one total order (world_receive); these say which agents answer in
 * this process and publish the end of each turn, so every process starts an agent's next turn at the
 * same point of that order. The world, agents and rules are otherwise the same. */
typedef struct world_cluster {
  void *ctx;
  /* 1 when agent_id's LLM calls run in this process. */
  int (*is_local)(void *ctx, const char *agent_id);
  /* Publishes that agent_id's turn answering seq trigger ended; counter: its scripted-reply position. */
  int (*turn_end)(void *ctx, const char *agent_id, uint64_t trigger, size_t counter);
  /* Sees every event this process emits (borrowed for the call), before it is queued, so that what it
   * publishes comes before the turn's end (may be NULL). */
  void (*report)(void *ctx, const world_event *e);
} world_cluster;
/* c is copied (ctx borrowed); NULL: one process. */
void world_set_cluster(world *w, const world_cluster *c);

/* A message as the total order brings it back (strings borrowed). */
typedef struct world_wire_msg {
  const char *sender, *text;
  ag_kind kind;
  int64_t ts_ms;
  int has_sim;
  int64_t sim_ms;
  uint64_t seq;   /* its place in the chat */
} world_wire_msg;
/* Delivers in's message on the bus; an agent's message joins its author's memory (spread over processes,
 * an agent's publish gives it no message: its own copy is the one that comes back). */
int world_receive(world *w, const world_wire_msg *in);
/* agent_id's turn answering trigger ended (in whichever process answered it). */
void world_receive_turn_end(world *w, const char *agent_id, uint64_t trigger, size_t counter);
/* agent_id now answers in this process: its turn started elsewhere and not finished is run here. */
void world_resume_agent(world *w, const char *agent_id);

/* An event another process reported (an agent it answers for failed, an MCP server of its would not
 * start): shown on the bus as this process's own, not reported again; an llm-error counts as a failed
 * call (world_failed_calls), as it would in one process. */
int world_receive_event(world *w, const world_event *ev);

/* A memory step another process made for an agent it answers for (docs/distributed.md "Memory across
 * hosts"): a remember result (EV_TOOL_RESULT of tool "remember": json {"remembered", "importance",
 * "at_ms"}), a reflection (EV_REFLECTION), a model's summary (EV_SUMMARY) or ratings (EV_MEMORY_RATED),
 * with its after_seq. The agent here gets it as if it had made it (a note, insights, its summary, the
 * importances), and it goes on the bus as an event of this process's (stored in the chat's thread), not
 * reported again. AG_ERR_NOT_FOUND for an unknown agent, AG_ERR_INVALID for another kind or a result that
 * is not a note; an agent not in the mode the step needs takes nothing, and the step is still stored, as
 * it is where it was made. */
int world_receive_memory(world *w, const world_event *ev);

/* LLM calls that ended in error since the world was made (here, or reported by another process). */
size_t world_failed_calls(const world *w);

#endif
