/* An agent: its settings, its memory of the current chat, its turn state, and its LLM endpoint. It
 * is handed each message and a small host interface to publish through, so an agent's decisions
 * are testable with no world, no loop and no bus. */
#ifndef AG_AGENT_H
#define AG_AGENT_H

#include <stddef.h>

#include "agents/context.h"
#include "agents/mcp_tools.h"
#include "agents/memory_stream.h"
#include "agents/msg.h"
#include "agents/tools.h"
#include "agents/turn.h"
#include "llm/llm.h"

typedef struct agent agent;

/* Where an agent's turn is (docs/architecture.md "An agent's turn"). One function (agents/agent_phase.c)
 * changes it, by one table of legal transitions, and tells the host of every change (agent_host.phase):
 * a debugger breakpoint or a log line there sees each transition. Every phase but idle is "thinking". */
#define AGENT_PHASES(X)                                                                              \
  X(AGENT_IDLE, "idle")                           /* nothing to answer */                            \
  X(AGENT_QUEUED, "queued")                       /* between turns: the next answer leaves the inbox */ \
  X(AGENT_CALLING, "calling")                     /* an LLM call in flight */                        \
  X(AGENT_TOOL_ROUND, "tool-round")               /* running the tool calls of a reply */            \
  X(AGENT_AWAITING_APPROVAL, "awaiting-approval") /* a tool call waits for agent_approval_answer */  \
  X(AGENT_ELSEWHERE, "elsewhere")                 /* another process answers the turn (NATS) */      \
  X(AGENT_ENDING, "ending")                       /* over here; its end waits for agent_turn_done */ \
  X(AGENT_REMEMBERING, "remembering")             /* a rating or reflection call before the turn's (docs/memory.md) */

typedef enum agent_phase {
#define AGENT_PHASE_ENUM_(p, name) p,
  AGENT_PHASES(AGENT_PHASE_ENUM_)
#undef AGENT_PHASE_ENUM_
  AGENT_PHASE_COUNT
} agent_phase;

/* The phase's name for logs and the API ("tool-round"); "phase" for a value outside the enum. */
const char *agent_phase_name(agent_phase p);
/* 1 when the table lets a turn go from phase from to phase to (a debug build asserts it on every
 * change); a phase goes to itself only in a tool round (a call settled, the next one starts). */
int agent_phase_can(agent_phase from, agent_phase to);

/* An agent's settings as read from a world file. Strings owned by the struct. */
typedef struct agent_settings {
  char *name;          /* display name */
  char *system_prompt; /* may be NULL */
  int auto_reply;      /* default 1 */
  unsigned tools;      /* TOOL_BIT()s of the built-in tools it may call */
  unsigned approve;    /* TOOL_BIT()s of the tools that need the user's approval */
  agent_mcp_ref *mcp;  /* n_mcp MCP tool references ("fs.read_file", "fs.*"), resolved at start */
  size_t n_mcp;
  int monadic;         /* load_context + save_context, with the instruction to use them */
  int tool_support;    /* the model calls tools natively (default 1); 0: context in the prompt */
  llm_config llm;      /* provider settings; an unset llm.script.fallback is worded from name */
  int context_tokens;  /* the prompt is kept under this many tokens by agents/context_budget.h; 0: no bound */
  mem_config memory;   /* `memory` (issue 26): mode window by default, today's behaviour; mode summary's
                          summary_tokens and summary_model, mode stream's retrieval (docs/memory.md) */
} agent_settings;

void agent_settings_init(agent_settings *s);
int agent_settings_copy(agent_settings *dst, const agent_settings *src);
void agent_settings_free(agent_settings *s);

typedef enum agent_report_kind {
  AGENT_REPORT_LLM_START,
  AGENT_REPORT_LLM_CHUNK,
  AGENT_REPORT_LLM_DONE,
  AGENT_REPORT_LLM_ERROR,
  AGENT_REPORT_TURN_LIMIT,
  AGENT_REPORT_TOOL_CALL,  /* tool, call_id, text = arguments JSON */
  AGENT_REPORT_TOOL_RESULT, /* tool, call_id, text = result JSON, failed = an error result, at_ms */
  AGENT_REPORT_TURN_END,    /* the turn answering seq is over, whatever came of it */
  AGENT_REPORT_CONTEXT_SHRUNK, /* the provider found the prompt too long: retried once with window
                                  messages (text = the provider's words, info = its error) */
  AGENT_REPORT_SUMMARY,         /* summary mode: the summariser model wrote text, the summary of the
                                  memory entries before absolute index upto (agent_set_summary) */
  AGENT_REPORT_MEMORY_RETRIEVED, /* len = memories put in the prompt of the turn answering seq */
  AGENT_REPORT_REFLECTION,  /* text = the insights as JSON [{"text", "sources": [seq], "importance"}], at_ms */
  AGENT_REPORT_RATED        /* text = the ratings as JSON [[seq, importance], ...] */
} agent_report_kind;

/* What an agent reports to its host; every pointer is borrowed for the call. */
typedef struct agent_report {
  agent_report_kind kind;
  const char *text;           /* LLM_CHUNK: the chunk; LLM_DONE: the raw reply; LLM_ERROR: detail */
  size_t len;                 /* of text */
  const llm_error_info *info; /* LLM_ERROR from the provider; NULL for an empty reply */
  int failed;                 /* LLM_ERROR: the call failed (not merely an empty reply) */
  const char *tool;           /* TOOL_*: the tool's name */
  const char *call_id;        /* TOOL_*: the call's id */
  int64_t at_ms;              /* TOOL_RESULT: when it ran (save_context stamps the context with it) */
  llm_usage usage;            /* LLM_DONE: the tokens the provider reported (0 when none) */
  uint64_t seq;               /* the message the turn answers (0: none) */
  int window;                 /* CONTEXT_SHRUNK: the memory window the retry sends */
  size_t upto;                /* SUMMARY: the memory entries the summary covers */
} agent_report;

/* The world's side of an agent. ctx and the functions are borrowed for the agent's life. */
typedef struct agent_host {
  void *ctx;
  /* Publishes text as this agent with kind AG_KIND_AGENT or AG_KIND_TURN_LIMIT. On success *out is
   * the queued message (borrowed; the agent takes its own reference to keep it in memory). */
  int (*publish)(void *ctx, agent *a, const char *text, ag_kind kind, ag_msg **out);
  /* What the agent did (a call started, a chunk, a tool step, ...), for the host to turn into events. */
  void (*report)(void *ctx, agent *a, const agent_report *ev);
  /* The agent's turn went from phase from to phase to (never from == to). The agent is thinking in
   * every phase but AGENT_IDLE: a host counts thinking agents from these reports alone. May be NULL. */
  void (*phase)(void *ctx, agent *a, agent_phase from, agent_phase to);
  /* Asks whether the agent may run this tool call (declared "approve": true). AG_OK: the question is
   * pending and the host answers later with agent_approval_answer, never from inside this call; the
   * agent's turn waits meanwhile. Any other code (or NULL): denied at once. ask_human asks the same way
   * with its question (NULL for an approval), answered with a text. Strings borrowed. */
  int (*approve)(void *ctx, agent *a, const char *tool, const char *args_json, const char *question);
  /* The agent no longer waits for the pending answer (its turn was cancelled, reset or freed): the
   * host forgets the question and must not answer it. May be NULL. */
  void (*approve_cancel)(void *ctx, agent *a);
  /* The world's agent ids right now (borrowed until the world changes), for reading display names in
   * a reply's mentions. NULL: none. */
  const char *const *(*ids)(void *ctx, size_t *n);
  /* The system prompt as sent now (its `{{name}}` variables rendered, issue 13); the caller frees it.
   * NULL (the callback or its result): the prompt as set. May be NULL. */
  char *(*render_prompt)(void *ctx, agent *a, const char *prompt);
  /* A world spread over processes (docs/distributed.md); both may be NULL. turn_begin: 1 when another
   * process answers the turn now starting (no LLM call here; the agent waits, AGENT_ELSEWHERE).
   * turn_end: 1 when the end of the turn answering m (borrowed) waits until the host confirms it with
   * agent_turn_done (AGENT_ENDING), so that every process starts the agent's next turn at the same point. */
  int (*turn_begin)(void *ctx, agent *a);
  int (*turn_end)(void *ctx, agent *a, const ag_msg *m);
  /* 1 when id is an agent's of the world, in O(1) (its index), for display names and send_message's
   * recipients in a world of any size. NULL: ids is scanned instead. */
  int (*has_id)(void *ctx, const char *id);
} agent_host;

/* The world settings an agent decides by; borrowed for the call. */
typedef struct agent_rules {
  int turn_limit;
  int memory_window;
  const char *main_agent;     /* id or NULL */
  int emit_chunks;            /* report LLM_CHUNK events */
} agent_rules;

/* Creates an agent from settings (copied). Fails with AG_ERR_INVALID and em naming the problem when
 * the name gives no valid id or the provider is unavailable. host is borrowed for the agent's life. */
int agent_new(const agent_settings *s, llm_client *llm, const agent_host *host, agent **out,
              ag_errmsg *em);
/* Cancels a call in flight (no callback follows) and frees. */
void agent_free(agent *a);

const char *agent_id(const agent *a);
const char *agent_name(const agent *a);
const agent_settings *agent_settings_of(const agent *a);
/* Replaces the agent's settings with a copy of s (same name) and its endpoint with one made on llm;
 * memory and turn state stay. AG_ERR_STATE while it is thinking; on failure nothing changes. */
int agent_reconfigure(agent *a, const agent_settings *s, llm_client *llm, ag_errmsg *em);
/* The agent's phase is not AGENT_IDLE: it answers, or will at once. */
int agent_is_thinking(const agent *a);
/* Tokens the agent's LLM calls reported since the agent was made (this process), summed. */
llm_usage agent_usage(const agent *a);
/* Where the agent's turn is (named agent_phase_of: agent_phase is the type). */
agent_phase agent_phase_of(const agent *a);
/* The host's answer to the pending approval (allow 1 = run the call, 0 = deny it): the tool round
 * goes on. For ask_human, text (borrowed, may be NULL) is the person's answer (allow 1) or why nobody
 * answers (allow 0). Ignored when the agent is not awaiting one (a late answer after a cancel). */
void agent_approval_answer(agent *a, int allow, const char *text);

/* Handles one delivered message (§3): decides, and answers (starting an LLM call) or publishes the
 * notice. m is borrowed; the agent takes a reference when it stores m in memory. Returns the decision. */
turn_decision agent_on_message(agent *a, ag_msg *m, const agent_rules *rules);

/* Answers m (borrowed) without deciding: it joins the inbox as agent_on_message's answers do. For a
 * turn re-run after a crash (docs/time.md): when m is already the newest memory entry it is not
 * remembered twice. */
int agent_answer(agent *a, ag_msg *m, const agent_rules *rules);
/* The turn answering the message with seq trigger_seq is over (confirmed by the host): a call still
 * in flight for it is cancelled and the next turn starts. Ignored for any other seq. */
void agent_turn_done(agent *a, uint64_t trigger_seq);
/* This process now answers the agent: a turn started elsewhere and not finished is run here. */
void agent_turn_resume(agent *a);
/* The seq of the message being answered (0: none) and, in *round (may be NULL), its tool round. */
uint64_t agent_turn_trigger(const agent *a, int *round);

/* Cancels the LLM call in flight or the pending approval, if any (Ctrl-C); the turn stays counted. */
void agent_cancel(agent *a);

/* Memory of the current chat, oldest first; borrowed. Only the newest entries are kept in RAM (at
 * least the memory window, with slack of at most 256 entries and AGENT_MEM_BYTES of text): the full
 * memory lives in storage, and the prompt needs only the window, so an agent's footprint does not grow
 * with the conversation. *n is the number kept. */
#define AGENT_MEM_BYTES (16u << 20)
ag_msg *const *agent_memory(const agent *a, size_t *n);
/* Entries ever added to the memory of this chat, dropped ones included: kept entry i has absolute
 * index agent_memory_total(a) - n + i. */
size_t agent_memory_total(const agent *a);
/* The world's memory window, so RAM keeps enough of the memory before the first answer (restores). */
void agent_set_memory_window(agent *a, int window);
/* Appends a message to memory (restoring a chat); takes a new reference. */
int agent_memory_push(agent *a, ag_msg *m);
/* The memory stream of the current chat (mode stream; empty otherwise), borrowed. */
const mem_stream *agent_memory_stream(const agent *a);
/* The top k memories for query (borrowed text) at time now_ms, all entries looked at, into hits (room
 * for k, as mem_stream_top). Returns how many; 0 when the stream is empty or out of memory. */
size_t agent_memory_query(const agent *a, const char *query, int64_t now_ms, mem_hit *hits, size_t k);
/* The same with relevance for a hosted embedder (agents/agent_recall.c): agent_recall_start sends the query
 * (borrowed; copied) — and with memories, every memory not embedded yet, whose vectors it then stores in
 * the stream — to the embedder in one request on the loop (the kept vectors first, llm/embed.h).
 * done(ud, err, why) runs once, from the loop, never from inside the call: err 0, or the embedder's error
 * with why (a message naming it). AG_ERR_INVALID when a has no hosted embedder, AG_ERR_LLM when the
 * request cannot start (a missing key: em says which); done never runs then. *out is the caller's (agent_recall_free, which
 * also cancels; before the agent is freed). agent_recall_top scores as agent_memory_query, with relevance
 * once done reported 0 and without it otherwise. */
typedef struct agent_recall agent_recall;
typedef void (*agent_recall_done)(void *ud, int err, const char *why);
int agent_recall_start(agent *a, const char *query, int memories, agent_recall_done done, void *ud,
                       agent_recall **out, ag_errmsg *em);
size_t agent_recall_top(const agent_recall *r, int64_t now_ms, mem_hit *hits, size_t k);
void agent_recall_free(agent_recall *r);
/* Adds a note (text copied) to the memory stream with its importance (1..10) and time: what the remember
 * tool does, and a restore does again from the tool's stored result. A note of the same text at the same
 * time (the time of the message its turn answered) is the same note: one already held is not added again,
 * and AG_OK (a turn run twice, after a takeover or a crash, remembers it once: docs/distributed.md).
 * AG_ERR_STATE when the agent's memory mode is not stream. */
int agent_memory_note(agent *a, const char *text, double importance, int64_t at_ms);
/* Adds a reflection's insights (a JSON array of {"text", "importance"}, borrowed) as notes at at_ms and
 * restarts the count toward the next reflection: what a reflection does, and a restore does again from
 * the stored reflection event. */
int agent_memory_reflection(agent *a, const cJSON *insights, int64_t at_ms);
/* Sets the importance of the memory of message seq (a stored rating, for a restore, or another host's);
 * the count toward the next reflection moves with it. Ignored for a seq that is no memory, and for one
 * already rated: the first rating wins, so every copy keeps the same one (docs/distributed.md). */
void agent_memory_rate(agent *a, uint64_t seq, double importance);
/* The count toward the next reflection: the importance of the stream's memories from position from on
 * (those after the last reflection's insights, notes included, as live), for a restore. */
void agent_memory_recount(agent *a, size_t from);
/* Forgets the chat: memory, turn state, and cancels a call in flight. */
void agent_reset(agent *a);

turn_state agent_turn_state(const agent *a);
void agent_set_turn_state(agent *a, turn_state st);
/* The script provider's next reply index, saved with the chat so a continued chat goes on. */
size_t agent_reply_counter(const agent *a);
void agent_set_reply_counter(agent *a, size_t n);

/* The MCP tools the agent may call (copied; replaces the set; a call in flight goes on), resolved
 * by the world from the settings' references once the servers listed their tools; and the set now. */
int agent_set_mcp_tools(agent *a, const agent_mcp_set *set);
const agent_mcp_set *agent_mcp_tools(const agent *a);

/* Summary mode: the rolling summary of the memory entries before absolute index *upto (may be NULL)
 * in the current chat, borrowed (NULL: none yet); and restoring it (text copied, may be NULL) before the
 * memory is pushed back, so that entries after upto are folded into it as they leave RAM. */
const char *agent_summary(const agent *a, size_t *upto);
int agent_set_summary(agent *a, const char *text, size_t upto);

/* The agent's context in the current chat (borrowed), and restoring it (copied). */
const context_state *agent_context(const agent *a);
int agent_set_context(agent *a, const context_state *st);

#endif
