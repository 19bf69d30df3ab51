/* The loopback LLM server's embeddings routes (tests/support/llm_server.h), kept apart from its chat
 * wire formats:
 *   .../embeddings                          OpenAI  {"model", "input": [texts]} -> {"data": [{"index", "embedding"}]}
 *                                           (the data in reverse order: a client must place them by index)
 *   .../api/embed                           Ollama  {"model", "input": [texts]} -> {"embeddings": [[...]]}
 *   .../v1beta/models/M:batchEmbedContents  Gemini  {"requests": [{"model", "content": {"parts": [{"text"}]}}]}
 *                                           -> {"embeddings": [{"values": [...]}]}
 * Each text's vector is llm_server_embed_vector's. A batch with a text holding "fail-embed" is answered
 * HTTP 500 with the provider's error body (message "embedding failed"). */
#ifndef AG_TEST_LLM_SERVER_EMBED_H
#define AG_TEST_LLM_SERVER_EMBED_H

#include <cjson/cJSON.h>

#define LLM_SERVER_EMBED_DIM 3

/* The vector the server gives text: {bytes of text, 1, number of 'e's in text}. */
void llm_server_embed_vector(const char *text, float out[LLM_SERVER_EMBED_DIM]);

/* When path is an embeddings route: 1, with the status and the reply body (*reply, malloc'd) for the
 * request's JSON root (borrowed; NULL: not JSON, a 400). Otherwise 0. */
int llm_server_embed_reply(const char *path, const cJSON *root, long *status, char **reply);

#endif
