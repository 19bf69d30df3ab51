/* Which failures the caller acts on, read from each provider's own error shape (llm.h
 * llm_error_classify). A prompt past the model's context window is answered by every provider with a
 * plain "bad request", told apart only by a code or the wording:
 *   OpenAI (and compatible servers): HTTP 400, error.code "context_length_exceeded";
 *   Anthropic: HTTP 400 invalid_request_error, "prompt is too long: N tokens > M maximum";
 *   Gemini: HTTP 400 INVALID_ARGUMENT, "The input token count (N) exceeds the maximum number of tokens
 *     allowed (M)";
 *   Ollama: {"error": "... exceeds the context length ..."} (its wording for an input over num_ctx). */
#include "llm/llm.h"

#include <string.h>
#include <strings.h>

/* 1 when needle occurs in hay, ignoring case (the providers' wording varies in capitals). */
static int has(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; hay && *hay; hay++)
    if (strncasecmp(hay, needle, n) == 0) return 1;
  return 0;
}

llm_error_kind llm_error_classify(const char *type, const char *code, const char *message) {
  static const char *const wording[] = {
      "prompt is too long",                    /* Anthropic */
      "exceeds the maximum number of tokens",  /* Gemini */
      "input token count",                     /* Gemini, older wording */
      "exceeds the context length",            /* Ollama */
      "maximum context length",                /* OpenAI's message, and compatible servers without the code */
  };
  if ((code && !strcmp(code, "context_length_exceeded")) || (type && !strcmp(type, "context_length_exceeded")))
    return LLM_ERROR_CONTEXT_LENGTH;
  /* Only a request the provider refused as such: a server error that quotes a prompt is no overflow. */
  if (type && strcmp(type, "invalid_request_error") && strcmp(type, "INVALID_ARGUMENT")) return LLM_ERROR_OTHER;
  for (size_t i = 0; i < sizeof wording / sizeof *wording; i++)
    if (has(message, wording[i])) return LLM_ERROR_CONTEXT_LENGTH;
  return LLM_ERROR_OTHER;
}
