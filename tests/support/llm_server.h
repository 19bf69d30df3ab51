/* A loopback LLM server for tests and benchmarks: speaks the OpenAI, Anthropic, Gemini and Ollama
 * wire formats on 127.0.0.1 (ephemeral port), runs on its own thread with its own event loop, records
 * every request, and is scripted per request by rules the test adds or by directives inside the
 * prompt itself (so end-to-end tests through the agora binary can script it too).
 *
 * Routes (by path, method POST):
 *   .../chat/completions                              OpenAI  (stream: body "stream":true)
 *   .../v1/messages                                   Anthropic (stream: body "stream":true)
 *   .../v1beta/models/M:streamGenerateContent?alt=sse Gemini, streamed (SSE, CRLF line ends)
 *   .../v1beta/models/M:generateContent               Gemini, whole reply
 *   .../api/chat                                      Ollama  (stream unless body "stream":false)
 *   .../embeddings, .../api/embed, ...:batchEmbedContents  embeddings (tests/support/llm_server_embed.h)
 *
 * DIRECTIVES. A request's plan comes from, lowest priority first: the first rule whose match text
 * occurs in the system prompt or the last user message (llm_server_rule), then a directive in the
 * system prompt, then one in the last user message; later sources override earlier ones key by key.
 * A directive is written anywhere in the text as
 *
 *     [[mock key=value key="quoted value" flag ...]]
 *
 * Values are bare (up to white space or "]]") or double-quoted with \" \\ \n escapes; a key with no
 * "=value" means 1. Rules take the same key=value list without the brackets. A user message holding
 * only tool results (Anthropic, Gemini) does not count as the last user message, so a directive there
 * keeps working through an agent's tool loop. Keys:
 *   reply=TEXT          the reply text (default "mock reply")
 *   echo=1              reply "echo: " + the last user message (directives removed)
 *   latency=MS          wait before the response headers
 *   delay=MS            wait between streamed events
 *   chunk=N             N characters of text per streamed event (default: one word per event)
 *   split=N             write every event in N-byte pieces 1 ms apart (an event split across reads)
 *   merge=1             write the whole streamed body at once (several events in one read)
 *   no_usage=1          OpenAI: no usage in the reply, streamed or not (as many local servers)
 *   status=CODE         answer with that HTTP status and the provider's error body
 *   error_type=T        the error type in error bodies / mid-stream errors (e.g. insufficient_quota)
 *   error_message=M     the error message
 *   error_code=C        OpenAI: the error's code (default: error_type, or null), e.g. with type
 *                       invalid_request_error, code context_length_exceeded as OpenAI sends it
 *   retry_after=S       Retry-After header (seconds) on an error reply
 *   retry_after_ms=MS   retry-after-ms header on an error reply
 *   stall=N             streamed: send N text events, then nothing (connection kept open);
 *                       whole reply: the headers, then nothing
 *   reset=N             streamed: send N text events, then reset the connection (RST);
 *                       whole reply: half the body, then reset
 *   malformed=1         streamed: an event with broken JSON after the first text event;
 *                       whole reply: a broken body
 *   oversize=BYTES      streamed: a text event of BYTES characters after the first one;
 *                       whole reply: a reply text of BYTES characters
 *   midstream_error=T   HTTP 200, then after the first text event the provider's error object with
 *                       type T (Anthropic "event: error", OpenAI/Gemini {"error":{..}}, Ollama
 *                       {"error":".."}); whole reply: that error object as the 200 body
 *   body=KIND           HTTP 200 with a body that is no reply at all, streamed or not: KIND html (a
 *                       proxy's page), garbage (bytes that are neither JSON nor SSE) or empty
 *   tool=NAME args=JSON a reply that calls tool NAME with those arguments (OpenAI tool_calls, Anthropic
 *                       tool_use, Gemini functionCall, Ollama tool_calls); no args: {}. Text that does
 *                       not parse as JSON is sent as it is where arguments are text (OpenAI; Anthropic
 *                       streamed) and as a JSON string where they are a value, for malformed-argument
 *                       tests. The reply has no text unless reply= (or echo) is given too, and then
 *                       the text comes first. Ids: OpenAI call_mock_N, Anthropic toolu_mock_N (N = 1
 *                       for tool, 2 for tool2, ...); Gemini and Ollama send none.
 *   tool2=NAME args2=JSON ... tool8=NAME args8=JSON   more calls in the same reply, in that order
 *   args_chunk=N        streamed: argument text in pieces of N bytes (default 4), one event each
 *                       (OpenAI delta.tool_calls[].function.arguments, Anthropic input_json_delta);
 *                       Gemini sends each call whole in its own event, Ollama all calls in one line
 *   after_tool=TEXT     when the request's last message is a tool result (OpenAI/Ollama role "tool",
 *                       an Anthropic tool_result block, a Gemini functionResponse part): reply TEXT
 *                       and make no calls, so an agent's call-then-answer loop ends
 *   after_tool_stall=N  the first N of those requests (of this plan) stall as stall=1 does instead: a turn
 *                       held after its tool ran (a host killed there, its tool's effect already out)
 *   body=sse_garbage    HTTP 200 with event-stream (Ollama: NDJSON) framing around nothing usable:
 *                       comments, unknown fields, data that is not JSON or of the wrong shape, bad UTF-8
 * HOSTILE PEERS (each in both modes unless said):
 *   endless=1           a reply that never ends: text events without end, or a whole body whose text
 *                       string never closes, written as fast as the client reads (delay= paces it)
 *   drip=MS             every byte of the response, headers included, sent alone MS ms apart
 *   redirect=1          302 with Location: the request's own path (a loop when followed)
 *   headers=BYTES       about BYTES of extra header lines (X-Pad-N: 1000 x's) before the body
 *   gzip=N              HTTP 200, Content-Encoding: gzip, a body of N pieces of 53 KB that inflates to
 *                       8.4 MB of zeros each (gzip=128: 6.8 MB sent, 1.1 GB inflated)
 *   error_pct=N         HTTP 500 for N% of the requests with this plan (drawn per request, the same
 *                       sequence every run); stall_pct=N: a stall (as stall=1) for N% more (soak runs)
 *   times=N             the faults (status, retry_after*, stall, reset, malformed, oversize,
 *                       midstream_error, body and the hostile ones) apply to the first N requests with this plan only; later
 *                       ones get the normal reply. A plan is identified by its rule and the exact
 *                       directive texts, so "[[mock status=500 times=1]]" fails once, then answers.
 * Error bodies for status=401 quote the key the request carried, as real providers do (partly),
 * so tests can check that a client never shows it.
 *
 * Thread safety: all functions are called from the test's thread; the server thread only touches
 * shared state (rules, counters, records) under a mutex. */
#ifndef AG_TEST_LLM_SERVER_H
#define AG_TEST_LLM_SERVER_H

#include <stddef.h>

typedef struct llm_server llm_server;

/* Binds 127.0.0.1 on an ephemeral port and starts the server thread. Returns 0 or -1. */
int llm_server_start(llm_server **out);
/* Stops the thread, closes every connection, frees. */
void llm_server_stop(llm_server *s);
int llm_server_port(const llm_server *s);
/* "http://127.0.0.1:PORT" followed by suffix, in a static buffer (tests build base URLs with it). */
const char *llm_server_url(const llm_server *s, const char *suffix);

/* Adds a rule: requests whose system prompt or last user message contains match (NULL or "": every
 * request) get the directives (key=value list, as above). Returns 0, or -1 when they do not parse. */
int llm_server_rule(llm_server *s, const char *match, const char *directives);
/* Forgets rules, fault counters and recorded requests. */
void llm_server_reset(llm_server *s);
/* Enforced limits, as hosted providers keep them: over a window of window_ms (a minute for real; tests
 * shorten it, as AGORA_RATE_WINDOW_MS does in agora), a request past rpm requests or tpm tokens (its input,
 * estimated as for usage) is answered 429 with Retry-After, retry-after-ms, x-ratelimit-*-requests and
 * anthropic-ratelimit-requests-* headers; an accepted one carries what remains. 0: no limit. Not cleared
 * by llm_server_reset. llm_server_rejected counts the 429s since the limits were set. */
void llm_server_set_limits(llm_server *s, long window_ms, long rpm, long tpm);
size_t llm_server_rejected(llm_server *s);

/* Recording is on by default; benchmarks turn it off. */
void llm_server_set_recording(llm_server *s, int on);

/* A recorded request, body exactly as sent (tests parse it to check the tools, tool calls and tool
 * results in each provider's shape); strings owned by the copy (llm_server_request_free). */
typedef struct llm_server_request {
  char *method;
  char *path;
  char *headers; /* the raw header lines after the request line, "\r\n"-separated */
  char *body;
} llm_server_request;

size_t llm_server_request_count(llm_server *s);
/* Polls until the server has seen n requests (the replies are in flight) or the deadline of
 * wait_budget_ms(ms) has passed (support/wait.h): whether it saw them. */
int llm_server_wait_requests(llm_server *s, size_t n, long ms);
/* Copies request i (0 = first); returns 0, or -1 when there is none. */
int llm_server_request_get(llm_server *s, size_t i, llm_server_request *out);
void llm_server_request_free(llm_server_request *r);
/* The value of a header (case-insensitive name), malloc'd, or NULL. */
char *llm_server_request_header(const llm_server_request *r, const char *name);
/* The requests seen whose path holds path_part and whose raw header lines hold header_part (either NULL:
 * any), e.g. the embeddings requests, or those that carried a key. */
size_t llm_server_requests_with(llm_server *s, const char *path_part, const char *header_part);
/* Streams that reached their stall (stall=N) with the N events sent since the last reset: the reply is
 * in flight. */
size_t llm_server_stalls(llm_server *s);
/* Connections accepted so far (connection reuse shows as fewer connections than requests). */
size_t llm_server_connections(llm_server *s);
/* Connections open now. A client that ended has its connections closed only once the server has read
 * what it sent (the end of a stream comes after its data), so llm_server_wait_closed, polling until none
 * is open (or the deadline of wait_budget_ms(ms)), makes sure no request of an earlier process is still
 * on its way in, to be recorded after an llm_server_reset as the next one's. Whether none was left. */
size_t llm_server_open_connections(llm_server *s);
int llm_server_wait_closed(llm_server *s, long ms);
/* The most requests the server was answering at once since it started or was last reset (a request
 * counts from its arrival until the last byte of its response is written): what a client's
 * max_concurrency must keep to. */
size_t llm_server_peak_concurrency(llm_server *s);

#endif
