/* Inside an agent: the struct shared by agent.c (the turn) and agent_mcp.c (its MCP tool calls). Not
 * for other modules. */
#ifndef AG_AGENT_INT_H
#define AG_AGENT_INT_H

#include "agents/agent.h"
#include "agents/turn_log.h"
#include "common/ring.h"

/* The host's answer for the call at round_next, while a round waits for or has just got one. Part of
 * the phase: only agent__phase_enter writes it (ASKED while awaiting, the answer on the way back to
 * the round, NONE otherwise). */
typedef enum approval_state { APPROVAL_NONE, APPROVAL_ASKED, APPROVAL_ALLOWED, APPROVAL_DENIED } approval_state;

struct agent {
  agent_settings s;
  agent_phase phase;    /* changed only by agent__phase_enter */
  char id[MENTION_ID_MAX];
  const agent_host *host;
  llm_usage usage;     /* tokens of the calls made since the agent was made */
  llm_endpoint *llm;
  llm_call *call;       /* in flight, or NULL */
  ag_msg *answering;    /* the message being answered (a reference), while call is set */
  /* Messages the agent decided to answer while it was busy, answered one at a time in order so that
   * no reply is lost and memory reads question, answer, question, answer. References. */
  ag_ring inbox; /* of ag_msg *, each holding one reference */
  int memory_window;
  int emit_chunks;
  /* The turn in progress: tool rounds so far and what they added to the prompt (assistant tool calls
   * and tool results), sent back with each further round and forgotten when the turn ends. */
  int rounds;
  turn_log tlog;
  /* The tool round in progress: its assistant message in tlog, the next call to run, the answer to
   * that call's approval, and save_context's message (the reply that completes the turn). */
  size_t round_msg, round_next;
  approval_state approval; /* with human_text, written only by agent__phase_enter */
  char *human_text; /* ask_human: the person's answer, or why there is none (with approval) */
  char *round_reply;
  /* MCP tools (agent_mcp.c): the resolved set, the call in flight for round_next and its result. */
  agent_mcp_set mcp;
  mcp_call *mcp_call;
  char *mcp_text;
  int mcp_failed;
  context_state ctx;
  turn_state turn;
  ag_msg **mem;
  size_t n_mem, cap_mem;
  size_t mem_dropped;   /* oldest entries let go of (still in storage) */
  size_t mem_bytes;     /* of the texts of the entries kept */
  /* The prompt's size (agent_prompt.c): the window the last call sent, the turn's cap on it after the
   * provider found the prompt too long (0: none), and whether the turn has retried once already. */
  int sent_window, window_cap, shrunk;
  /* Summary mode (summary.c): the rolling summary of the memory entries before absolute index
   * summary_upto, and the endpoint that writes it (NULL for a script agent, which folds in place). */
  char *summary;
  size_t summary_upto, summary_asked; /* asked: the summariser's call in flight folds up to it */
  llm_endpoint *summarizer;
  mem_stream stream;    /* mode stream: every entry, kept whole (agent_memory.c) */
  size_t rating;        /* importance "llm": the memories the rating call out asks about, the first unrated */
  /* A hosted embedder (agent_embed.c): the client it runs on, its request in flight with the stream
   * positions it embeds, and this turn's question's vector (query_ok: embedded this turn). */
  llm_client *client;
  struct llm_embed *embed;
  size_t *embed_pos, n_embed_pos;
  float *query_vec;
  int embed_asked, query_ok;
};

/* agent_phase.c */
/* The one place a turn changes phase (curl's multistate): checks the move against the table (an
 * assertion in debug builds), withdraws the host's question when a wait for approval ends unanswered,
 * sets the approval field (ASKED while awaiting; answer, with text copied for ask_human, on the way
 * back to the tool round; NONE otherwise) and reports the change to the host. */
void agent__phase_enter(agent *a, agent_phase to, approval_state answer, const char *text);
static inline void agent__set_phase(agent *a, agent_phase to) { agent__phase_enter(a, to, APPROVAL_NONE, NULL); }

/* agent_memory.c */
/* Adds m (borrowed), the agent's memory entry with absolute index index, to the stream (mode stream). */
int agent__stream_add(agent *a, ag_msg *m, uint64_t index);
/* The system prompt sys (consumed; may be NULL) with the memories retrieved for the message being
 * answered appended (mode stream), the section under retrieve_tokens and under room tokens (what
 * context_tokens leaves it: agent_prompt.c); the result is the caller's. Reports memory-retrieved on the
 * turn's first call. */
char *agent__stream_system(agent *a, char *sys, size_t room);
/* The remember tool's call with checked args: the note joins the stream; its result JSON (caller frees),
 * which holds all a restore needs to add the note again: {"remembered", "importance", "at_ms"}. */
char *agent__remember(agent *a, const cJSON *args);

/* agent_memory_note with the seqs of the memories a reflection's insight came from (copied; may be NULL). */
int agent__note_add(agent *a, const char *text, double importance, int64_t at_ms, const uint64_t *sources,
                    size_t n_sources);

/* The end of a rating, reflection or summary call: its usage settled (agent__call_settle) and reported as the
 * turn's llm-done, or its failure as an llm-error (the turn goes on without it). */
void agent__memory_call_done(agent *a, int err, const char *text, const llm_error_info *info);

/* agent_embed.c: at a turn's start in mode stream with a hosted embedder, one request embeds the
 * memories not embedded yet and the message answered (AGENT_REMEMBERING): 1 when it started; its end
 * goes on with agent__reflect_begin, then agent__turn_go. A failure is an llm-error and the turn goes on
 * without retrieval. */
int agent__embed_begin(agent *a);
/* The embedder's request settings (its provider, model, base_url, key rules), borrowed from a's. */
llm_config agent__embed_config(const agent *a);
/* Forgets the turn's question vector (a new turn) ... */
void agent__embed_reset(agent *a);
/* ... and cancels a request in flight (the turn or the memory goes). */
void agent__embed_cancel(agent *a);
/* 1 when settings a and b embed with different embedders (provider, model or base URL). */
int agent__embedder_differs(const mem_config *a, const mem_config *b);
/* The agent's embedder changed: its stream's vectors are of another space, so every memory is embedded
 * again, at once by the hash embedder, or by a hosted one with the next turn's request. */
int agent__embed_switch(agent *a);

/* agent_reflect.c */
/* At the start of a turn (no round yet) of an agent in mode stream whose memories' importance since the
 * last reflection passed reflect_at: starts the reflection call (AGENT_REMEMBERING) and returns 1; its end
 * goes on with agent__turn_go. 0 when none is due or it could not start (the turn goes on at once). */
int agent__reflect_begin(agent *a);
/* agent_rate.c: with importance "llm", a rating call for the memories not rated yet (AGENT_REMEMBERING):
 * 1 when it started; its end goes on with agent__reflect_begin, then agent__turn_go. */
int agent__rate_begin(agent *a);
/* agent.c: the turn's own call starts (or the turn ends when it cannot). */
void agent__turn_go(agent *a);

/* agent_mcp.c */
/* Runs call c when it names one of the agent's MCP tools: 1 and either *out (the result: an error, a
 * refusal, or the answer that came back), or *out NULL with *waiting set (asked the host: 1, or the
 * call is in flight: 2); 0 when c is no MCP tool. */
int agent__mcp_run(agent *a, const llm_tool_call *c, char **out, int *failed, int *waiting);
/* Cancels the MCP call in flight (the server is told) and forgets its result. */
void agent__mcp_drop(agent *a);
/* The name call name is shown under (tool-call and tool-result events, the approval question): an MCP
 * tool named like a built-in ("ask_human" from a server) as SERVER.TOOL, so that it cannot pass for the
 * built-in; any other name as it is. The result is name or buf (cap bytes). */
const char *agent__tool_shown(const agent *a, const char *name, char *buf, size_t cap);
/* Appends the MCP tools' definitions to tools (room for a->mcp.n more). */
size_t agent__mcp_offer(const agent *a, llm_tool *tools);
/* agent.c: the tool round goes on at round_next (after an MCP result came back). */
void agent__round_resume(agent *a);
/* agent.c: starts the LLM call for a->answering (AGENT_CALLING); on failure the error is reported. */
int agent__call_llm(agent *a);
/* The call that just ended (its on_done runs): its usage added to the agent's and returned; a->call
 * cleared. Every call's on_done starts with it (the turn's, the summariser's, the memory calls). */
llm_usage agent__call_settle(agent *a);
/* agent.c: the turn is over (or its end waits for the host). */
void agent__end_turn(agent *a);

/* agent_prompt.c */
/* One call's request: the messages, the tools offered, and what they point into. */
typedef struct agent__request {
  llm_message *msgs;
  size_t n_msgs;
  llm_tool *tools;
  size_t n_tools;
  char *arena, *sys;
} agent__request;
/* The request for a->answering: the system prompt (with the summary), the memory window (kept under
 * context_tokens and the turn's cap), this turn's tool rounds, the tools. Sets a->sent_window. */
int agent__request_build(agent *a, agent__request *r);
void agent__request_free(agent__request *r);
/* A failed call (info may be NULL) that the provider refused for the prompt's length, the turn's
 * first: the window is halved for the rest of the turn and the host told (CONTEXT_SHRUNK). 1 when the
 * caller should call again; 0: the failure stands. */
int agent__shrink(agent *a, const llm_error_info *info);

/* summary.c */
/* The summariser for settings s (borrowed) on llm: an endpoint on summary_model or the agent's model in
 * summary mode, none for a script agent or window mode. Replaces the agent's once made; on failure (em
 * says why) the agent keeps the one it had. */
int agent__summary_init(agent *a, const agent_settings *s, llm_client *llm, ag_errmsg *em);
/* Forgets the summary (a new chat) and, with all, the summariser too (the agent is freed). */
void agent__summary_clear(agent *a, int all);
/* Folds memory entries [summary_upto, upto) that RAM still holds in place, with the deterministic
 * summariser (summary.h): a script agent's every fold, and any agent's entries about to leave RAM. */
void agent__summary_fold_upto(agent *a, size_t upto);
/* The first call of a turn: in summary mode with entries that left the window unfolded, the
 * summariser's call first (its end starts the turn's call); otherwise agent__call_llm at once. */
int agent__summary_then_call(agent *a);

#endif
