/* `{{name}}` prompt variables (issue 13): texts in system prompts, scheduled messages and script steps
 * are rendered against a small table of variables — the world's `variables` first, then built-ins the
 * caller provides (world, agent, agents, date, time, weekday, turn_limit). Pure: no clock, no world.
 *
 * SYNTAX. `{{name}}` is replaced by the variable's value (once: a value holding `{{` is not expanded
 * again). Spaces or tabs inside the braces are allowed (`{{ town }}`). A name is an ASCII letter or `_`
 * followed by letters, digits and `_`, at most TEMPLATE_NAME_MAX bytes. `{{{{` writes a literal `{{`
 * (so `{{{{town}}` writes `{{town}}`); a `}}` or single brace outside a variable is plain text.
 * Errors: an unknown name (the message lists the known ones), an empty or malformed name, a `{{` with
 * no `}}` after it. Nothing is silently replaced by an empty string. */
#ifndef AG_TEMPLATE_H
#define AG_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

struct ag_errmsg;
struct ag_buf;

#define TEMPLATE_NAME_MAX 64

typedef struct template_vars template_vars;

int template_vars_new(template_vars **out);
void template_vars_free(template_vars *v);

/* Sets a world variable (name and value copied; a set name gets the new value). value NULL declares
 * the name without a value yet: template_check accepts it, template_render fails on it. AG_ERR_INVALID
 * for a name template_name_valid rejects. */
int template_vars_set(template_vars *v, const char *name, const char *value);
/* The same for a built-in, which is looked up only when no world variable has the name. */
int template_vars_set_builtin(template_vars *v, const char *name, const char *value);
/* Sets the built-ins date ("2026-03-01"), time ("08:00") and weekday ("Sunday") to the UTC time ms. */
int template_vars_set_time(template_vars *v, int64_t ms);

/* 1 when name may be a variable's name. */
int template_name_valid(const char *name);

/* Checks text at load time: every `{{name}}` is known (with or without a value yet) and well formed.
 * AG_OK or AG_ERR_INVALID with em ("unknown variable 'twn' (known: town, world, date)"); the caller
 * prefixes the JSON path. */
int template_check(const char *text, const template_vars *v, struct ag_errmsg *em);

/* Appends text rendered against v to out (borrowed; its cap bounds the result). AG_ERR_INVALID as
 * template_check, AG_ERR_STATE for a known variable with no value, AG_ERR_TOO_BIG past out's cap; on
 * error out holds a partial result the caller discards. */
int template_render(const char *text, const template_vars *v, struct ag_buf *out, struct ag_errmsg *em);

#endif
