/* Parity of the doors (tests/test_parity.c): a stored chat reduced to the lines every door must agree
 * on, each tagged with the features it shows, and the table "Parity: features × doors" read back from
 * docs/architecture.md, so that what a door did is checked against what the page says of it. */
#ifndef AG_TEST_PARITY_H
#define AG_TEST_PARITY_H

#include <stddef.h>

#include "support/llm_server.h"

struct cJSON;

/* The table's rows, in its order. */
typedef enum parity_feature {
  PF_MCP,       /* a tool of an MCP server (server-everything's echo) */
  PF_APPROVE,   /* a tool declared "approve": true, approved */
  PF_ASK,       /* ask_human, answered */
  PF_SIM,       /* each message's sim_time on the virtual clock */
  PF_SCHEDULE,  /* the scheduled item delivered, and its answer */
  PF_VARIABLES, /* {{variables}} rendered in the scheduled text */
  PF_STREAM,    /* memory mode stream: what `agora memory` lists, the memories retrieved into a prompt */
  PF_SUMMARY,   /* memory mode summary: the summariser's answer stored in the thread, sent in the prompts */
  PF_REMEMBER,  /* the remember tool: its call, its result and the note it left in the stream */
  PF_REFLECT,   /* reflection: the stored insights, where they came among the messages, their notes */
  PF_CONTEXT,   /* context_tokens: the prompts the loopback LLM server recorded */
  PF_COUNT
} parity_feature;

#define PARITY_MAX_LINES 128
#define PARITY_MAX_DOORS 12

/* One line of a stored chat: a message ("msg SENDER (KIND): TEXT"), its simulated time ("sim SENDER:
 * TIME"), a thread step ("call AGENT TOOL ARGS", "result AGENT TOOL error=B RESULT", "reflection AGENT
 * after #SEQ: INSIGHTS", "summary AGENT after #SEQ: TEXT"), a memory ("memory AGENT #SEQ TIME
 * importance N [note] [from SOURCES] SENDER: TEXT") or a prompt a model was sent ("prompt: MESSAGES
 * tools=NAMES"), without wall times or ids, which differ between any two runs. */
typedef struct parity_line {
  char *text;
  unsigned tags; /* 1u << parity_feature */
} parity_line;

typedef struct parity_chat {
  parity_line lines[PARITY_MAX_LINES];
  size_t n;
} parity_chat;

/* The one chat stored in db (`agora chats list` and `chats show --json`, through $AGORA_BIN) into c.
 * 0, else -1 with the running test failed saying why. */
int parity_chat_load(const char *db, parity_chat *c);
/* The same, appended to what c holds (a door's lines for two worlds in one parity_chat). */
int parity_chat_add(const char *db, parity_chat *c);
/* What agent remembers in the one chat of db (`agora memory CHAT AGENT --json`), appended to c; 0 or -1
 * (the running test failed). */
int parity_memory_add(const char *db, const char *agent, parity_chat *c);
/* The memories of a JSON array (serve's GET .../agents/{name}/memory: "memories") as agent's, appended to
 * c as parity_memory_add appends `agora memory`'s lines. */
void parity_memories_add(const char *agent, const struct cJSON *list, parity_chat *c);
/* The requests srv recorded since its last reset, in order, appended to c as "prompt" lines. */
void parity_prompts_add(llm_server *srv, parity_chat *c);
/* The lines as text, one a line, with their tags (for a failure's message; caller frees). */
char *parity_chat_text(const parity_chat *c);
void parity_chat_free(parity_chat *c);

/* The table: doors are its columns after the first, features its rows; a cell is "same" or "refused:
 * ..." where the text in double quotes is what the door must say (in its output or the stored chat). */
typedef struct parity_table {
  char *doors[PARITY_MAX_DOORS];
  size_t n_doors;
  char *cells[PF_COUNT][PARITY_MAX_DOORS];
} parity_table;

/* Reads the section "## Parity: features × doors" of the Markdown file at path. Every row must name a
 * feature (its first cell starts with the feature's name) and every feature must have its row. 0, else
 * -1 with the running test failed saying why. */
int parity_table_load(const char *path, parity_table *t);
void parity_table_free(parity_table *t);

/* Checks door's column against what it did: for each feature, the lines tagged with it (and with no
 * feature the door refuses) equal ref's when the cell says "same", and differ when it says "refused",
 * whose quoted reason must appear in said (the door's output and stored lines); every line of no refused
 * feature equals ref's. Fails the running test naming the door and feature; returns the failures. */
/* 1 when the lines of a and b tagged with any of want and none of skip are the same, in order. */
int parity_same_lines(const parity_chat *a, const parity_chat *b, unsigned want, unsigned skip);

int parity_check(const parity_table *t, const char *door, const parity_chat *ref, const parity_chat *got,
                 const char *said);

#endif
