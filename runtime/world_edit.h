/* A running world's settings changed by a door (issue 24 over HTTP, issue 27 through libagora): the
 * change edits the world's settings in world-file form, the whole document is checked again by the
 * world file's own readers (errors name the JSON path), then it is made to the loaded world while no
 * reply is in flight and stored with the world. The change is untrusted input, as a PATCH body is: only
 * the fields listed below may change, a new agent sends its API key only where a stored world's agent
 * may (rt_key_withhold), and a changed agent keeps the rule it had (rt_key_keep). */
#ifndef AG_RT_WORLD_EDIT_H
#define AG_RT_WORLD_EDIT_H

#include <cjson/cJSON.h>

#include "runtime/runtime.h"

#define RT_EDIT_MAX (1u << 20) /* bytes of a change's JSON text from a program (a PATCH body's cap) */

typedef enum rt_edit_op {
  RT_EDIT_SETTINGS,     /* doc's fields (rt_edit_settings_fields) replace the world's; null: the default */
  RT_EDIT_AGENT_ADD,    /* doc is a new agent, as the world file's agents[] hold them */
  RT_EDIT_AGENT_CHANGE, /* doc's fields (rt_edit_agent_fields) replace agent's; null: the default */
  RT_EDIT_AGENT_REMOVE  /* agent leaves (refused with AG_ERR_STATE when it is the main agent) */
} rt_edit_op;

/* The fields a change may name (NULL-terminated): what a person may change while the world is open. */
extern const char *const rt_edit_settings_fields[];
extern const char *const rt_edit_agent_fields[];

/* One change; every pointer borrowed for the call. */
typedef struct rt_edit {
  rt_edit_op op;
  const char *agent;          /* RT_EDIT_AGENT_CHANGE, _REMOVE: its name or id */
  const char *like;           /* RT_EDIT_AGENT_ADD: the agent (name or id) the new one starts from, or NULL:
                                 its settings without its scripted replies, doc's fields on top; the new
                                 agent keeps like's key rule unless doc gives provider, base_url,
                                 api_key_env or memory a value (a person copying an agent of the world's
                                 own) */
  const cJSON *doc;           /* RT_EDIT_SETTINGS, _AGENT_ADD, _AGENT_CHANGE: the change */
  const char *cmd;            /* names the door in the withheld-key note ("serve") */
  int quiet;                  /* no withheld-key note on stderr (the library without AGORA_NOTES) */
  const char *url_override;   /* the --base-url the person gave (may be NULL) */
  const rt_allow_env *allow;  /* --allow-env, --allow-key-to (may be NULL) */
  const char *label;          /* names the change in errors ("agora_agent_change"); NULL: the world's id */
  const char *cancel_how;     /* how to cancel replies in flight, for the message ("POST .../cancel") */
  const char *change_how;     /* how to change an agent that exists, for AG_ERR_EXISTS ("PATCH it") */
} rt_edit;

/* Makes change e to rt's world, stores it with the world (when it has a session) and, with agent_out,
 * hands the agent added or changed in world-file form to the caller (*agent_out, cJSON_Delete). Nothing
 * changes on failure: AG_ERR_STATE while replies are in flight, on a world joined over NATS (its settings
 * are its file's) or when a removal leaves the world invalid; AG_ERR_INVALID for a change the world
 * file's readers refuse (em names the path); AG_ERR_NOT_FOUND for an unknown agent; AG_ERR_EXISTS for
 * an agent added twice. */
int rt_world_edit(runtime *rt, const rt_edit *e, cJSON **agent_out, ag_errmsg *em);

#endif
