/* Reply shaping (docs/behaviour.md §5): turns an LLM's raw reply into the text an agent publishes — world
 * tags read and removed, self-mentions dropped, addressees put where the mention rules will find them. */
#include "agents/shape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/mention.h"
#include "agents/msg.h"
#include "common/buf.h"
#include "common/error.h"

/* What the reply's world tags asked for. */
typedef struct shape_tags {
  int stop;        /* STOP, DONE or PASS: the reply ends the chain */
  mention_list to; /* TO: ids, in order, without duplicates */
} shape_tags;

static int is_hspace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_space(char c) { return is_hspace(c) || c == '\n'; }

static int only_space(const char *s) {
  for (; *s; s++)
    if (!is_space(*s)) return 0;
  return 1;
}

/* Case-insensitive search for needle in s[0..len). */
static const char *find_ci(const char *s, size_t len, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= len; i++)
    if (strncasecmp(s + i, needle, n) == 0) return s + i;
  return NULL;
}

/* Adds the ids of a TO: list ("a, b", "@a", "Madame Pedagogue") to tags->to. Items that cannot be ids
 * are skipped, as is the agent itself: an agent never addresses itself. */
static int tags_add_to(shape_tags *tags, const char *list, size_t len, const char *agent_id) {
  char item[MENTION_ID_MAX * 2], id[MENTION_ID_MAX];
  for (size_t p = 0; p <= len;) {
    size_t e = p;
    while (e < len && list[e] != ',') e++;
    size_t a = p, b = e;
    while (a < b && is_space(list[a])) a++;
    while (b > a && is_space(list[b - 1])) b--;
    if (a < b && list[a] == '@') a++;
    if (b > a && b - a < sizeof item) {
      memcpy(item, list + a, b - a);
      item[b - a] = '\0';
      if (mention_id_from_name(item, id, sizeof id) == AG_OK && strcasecmp(id, agent_id) != 0 &&
          !mention_list_contains(&tags->to, id)) {
        int rc = mention_list_push(&tags->to, id);
        if (rc) return rc;
      }
    }
    p = e + 1;
  }
  return AG_OK;
}

/* Reads the tag content c[0..n) (already trimmed). Returns 1 when it is a tag we know. */
static int tag_read(shape_tags *tags, const char *c, size_t n, const char *agent_id, int *rc) {
  static const char *const stops[] = {"STOP", "DONE", "PASS"};
  for (size_t i = 0; i < sizeof stops / sizeof *stops; i++)
    if (n == strlen(stops[i]) && strncasecmp(c, stops[i], n) == 0) {
      tags->stop = 1;
      return 1;
    }
  if (n >= 3 && strncasecmp(c, "TO:", 3) == 0) {
    *rc = tags_add_to(tags, c + 3, n - 3, agent_id);
    return 1;
  }
  return 0;
}

/* Copies raw into out without its known world tags (anywhere, any case). A tag's removal leaves no
 * double or trailing blank: "wrap <world>DONE</world> up" → "wrap up". Unknown tags stay as text. */
static int tags_strip(const char *raw, const char *agent_id, shape_tags *tags, ag_buf *out) {
  static const char open[] = "<world>", close[] = "</world>";
  size_t len = strlen(raw), p = 0;
  int rc = AG_OK;
  while (p < len) {
    const char *t = find_ci(raw + p, len - p, open);
    const char *c = t ? find_ci(t + sizeof open - 1, len - (size_t)(t - raw) - (sizeof open - 1), close) : NULL;
    if (!c) break;
    size_t ts = (size_t)(t - raw), cs = ts + sizeof open - 1, ce = (size_t)(c - raw);
    while (cs < ce && is_space(raw[cs])) cs++;
    while (ce > cs && is_space(raw[ce - 1])) ce--;
    if (!tag_read(tags, raw + cs, ce - cs, agent_id, &rc)) {
      rc = ag_buf_append(out, raw + p, cs - p); /* not ours: keep "<world>" and look further on */
      if (rc) return rc;
      p = cs;
      continue;
    }
    if (rc) return rc;
    rc = ag_buf_append(out, raw + p, ts - p);
    if (rc) return rc;
    p = (size_t)(c - raw) + sizeof close - 1;
    if (out->len == 0 || is_space(out->data[out->len - 1]))
      while (p < len && is_hspace(raw[p])) p++;
    if (p >= len || raw[p] == '\n')
      while (out->len > 0 && is_hspace(out->data[out->len - 1])) out->data[--out->len] = '\0';
  }
  return ag_buf_append(out, raw + p, len - p);
}

/* Copies text into out line by line, dropping the mentions that open lines outside ``` fences: the
 * agent's own (always), every one when drop_all. */
static int mentions_strip(const char *text, const char *agent_id, int drop_all, const mention_known *known,
                          ag_buf *out) {
  int rc = AG_OK;
  mention_lines it = mention_lines_start(text);
  mention_line ln;
  while (mention_lines_next(&it, &ln)) {
    size_t kept = 0, pos = 0;
    mention_at m;
    while (!ln.code && mention_line_next_known(ln.start, ln.len, &pos, known, agent_id, &m)) {
      if (!drop_all && strcmp(m.id, agent_id) != 0) continue;
      rc = ag_buf_append(out, ln.start + kept, m.start - kept);
      if (rc) return rc;
      kept = m.next;
    }
    rc = ag_buf_append(out, ln.start + kept, ln.len + (size_t)ln.has_newline - kept);
    if (rc) return rc;
  }
  return AG_OK;
}

/* 1 when text has a leading mention of anyone but the agent (§5.4). */
static int leads_to_other(const char *text, const char *agent_id, const mention_known *known) {
  mention_lines it = mention_lines_start(text);
  mention_line ln;
  while (mention_lines_next(&it, &ln)) {
    size_t pos = 0;
    mention_at m;
    while (!ln.code && mention_line_next_known(ln.start, ln.len, &pos, known, agent_id, &m))
      if (strcmp(m.id, agent_id) != 0) return 1;
  }
  return 0;
}

int shape_reply(const char *raw, const char *agent_id, const char *sender, int auto_reply,
                const char *const *agent_ids, size_t n_ids, shape_outcome *outcome, char **out) {
  mention_known known = {.ids = agent_ids, .n = n_ids};
  return shape_reply_known(raw, agent_id, sender, auto_reply, &known, outcome, out);
}

int shape_reply_known(const char *raw, const char *agent_id, const char *sender, int auto_reply,
                      const mention_known *known, shape_outcome *outcome, char **out) {
  int rc = AG_OK;
  shape_tags tags = {0};
  ag_buf untagged, body, pub;
  char self[MENTION_ID_MAX];
  const char *b;
  size_t blen;

  if (!raw || !agent_id || !outcome || !out) return AG_ERR_INVALID;
  *out = NULL;
  *outcome = SHAPE_EMPTY;
  if (only_space(raw)) return AG_OK;
  /* Mentions are compared as lower-case ids; an id too long to be one is used as given. */
  if (mention_id_from_name(agent_id, self, sizeof self) != AG_OK) {
    strncpy(self, agent_id, sizeof self - 1);
    self[sizeof self - 1] = '\0';
  }

  /* Nothing grows past the raw text but the TO: header, which is shorter than the tag it came from. */
  size_t cap = 2 * strlen(raw) + MENTION_ID_MAX + 16;
  ag_buf_init(&untagged, cap);
  ag_buf_init(&body, cap);
  ag_buf_init(&pub, cap);

  rc = tags_strip(raw, self, &tags, &untagged);
  if (rc) goto fail;
  rc = mentions_strip(ag_buf_str(&untagged), self, tags.stop || tags.to.n > 0, known, &body);
  if (rc) goto fail;

  /* The published text is trimmed; trimming the body first makes "nothing left" easy to see. */
  b = ag_buf_str(&body);
  blen = body.len;
  while (blen > 0 && is_space(b[blen - 1])) blen--;
  while (blen > 0 && is_space(*b)) b++, blen--;
  if (blen == 0) {
    *outcome = SHAPE_SILENT;
    goto done;
  }

  if (!tags.stop && tags.to.n > 0) {
    for (size_t i = 0; i < tags.to.n && !rc; i++) rc = ag_buf_printf(&pub, "@%s\n", tags.to.ids[i]);
    if (!rc) rc = ag_buf_appends(&pub, "\n");
  } else if (!tags.stop && auto_reply && sender && ag_sender_kind(sender) == AG_KIND_AGENT &&
             !leads_to_other(b, self, known)) {
    /* The reply goes back to whom it answers; before a ``` fence the mention takes its own line, or the
     * fence would no longer open a line and the code would be shown as text. */
    rc = ag_buf_printf(&pub, mention_is_fence(b, blen) ? "@%s\n" : "@%s ", sender);
  }
  if (!rc) rc = ag_buf_append(&pub, b, blen);
  if (rc) goto fail;
  *out = ag_buf_take(&pub);
  if (!*out) {
    rc = AG_ERR_NOMEM;
    goto fail;
  }
  *outcome = SHAPE_PUBLISH;
done:
fail:
  ag_buf_free(&untagged);
  ag_buf_free(&body);
  ag_buf_free(&pub);
  mention_list_free(&tags.to);
  return rc;
}
