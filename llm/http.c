/* Placeholder until the libcurl-multi transport lands: no HTTP provider is available yet. */
#include "llm/provider.h"

const llm_provider_ops *llm_http_ops_for(llm_provider_kind kind) {
  (void)kind;
  return NULL;
}

void llm_http_free(struct llm_http *http) { (void)http; }
