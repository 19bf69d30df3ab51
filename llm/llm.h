/* The asynchronous LLM provider interface. An agent starts a call and returns to the loop; the
 * provider reports streamed text chunks and then exactly one completion, always from a later loop
 * iteration (never from inside llm_call_start). Everything runs on the world's one libevent loop. */
#ifndef AG_LLM_H
#define AG_LLM_H

#include <stddef.h>

#include "common/error.h"
#include "net/net_client.h"

struct event_base;

typedef enum llm_provider_kind {
  LLM_SCRIPT = 0, /* built-in, offline: replies from the world file */
  LLM_OPENAI,     /* OpenAI-compatible chat completions */
  LLM_ANTHROPIC,  /* Anthropic Messages API */
  LLM_GEMINI,     /* Google Gemini generateContent */
  LLM_OLLAMA      /* Ollama native /api/chat */
} llm_provider_kind;

/* "script", "openai", ... → kind; AG_ERR_INVALID when unknown. */
int llm_provider_parse(const char *name, llm_provider_kind *out);
const char *llm_provider_name(llm_provider_kind kind);

/* One reply of the script provider: its text and, for a scripted tool call, the call the reply makes
 * (as a model's reply would carry it). Strings owned by the config that holds the reply. */
typedef struct llm_script_reply {
  char *text;      /* the reply's text; NULL for a tool call with no text */
  char *tool;      /* a scripted tool call: the tool's name; NULL for a plain text reply */
  char *args_json; /* the call's arguments as JSON object text; NULL: none (sent as {}) */
} llm_script_reply;

/* The script provider's options. replies[n] answers the n-th call, cycling; with no replies every
 * call answers fallback (the caller words it, e.g. with the speaker's name). */
typedef struct llm_script_options {
  llm_script_reply *replies;
  size_t n_replies;
  char *fallback; /* NULL: "(nothing to say)" */
} llm_script_options;

/* Deep copy (dst is overwritten; on failure it is left empty) and free. */
int llm_script_options_copy(llm_script_options *dst, const llm_script_options *src);
void llm_script_options_free(llm_script_options *o);

/* An agent's provider settings (docs/world-file.md "Agent settings"). All strings are owned by the config; a
 * config is filled by the world-file loader and copied by llm_endpoint_new. */
typedef struct llm_config {
  llm_provider_kind provider;
  char *model;       /* NULL: provider default */
  char *base_url;    /* NULL: provider default */
  char *api_key_env; /* name of the environment variable holding the key; NULL: provider default */
  double temperature;
  int has_temperature;
  int max_tokens;    /* 0: not sent */
  long seed;         /* with has_seed: sent to the providers that take one (not Anthropic) */
  int has_seed;
  int stream;        /* use the streaming API (default 1) */
  long timeout_ms;   /* per call, default 120000 */
  int max_retries;   /* default 3 */
  llm_script_options script; /* provider script only */
  /* Trust and routing (net/net_opts.h), for the HTTP providers. */
  char *ca_file; /* PEM bundle that verifies servers; NULL: SSL_CERT_FILE, CURL_CA_BUNDLE, the system's */
  char *proxy;   /* proxy URL overriding HTTPS_PROXY/HTTP_PROXY/ALL_PROXY; NULL: those; "": none */
  int insecure;  /* 1: do not verify certificates (local testing only; warned about once a run) */
  /* 1: no API key is sent, whatever api_key_env says. Set by the runtime, never read from a file: a
   * world from the database whose base_url is not its provider's default and not allowed
   * (docs/decisions.md "Keys go only where the user sends them"). */
  int key_withheld;
} llm_config;

void llm_config_init(llm_config *cfg); /* the defaults above, provider script */
int llm_config_copy(llm_config *dst, const llm_config *src);
void llm_config_free(llm_config *cfg);
/* Default environment variable for a provider's key (NULL for script and ollama). */
const char *llm_default_key_env(llm_provider_kind kind);
/* The provider's default base URL (NULL for script). */
const char *llm_default_base_url(llm_provider_kind kind);

/* A tool call the model made: the provider's call id (generated when the provider has none, e.g.
 * Gemini), the tool's name and its arguments as JSON object text. In results the strings are owned by
 * the call; in requests they are borrowed. */
typedef struct llm_tool_call {
  char *id;
  char *name;
  char *args_json;
  char *signature; /* an opaque token to send back with the call (Gemini's thoughtSignature) or NULL */
} llm_tool_call;

/* One prompt message; every pointer is borrowed for the duration of llm_call_start (providers copy).
 * roles: "system", "user", "assistant" (text and/or tool_calls), "tool" (the result of one call:
 * content is the result as JSON text, tool_call_id and tool_name say which call it answers). */
typedef struct llm_message {
  const char *role;
  const char *content;              /* may be NULL for an assistant message with only tool calls */
  const llm_tool_call *tool_calls;  /* assistant: the calls it made */
  size_t n_tool_calls;
  const char *tool_call_id;         /* tool */
  const char *tool_name;            /* tool */
} llm_message;

/* A tool the model may call. parameters_json is a JSON Schema object, as text. Borrowed. */
typedef struct llm_tool {
  const char *name;
  const char *description;
  const char *parameters_json;
} llm_tool;

typedef struct llm_request {
  const llm_message *messages;
  size_t n_messages;
  const llm_tool *tools; /* offered to the model; NULL/0: none (then no tools field is sent) */
  size_t n_tools;
} llm_request;

/* What kind of failure a provider's answer is, beyond its own type: the one the caller acts on. */
typedef enum llm_error_kind {
  LLM_ERROR_OTHER = 0,
  LLM_ERROR_CONTEXT_LENGTH /* the prompt outgrew the model's context window: a shorter one may pass */
} llm_error_kind;

/* The kind of a provider's error object from its type (or Gemini's status), code (OpenAI's) and
 * message, each may be NULL (llm/error_kind.c names every provider's shape). Pure. */
llm_error_kind llm_error_classify(const char *type, const char *code, const char *message);

/* What went wrong with a failed call, for the llm-error event. */
typedef struct llm_error_info {
  long http_status;  /* 0 when there was no HTTP response */
  llm_error_kind kind; /* LLM_ERROR_CONTEXT_LENGTH: type is then "context_length_exceeded" */
  int attempts;      /* attempts made, retries included */
  char type[64];     /* provider error type ("overloaded_error", "timeout", ...) or "" */
  char message[256]; /* human-readable detail; never contains a key */
} llm_error_info;

typedef struct llm_callbacks {
  /* A piece of streamed text (not NUL-terminated); may be NULL. */
  void (*on_chunk)(void *ud, const char *text, size_t len);
  /* Called once when the call ends, unless it was cancelled. err is AG_OK with the whole reply in text
   * (borrowed for the call), or an error with info filled. The call is freed right after it returns. */
  void (*on_done)(void *ud, int err, const char *text, const llm_error_info *info);
} llm_callbacks;

/* One per event loop: owns the network client shared by all calls (net/net_client.h). */
typedef struct llm_client llm_client;
int llm_client_new(struct event_base *base, llm_client **out);
/* Cancels every call still in flight, then frees (the network client and its requests with it). */
void llm_client_free(llm_client *c);
/* The client's network client (borrowed, lives as long as c): the world hands it to the MCP HTTP
 * transport, so MCP servers share the providers' connections, TLS sessions and CA cache. */
net_client *llm_client_net(llm_client *c);

/* One per agent: its settings and provider state (the script provider's reply counter). */
typedef struct llm_endpoint llm_endpoint;
/* Copies cfg. em names what is wrong (e.g. a provider not available). */
int llm_endpoint_new(llm_client *c, const llm_config *cfg, llm_endpoint **out, ag_errmsg *em);
/* Cancels the endpoint's calls in flight, then frees. */
void llm_endpoint_free(llm_endpoint *e);
const llm_config *llm_endpoint_config(const llm_endpoint *e);
/* The script provider's index of the next reply (saved with a chat so that continuing it goes on). */
size_t llm_endpoint_reply_counter(const llm_endpoint *e);
void llm_endpoint_set_reply_counter(llm_endpoint *e, size_t n);

typedef struct llm_call llm_call;
/* Starts a call; cb is copied, ud is borrowed until on_done or cancel. *out (may be NULL) is valid
 * until on_done returns or llm_call_cancel is called. */
int llm_call_start(llm_endpoint *e, const llm_request *req, const llm_callbacks *cb, void *ud,
                   llm_call **out);
/* Cancels a call in flight: no callback runs for it afterwards and its resources are released from
 * the loop, never from inside a transport callback. */
void llm_call_cancel(llm_call *call);

/* Token counts a provider reported for a call, estimated when it sent none; 0 for the script provider. */
typedef struct llm_usage {
  long input_tokens;
  long output_tokens;
  int estimated; /* the provider reported none: the counts are estimated from the bytes (about 4 a token) */
  double usd;    /* the call's price by the world's `pricing` (0: no price for its model) */
  int cached;    /* the reply came from the response cache (llm/cache.h): it cost nothing */
} llm_usage;
/* The usage of a call; meaningful inside its on_done (the call is freed right after). */
llm_usage llm_call_usage(const llm_call *call);
/* The tool calls of a successful reply, in order (n = 0 when it made none); valid inside on_done. A
 * reply may carry text and tool calls together. */
const llm_tool_call *llm_call_tool_calls(const llm_call *call, size_t *n);
/* For providers: appends a tool call to the call's result (strings copied; id NULL → generated;
 * signature may be NULL). */
int llm_call_add_tool_call(llm_call *call, const char *id, const char *name, const char *args_json,
                           const char *signature);

/* Where the LLM layer reports a warning meant for the user (insecure: true, ...): the CLI installs a
 * function printing to stderr; without one warnings are dropped. Not thread-safe: set it at start. */
void llm_set_warning_sink(void (*fn)(const char *message));

/* Number of calls in flight on the client. */
size_t llm_client_active(const llm_client *c);

#endif
