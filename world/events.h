/* The world's events (docs/behaviour.md §7), typed: one enum of kinds, one payload struct per kind. Nothing
 * below the output layer turns them into JSON (chat/event_json.c does, for the output and the stored
 * thread), so a renamed or misspelt kind is a compile error and a streamed chunk costs no JSON. */
#ifndef AG_WORLD_EVENTS_H
#define AG_WORLD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/* Every kind with its wire name, the one place the two meet. Adding a kind: one line here, its payload
 * below and its fields in chat/event_json.c. */
#define EV_KINDS(X)                        \
  X(EV_LLM_START, "llm-start")             \
  X(EV_LLM_CHUNK, "llm-chunk")             \
  X(EV_LLM_DONE, "llm-done")               \
  X(EV_LLM_ERROR, "llm-error")             \
  X(EV_TURN_LIMIT, "turn-limit")           \
  X(EV_TOOL_CALL, "tool-call")             \
  X(EV_TOOL_RESULT, "tool-result")         \
  X(EV_UNKNOWN_MENTION, "unknown-mention") \
  X(EV_AGENT_ADDED, "agent-added")         \
  X(EV_AGENT_REMOVED, "agent-removed")     \
  X(EV_NEW_CHAT_CREATED, "new-chat-created") \
  X(EV_CHAT_REUSED, "chat-reused")         \
  X(EV_CHAT_DELETED, "chat-deleted")       \
  X(EV_TITLE_UPDATED, "title-updated")     \
  X(EV_STATE_SAVED, "state-saved")         \
  X(EV_STORAGE_ERROR, "storage-error")     \
  X(EV_CHAT_RESUMED, "chat-resumed")       \
  X(EV_CHAT_LOADED, "chat-loaded")         \
  X(EV_APPROVAL, "approval")               \
  X(EV_CANCELLED, "cancelled")            \
  X(EV_SEQS_MOVED, "seqs-moved")           \
  X(EV_MEMORY_CLEARED, "memory-cleared")   \
  X(EV_NOT_ADDRESSED, "not-addressed")     \
  X(EV_SCHEDULE_SKIPPED, "schedule-skipped") \
  X(EV_CLOCK_ADVANCED, "clock-advanced") \
  X(EV_TURN_QUEUED, "turn-queued")     \
  X(EV_TURN_END, "turn-end")           \
  X(EV_TURNS_RESUMED, "turns-resumed") \
  X(EV_MCP_ERROR, "mcp-error")            \
  X(EV_BUDGET_EXHAUSTED, "budget-exhausted") \
  X(EV_RATE_LIMITED, "rate-limited")     \
  X(EV_CONTEXT_SHRUNK, "context-shrunk") \
  X(EV_SUMMARY, "summary")               \
  X(EV_MEMORY_RETRIEVED, "memory-retrieved") \
  X(EV_REFLECTION, "reflection")         \
  X(EV_MEMORY_RATED, "memory-rated")

typedef enum ev_kind {
#define EV_ENUM_(k, name) k,
  EV_KINDS(EV_ENUM_)
#undef EV_ENUM_
  EV_KIND_COUNT
} ev_kind;

/* The wire name ("llm-chunk"); "event" for a value outside the enum. */
const char *ev_kind_name(ev_kind k);
/* AG_OK and *out, or AG_ERR_NOT_FOUND for a name that is no kind. */
int ev_kind_parse(const char *name, ev_kind *out);

/* Payloads. Strings are NUL-terminated; who owns them depends on the holder (see bus_event_new). */
/* seq: the message the turn answers; rerun: the turn is a re-run after a crash (docs/time.md). Both
 * go only to the stored thread, not to the output. */
typedef struct ev_llm_start { const char *agent, *provider; uint64_t seq; int rerun; } ev_llm_start;
/* text: len bytes, not necessarily NUL-terminated (the bus's copy ends at the first NUL or len). */
typedef struct ev_llm_chunk { const char *agent, *text; size_t len; } ev_llm_chunk;
/* estimated: the provider reported no usage (llm_usage); usd: the call's price by the world's pricing;
 * cached: the reply came from the response cache (its usage is the stored call's, and it cost nothing). */
typedef struct ev_llm_done {
  const char *agent;
  size_t chars;
  long input_tokens, output_tokens;
  int estimated, cached;
  double usd;
} ev_llm_done;
typedef struct ev_llm_error {
  const char *agent, *error;
  int has_info;              /* the provider answered: the four fields below are set */
  long http_status;
  int attempts;
  const char *error_type;    /* "" when the provider gave none */
} ev_llm_error;
typedef struct ev_turn_limit { const char *agent; int limit; } ev_turn_limit;
/* tool-call: json = the arguments; tool-result: json = the result, error and at_ms. json is the
 * model's or the tool's text, kept as a string in the output when it is not valid JSON. */
typedef struct ev_tool {
  const char *agent, *tool, *call_id, *json;
  int error;
  int64_t at_ms;
  uint64_t after_seq; /* a copy of another process's remember result (world_receive_memory): the seq it came
                         after there; 0: after the last message delivered here */
} ev_tool;
typedef struct ev_unknown_mention {
  const char *sender;
  const char *const *names;
  size_t n_names;
  uint64_t seq;
} ev_unknown_mention;
typedef struct ev_agent { const char *agent, *name, *provider; } ev_agent; /* removed: no provider */
typedef struct ev_chat { const char *id, *current; } ev_chat; /* chat-deleted: current (NULL: none) */
typedef struct ev_title { const char *title; } ev_title;
typedef struct ev_saved { uint64_t seq; size_t messages; } ev_saved;
typedef struct ev_error { const char *error; } ev_error;
/* The console's own events (not on the bus), printed like the others. */
typedef struct ev_chat_open { const char *id, *title; uint64_t messages; } ev_chat_open;
typedef struct ev_approval { const char *agent, *tool; int approved; const char *ended; } ev_approval;
typedef struct ev_cancelled { const char *agents; } ev_cancelled; /* NULL: nobody was thinking */
/* Another process stored messages under the seqs this one had given: its pending ones moved up by. */
typedef struct ev_seqs_moved { uint64_t by; size_t messages; } ev_seqs_moved;
/* A human/world message naming known agents only mid-line: nobody was addressed; message says so. */
typedef struct ev_not_addressed {
  ev_unknown_mention who; /* sender, the known agents mentioned mid-line, seq */
  const char *message;
} ev_not_addressed;
/* A scheduled item (its index in the world file's schedule) fell due while the world was busy and
 * says when_busy: skip. */
typedef struct ev_schedule_skipped { size_t item; int64_t due_ms; } ev_schedule_skipped;
/* The console's /advance reached its target: the simulated time now. */
typedef struct ev_clock_advanced { int64_t sim_ms; } ev_clock_advanced;
typedef struct ev_memory_cleared { const char *agent; } ev_memory_cleared;
/* Mode stream (docs/memory.md): count memories went into the prompt of the agent's turn. Bookkeeping. */
typedef struct ev_memory_retrieved { const char *agent; size_t count; } ev_memory_retrieved;
/* The agent reflected (docs/memory.md): insights is a JSON array [{"text", "sources": [seq], "importance"}]
 * as text, at_ms when (simulated time in a virtual-clock world). Stored in the thread: a restore adds the
 * insights to the memory stream again. */
typedef struct ev_reflection {
  const char *agent, *insights;
  int64_t at_ms;
  uint64_t after_seq; /* as ev_tool's */
} ev_reflection;
/* Importance "llm": the agent's rating call answered; ratings is a JSON array [[seq, importance], ...] as
 * text. Stored in the thread, so that a restore sets the ratings again. */
typedef struct ev_memory_rated {
  const char *agent, *ratings;
  uint64_t after_seq; /* as ev_tool's */
} ev_memory_rated;
/* Bookkeeping for resuming after a crash (docs/time.md), stored in the thread, never printed.
 * turn-queued: the agent will answer seq once it is free (rerun: a re-run after a crash). turn-end: its
 * turn answering seq ended (answered, failed, silent); cancelled: all its turns (Ctrl-C); queued: its
 * turns not started (its turn-limit notice emptied its inbox). */
typedef struct ev_turn_queued { const char *agent; uint64_t seq; int rerun; } ev_turn_queued;
typedef struct ev_turn_end { const char *agent; uint64_t seq; int cancelled, queued; } ev_turn_end;
/* A chat opened again re-ran the replies it had in flight when its process stopped (docs/time.md
 * "Resume after a crash"): how many, and the agents' ids (", "-separated, cut with ", ..."). Printed by
 * every door, never stored in the thread. */
typedef struct ev_turns_resumed { size_t replies; const char *agents; } ev_turns_resumed;
/* An MCP server (its name in the world file) failed to start: why, in words. */
typedef struct ev_mcp_error { const char *server, *error; } ev_mcp_error;
/* A provider answered 429: every call to endpoint (a base URL) waits until until_ms (wall clock). */
typedef struct ev_rate_limited { const char *endpoint; int64_t until_ms; } ev_rate_limited;
/* The provider found the agent's prompt too long (llm_error_kind LLM_ERROR_CONTEXT_LENGTH): the turn
 * asks once more with a memory window of window messages; error is the provider's words. Bookkeeping:
 * in --json only. */
typedef struct ev_context_shrunk { const char *agent, *error; int window; } ev_context_shrunk;
/* Summary mode: an agent's summariser model rewrote its summary, which now covers its first upto memory
 * entries. Stored in the thread (a restore takes the last one back); in --json only. */
typedef struct ev_summary {
  const char *agent, *summary;
  uint64_t upto;
  uint64_t after_seq; /* as ev_tool's */
} ev_summary;
/* The world's budget was reached: what was spent, and the limits (0: none). No new LLM call starts. */
typedef struct ev_budget {
  int64_t tokens;
  double usd;
  int64_t limit_tokens;
  double limit_usd;
} ev_budget;

typedef struct world_event {
  ev_kind kind;
  union {
    ev_llm_start llm_start;      /* EV_LLM_START */
    ev_llm_chunk llm_chunk;      /* EV_LLM_CHUNK */
    ev_llm_done llm_done;        /* EV_LLM_DONE */
    ev_llm_error llm_error;      /* EV_LLM_ERROR */
    ev_turn_limit turn_limit;    /* EV_TURN_LIMIT */
    ev_tool tool;                /* EV_TOOL_CALL, EV_TOOL_RESULT */
    ev_unknown_mention unknown;  /* EV_UNKNOWN_MENTION */
    ev_agent agent;              /* EV_AGENT_ADDED, EV_AGENT_REMOVED */
    ev_chat chat;                /* EV_NEW_CHAT_CREATED, EV_CHAT_REUSED, EV_CHAT_DELETED */
    ev_title title;              /* EV_TITLE_UPDATED */
    ev_saved saved;              /* EV_STATE_SAVED */
    ev_error storage;            /* EV_STORAGE_ERROR */
    ev_chat_open chat_open;      /* EV_CHAT_RESUMED, EV_CHAT_LOADED */
    ev_approval approval;        /* EV_APPROVAL */
    ev_cancelled cancelled;      /* EV_CANCELLED */
    ev_seqs_moved seqs_moved;    /* EV_SEQS_MOVED */
    ev_memory_cleared cleared;   /* EV_MEMORY_CLEARED */
    ev_not_addressed not_addressed; /* EV_NOT_ADDRESSED */
    ev_schedule_skipped skipped; /* EV_SCHEDULE_SKIPPED */
    ev_clock_advanced advanced;  /* EV_CLOCK_ADVANCED */
    ev_turn_queued turn_queued;  /* EV_TURN_QUEUED */
    ev_turn_end turn_end;        /* EV_TURN_END */
    ev_turns_resumed resumed;    /* EV_TURNS_RESUMED */
    ev_mcp_error mcp;            /* EV_MCP_ERROR */
    ev_budget budget;            /* EV_BUDGET_EXHAUSTED */
    ev_rate_limited rate;        /* EV_RATE_LIMITED */
    ev_context_shrunk shrunk;    /* EV_CONTEXT_SHRUNK */
    ev_summary summary;          /* EV_SUMMARY */
    ev_memory_retrieved retrieved; /* EV_MEMORY_RETRIEVED */
    ev_reflection reflection;    /* EV_REFLECTION */
    ev_memory_rated rated;       /* EV_MEMORY_RATED */
  } u;
} world_event;

/* The agent the event is about (borrowed), or NULL for the kinds about no agent. */
const char *world_event_agent(const world_event *e);

/* The address of the payload's array of names (unknown-mention, not-addressed) and its length in *n, or
 * NULL for the kinds that have none: a holder copies them with the strings. */
const char *const **world_event_names(world_event *e, size_t *n);

/* Calls fn with the address of every NUL-terminated string field of e's payload (not the names of
 * unknown-mention, nor a chunk's text),
 * so that a holder can copy or relocate them without a switch of its own. */
void world_event_strings(world_event *e, void (*fn)(const char **field, void *arg), void *arg);

#endif
