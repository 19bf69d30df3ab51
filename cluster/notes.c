/* Who answers, said plainly (see notes.h). */
#include "cluster/notes.h"

#include "common/buf.h"

#include <string.h>

/* Names shown in one line; the rest are counted. */
#define NOTES_NAMES_MAX 20

/* Appends the names of the agents pick chooses, the first NOTES_NAMES_MAX of them and then how many
 * there are in all; returns how many it chose. Both lines are built by it, so they read alike. */
static size_t list_names(ag_buf *b, const world *w, int (*pick)(const agent *a, const void *ctx), const void *ctx) {
  size_t n = 0;
  for (size_t i = 0; i < world_agent_count(w); i++) {
    const agent *a = world_agent_at(w, i);
    if (pick(a, ctx) && ++n <= NOTES_NAMES_MAX) ag_buf_printf(b, "%s%s", n > 1 ? ", " : "", agent_name(a));
  }
  if (n > NOTES_NAMES_MAX) ag_buf_printf(b, ", ... (%zu in all)", n);
  return n;
}

typedef struct held_by {
  int (*held)(void *ctx, const char *id);
  void *ctx;
} held_by;

static int is_held(const agent *a, const void *arg) {
  const held_by *h = arg;
  return h->held(h->ctx, agent_id(a));
}

char *notes_holding(const world *w, int (*held)(void *ctx, const char *id), void *ctx) {
  ag_buf b;
  ag_buf_init(&b, 4096);
  ag_buf_appends(&b, "holding ");
  if (!list_names(&b, w, is_held, &(held_by){.held = held, .ctx = ctx})) ag_buf_appends(&b, "no agent");
  return ag_buf_take(&b);
}

/* 1 when id is one of the lines of holders. */
static int listed(const char *holders, const char *id) {
  size_t len = strlen(id);
  for (const char *p = holders; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, id, len) && p[len] == '\n') return 1;
  return 0;
}

static int is_hostless(const agent *a, const void *holders) {
  return agent_phase_of(a) == AGENT_ELSEWHERE && !listed(holders, agent_id(a));
}

char *notes_hostless(const world *w, const char *holders) {
  ag_buf b;
  ag_buf_init(&b, 4096);
  ag_buf_appends(&b, "waiting for a host for: ");
  char *line = list_names(&b, w, is_hostless, holders) ? ag_buf_take(&b) : NULL;
  ag_buf_free(&b);
  return line;
}
