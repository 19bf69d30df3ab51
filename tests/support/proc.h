/* Running the built agora binary from tests, end to end: arguments in, exit status and the whole
 * stdout and stderr out. */
#ifndef AG_TEST_PROC_H
#define AG_TEST_PROC_H

#include <stddef.h>
#include <sys/types.h>

typedef struct proc_result {
  int status;   /* exit status, or 128+signal */
  char *out;    /* stdout, owned */
  char *err;    /* stderr, owned */
} proc_result;

/* Runs $AGORA_BIN with args (NULL-terminated, without argv[0]); input (may be NULL) is written to
 * its stdin. extra_env (may be NULL) is a NULL-terminated list of "NAME=value" set in the child. */
int proc_agora(const char *const *args, const char *input, const char *const *extra_env, proc_result *r);
void proc_result_free(proc_result *r);

/* Runs agora with args and extra_env (may be NULL) as proc_agora does; it must refuse to (exit status 2)
 * with want and also (when not NULL) on stderr, which is printed when they are not there. A failure is
 * the caller's case, reported at its line. */
#define PROC_REFUSED(args, extra_env, want, also) proc_refused_(__FILE__, __LINE__, args, extra_env, want, also)
void proc_refused_(const char *file, int line, const char *const *args, const char *const *extra_env,
                   const char *want, const char *also);

/* Runs agora as proc_agora does into *r, which must run and exit 0: otherwise a failure of the caller's
 * case at its line, showing stderr. r is filled either way (proc_result_free it). */
#define PROC_OK(args, input, extra_env, r) proc_ok_(__FILE__, __LINE__, args, input, extra_env, r)
int proc_ok_(const char *file, int line, const char *const *args, const char *input, const char *const *extra_env,
             proc_result *r);
/* Writes json to path, then `agora run PATH --no-save --json` as proc_agora does (extra_env may be
 * NULL): 0, or -1 when the file could not be written or the binary not run. */
int proc_run_world(const char *path, const char *json, const char *const *extra_env, proc_result *r);

/* `agora chats list --db DB --json` as a cJSON array of chat objects (caller deletes; empty when the
 * command failed). */
struct cJSON *proc_chats_list(const char *db);
/* `agora chats import FILE --db DB`: the new chat's id (its first line of output) into id: 0, or -1 when
 * the import failed. */
int proc_import_snapshot(const char *file, const char *db, char *id, size_t cap);
/* The id of the first chat that list shows (the one updated last) into id: 0, or -1 when there is none. */
int proc_first_chat(const char *db, char *id, size_t cap);

/* Starts $AGORA_BIN with args (NULL-terminated, without argv[0]) in the background and returns its pid
 * (-1 when fork failed). Its stdin is in_fd (-1: this process's own); its stdout goes into out_path and
 * its stderr into err_path (files made or emptied; the same path for both: one file, in the order
 * written; NULL: this process's own). extra_env (may be NULL) is "NAME=value" entries set in the child.
 * The caller waits for it (waitpid, agora_wait). */
pid_t proc_spawn(const char *const *args, int in_fd, const char *out_path, const char *err_path,
                 const char *const *extra_env);

/* The NDJSON lines of out with "type":"message", as "sender|kind|text" strings joined by '\n'
 * (caller frees) — a compact form to compare whole transcripts against. */
char *proc_messages(const char *ndjson);

/* proc_messages(ndjson) is want: a failure of the caller's case at its line, showing both. */
#define CHECK_MESSAGES(ndjson, want) proc_check_messages_(__FILE__, __LINE__, ndjson, want)
void proc_check_messages_(const char *file, int line, const char *ndjson, const char *want);

/* This process's children as /proc lists them, zombies included: a reaped child is not among them. */
int proc_children(void);

#endif
