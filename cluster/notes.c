/* Who answers, said plainly (see notes.h). */
#include "cluster/notes.h"

#include "common/buf.h"

#include <string.h>

/* Names shown in one line; the rest are counted. */
#define NOTES_NAMES_MAX 20

static void add_name(ag_buf *b, size_t *n, const char *name) {
  if (++*n <= NOTES_NAMES_MAX) ag_buf_printf(b, "%s%s", *n > 1 ? ", " : "", name);
}

static void end_list(ag_buf *b, size_t n) {
  if (n > NOTES_NAMES_MAX) ag_buf_printf(b, ", ... (%zu in all)", n);
}

char *notes_holding(const world *w, int (*held)(void *ctx, const char *id), void *ctx) {
  ag_buf b;
  size_t n = 0;
  ag_buf_init(&b, 4096);
  ag_buf_appends(&b, "holding ");
  for (size_t i = 0; i < world_agent_count(w); i++) {
    agent *a = world_agent_at(w, i);
    if (held(ctx, agent_id(a))) add_name(&b, &n, agent_name(a));
  }
  if (!n) ag_buf_appends(&b, "no agent");
  end_list(&b, n);
  return ag_buf_take(&b);
}

/* 1 when id is one of the lines of holders. */
static int listed(const char *holders, const char *id) {
  size_t len = strlen(id);
  for (const char *p = holders; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, id, len) && p[len] == '\n') return 1;
  return 0;
}

char *notes_hostless(const world *w, const char *holders) {
  ag_buf b;
  size_t n = 0;
  ag_buf_init(&b, 4096);
  ag_buf_appends(&b, "waiting for a host for: ");
  for (size_t i = 0; i < world_agent_count(w); i++) {
    agent *a = world_agent_at(w, i);
    if (agent_phase_of(a) == AGENT_ELSEWHERE && !listed(holders, agent_id(a))) add_name(&b, &n, agent_name(a));
  }
  end_list(&b, n);
  char *line = n ? ag_buf_take(&b) : NULL;
  ag_buf_free(&b);
  return line;
}
