/* The one runtime: opens a world for every door (run, say, console, serve, host, tools and the chats
 * commands) in one documented order and closes it in the reverse order (docs/architecture.md "The
 * runtime"). A command is argument parsing plus rt_open; none of them builds a world, starts MCP servers,
 * joins NATS or registers bus hooks on its own.
 *
 * Open order: world spec (file or database) → overrides → loop → world → key check → output (the
 * door's bus handler at the output phase, its idle hook in the output slot) → approver → session
 * (attached, no chat yet) → NATS (publish, host or view) → MCP servers (a world from a file only) →
 * the chat (new, current, named) → the clock (the chat's simulated time). rt_close undoes it backwards. */
#ifndef AG_RUNTIME_H
#define AG_RUNTIME_H

#include "chat/session.h"
#include "cluster/cluster.h"
#include "runtime/key_env.h"
#include "runtime/nats_join.h"
#include "runtime/overrides.h"
#include "world/clock.h"
#include "world/world.h"

struct event_base;

typedef struct runtime runtime;

/* Where the world comes from. Only a file the person named on the command line may start programs
 * (its mcp_servers); a world from the database (an imported snapshot, one stored by another door, a
 * world created over HTTP) never does. */
typedef enum rt_source { RT_FROM_FILE, RT_FROM_STORE } rt_source;

/* Which chat becomes current once the world is open. */
typedef enum rt_chat {
  RT_CHAT_NONE,    /* no session at all (--no-save; host without --db; tools) */
  RT_CHAT_ATTACH,  /* a session, no chat made current (the chats commands, host --db) */
  RT_CHAT_NEW,     /* a new chat, by the reuse rules (run) */
  RT_CHAT_CURRENT, /* the world's current chat, a new one when it has none (say, console, serve) */
  RT_CHAT_ID       /* opts.chat (run --chat, run --resume) */
} rt_chat;

/* The world's part on NATS JetStream (docs/distributed.md). */
typedef enum rt_nats {
  RT_NATS_OFF,
  RT_NATS_PUBLISH, /* run --nats: publishes its script, answers for no agent (with opts.chat: joins it) */
  RT_NATS_HOST,    /* host: answers for a share of the agents; with a database, keeps a copy */
  RT_NATS_VIEW     /* console, serve: joins as publisher and viewer; the stream's chat is current */
} rt_nats;

/* Everything a door says about the world it opens. Strings and pointers are borrowed for rt_open; st,
 * base, the handlers' ud and the approver's ud must outlive the runtime. Zero is a sensible default
 * for every field but world/chat. */
typedef struct rt_opts {
  const char *cmd;         /* names the command in messages ("run") */
  const char *world;       /* a world file, or a stored world's id or display name; NULL: the world of
                              opts.chat (RT_CHAT_ID), else the database's only world */
  int from_store;          /* world names a stored world, even when a file has that name */
  const char *world_text;  /* instead of world: a world file's JSON text (the library, lib/), trusted as a
                              file the person named; labelled "world JSON" in messages */
  int inert;               /* nothing here calls an LLM (the chats commands): keys are not checked */
  int embeds;              /* with inert: only a memory embedder may be called (agora memory --query): its
                              keys are withheld as for any call and its vectors kept (llm_cache.h) */
  int quiet;               /* no notes on stderr (the library, which never prints) */
  store *st;               /* the database, or NULL (nothing stored; see open_db) */
  int open_db;             /* without st: the runtime opens db (or the default directory) itself, and
                              publishing on NATS only once the stream is joined (nothing is written when
                              it cannot join) */
  const char *db;          /* the --db given (MCP logs go to DB/logs); NULL: the default directory */
  int no_save;             /* MCP logs go to $TMPDIR */
  struct event_base *base; /* a loop to build on (serve: every world on one), or NULL: the runtime's own */
  rt_overrides over;
  const rt_allow_env *allow; /* may be NULL */
  const cluster_opts *nats;  /* with nats_role != RT_NATS_OFF */
  rt_nats nats_role;
  rt_chat pick;
  const char *chat;    /* RT_CHAT_ID's chat; with RT_NATS_PUBLISH: the stream's chat to continue */
  int rerun_turns;     /* chat_session_rerun_turns: the doors that talk to the world */
  int mcp;             /* start a file world's MCP servers (the doors that run agents) */
  int mcp_failures_ok; /* a server that fails to start does not fail the open (tools reports it) */
  int clock;           /* drive the world's schedule and clock (console, serve) */
  int emit_chunks;     /* streamed text as llm-chunk events */
  /* Called once the world is built, before anything is subscribed or started, so that the door can
   * make its output for this world (its id, its loop): 0 or an error (em says why). May be NULL. */
  int (*on_world)(void *ud, runtime *rt, ag_errmsg *em);
  bus_handler on_bus;  /* the door's output: messages and events at the output phase (may be NULL) */
  void *on_bus_ud;     /* ud of on_world, on_bus, on_idle and on_stream_chat */
  bus_idle_fn on_idle; /* the output's batch, flushed before the commit (may be NULL) */
  const world_approver *approver; /* tool approvals and ask_human (may be NULL: denied) */
  void *approver_ud;
  void (*on_stream_chat)(void *ud, const char *chat); /* RT_NATS_VIEW: the stream moved to chat */
} rt_opts;

/* Opens the world o names. On success *out is the caller's (rt_close); on failure *out is NULL, nothing
 * is left open and em says what is wrong, naming the file, field, option or chat (messages are whole:
 * print them as they are). AG_ERR_INVALID for bad input, AG_ERR_NOT_FOUND for an unknown world or
 * chat, AG_ERR_STATE for a chat another process holds, AG_ERR_IO for unreachable servers. */
int rt_open(const rt_opts *o, runtime **out, ag_errmsg *em);
/* Cancels the replies in flight and runs the loop until the world is quiet, so that what was published
 * is delivered and saved — for at most ms, so that a process always ends (and its chat's lock with
 * it), whatever its peers do. From a callback of the running loop it only cancels (a nested run of the
 * loop would be refused, with libevent's warning on stderr). */
void rt_settle(runtime *rt, long ms);
#define RT_SETTLE_MS 500
/* Settles (RT_SETTLE_MS), then closes everything rt_open opened, in reverse order. rt NULL: nothing. */
void rt_close(runtime *rt);

/* The parts, borrowed from rt (alive until rt_close). session: NULL with RT_CHAT_NONE; clock: NULL
 * without opts.clock; nats_join: NULL unless joined as a viewer. */
struct event_base *rt_base(const runtime *rt);
store *rt_store(const runtime *rt); /* NULL without a database */
world *rt_world(const runtime *rt);
chat_session *rt_session(const runtime *rt);
world_clock *rt_clock(const runtime *rt);
rt_nats_join *rt_join(const runtime *rt);
cluster *rt_cluster(const runtime *rt);
const world_spec *rt_spec(const runtime *rt); /* its script, schedule and clock; no agents (the world has them) */
rt_source rt_source_of(const runtime *rt);
/* Why a world from the database never starts its MCP servers (a static sentence, for the doors that
 * describe a stored world without opening it). */
extern const char rt_mcp_why_stored[];
/* Whether the world's MCP servers were started, and why not (a static sentence) when they were not. */
int rt_mcp_started(const runtime *rt, const char **why);

/* The sentence a door that never moves a virtual clock (say, serve) says when the world has one and
 * something is scheduled on it: its schedule is not delivered there (docs/architecture.md "Parity").
 * NULL on a real clock, without opts.clock, on NATS (the publisher's script delivers it), or with nothing
 * due. Static; not to be freed. */
const char *rt_clock_still(const runtime *rt);

/* 1 when the chat made current continues a saved one (its current chat, a chat named, the stream's),
 * 0 when it is new (a held current chat gives a new one). */
int rt_resumed(const runtime *rt);
/* Cancels every reply in flight; the ids of the agents that were thinking go into names (cap bytes,
 * ", "-separated, "" when none) for the cancelled event. */
void rt_cancel(runtime *rt, char *names, size_t cap);
/* Messages not stored (chat_session_failures), 0 without a session. */
size_t rt_unsaved(const runtime *rt);

#endif
