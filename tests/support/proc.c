/* fork/exec of the agora binary: with pipes for stdin, stdout and stderr, or in the background with
 * its output in files (see proc.h). */
#include "support/proc.h"

#include "support/unit.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sbuf_add(sbuf *b, const char *d, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n + 1) nc *= 2;
    b->p = realloc(b->p, nc);
    b->cap = nc;
  }
  memcpy(b->p + b->len, d, n);
  b->len += n;
  b->p[b->len] = '\0';
}

/* In the child: sets extra_env and becomes $AGORA_BIN (else ./agora) with args; never returns. */
static void exec_agora(const char *const *args, const char *const *extra_env) {
  const char *bin = getenv("AGORA_BIN");
  if (!bin) bin = "./agora";
  for (size_t i = 0; extra_env && extra_env[i]; i++) putenv((char *)extra_env[i]);
  size_t n = 0;
  while (args[n]) n++;
  char **argv = calloc(n + 2, sizeof *argv);
  if (!argv) _exit(126);
  argv[0] = (char *)bin;
  for (size_t i = 0; i < n; i++) argv[i + 1] = (char *)args[i];
  execv(bin, argv);
  _exit(127);
}

/* In the child: path opened for writing (made, or emptied) as descriptor fd. */
static void redirect(const char *path, int fd) {
  int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (f < 0 || dup2(f, fd) < 0) _exit(126);
  if (f != fd) close(f);
}

pid_t proc_spawn(const char *const *args, int in_fd, const char *out_path, const char *err_path,
                 const char *const *extra_env) {
  fflush(NULL); /* what this process has buffered is written once, not again by the child */
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (in_fd >= 0 && in_fd != 0 && dup2(in_fd, 0) < 0) _exit(126);
  if (out_path) redirect(out_path, 1);
  if (err_path && out_path && !strcmp(err_path, out_path)) dup2(1, 2);
  else if (err_path) redirect(err_path, 2);
  exec_agora(args, extra_env);
  return -1;
}

int proc_agora(const char *const *args, const char *input, const char *const *extra_env, proc_result *r) {
  int in[2], out[2], err[2];
  if (pipe(in) || pipe(out) || pipe(err)) return -1;
  signal(SIGPIPE, SIG_IGN);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(in[0]); close(in[1]); close(out[0]); close(out[1]); close(err[0]); close(err[1]);
    exec_agora(args, extra_env);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  sbuf o = {0}, e = {0};
  sbuf_add(&o, "", 0);
  sbuf_add(&e, "", 0);
  size_t in_len = input ? strlen(input) : 0, in_pos = 0;
  if (!in_len) {
    close(in[1]);
    in[1] = -1;
  }
  int open_out = 1, open_err = 1;
  while (open_out || open_err) {
    struct pollfd p[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    int np = in[1] >= 0 ? 3 : 2;
    if (!open_out) p[0].fd = -1;
    if (!open_err) p[1].fd = -1;
    if (poll(p, (nfds_t)np, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    char buf[65536];
    if (open_out && (p[0].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) open_out = 0;
      else sbuf_add(&o, buf, (size_t)n);
    }
    if (open_err && (p[1].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(err[0], buf, sizeof buf);
      if (n <= 0) open_err = 0;
      else sbuf_add(&e, buf, (size_t)n);
    }
    if (np == 3 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in[1], input + in_pos, in_len - in_pos);
      if (n > 0) in_pos += (size_t)n;
      if (n <= 0 || in_pos == in_len) {
        close(in[1]);
        in[1] = -1;
      }
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  close(err[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r->out = o.p;
  r->err = e.p;
  return 0;
}

void proc_result_free(proc_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

char *proc_messages(const char *ndjson) {
  sbuf b = {0};
  sbuf_add(&b, "", 0);
  const char *line = ndjson;
  while (line && *line) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    cJSON *j = cJSON_ParseWithLength(line, n);
    const cJSON *type = cJSON_GetObjectItem(j, "type");
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "message")) {
      const char *f[3] = {"sender", "kind", "text"};
      for (int i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItem(j, f[i]);
        const char *s = cJSON_IsString(v) ? v->valuestring : "?";
        sbuf_add(&b, s, strlen(s));
        sbuf_add(&b, i < 2 ? "|" : "\n", 1);
      }
    }
    cJSON_Delete(j);
    line = nl ? nl + 1 : NULL;
  }
  return b.p;
}

cJSON *proc_chats_list(const char *db) {
  const char *args[] = {"chats", "list", "--db", db, "--json", NULL};
  proc_result r;
  cJSON *arr = cJSON_CreateArray();
  if (proc_agora(args, NULL, NULL, &r)) return arr;
  for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) cJSON_AddItemToArray(arr, cJSON_Parse(line));
  proc_result_free(&r);
  return arr;
}

int proc_first_chat(const char *db, char *id, size_t cap) {
  cJSON *arr = proc_chats_list(db);
  const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "id"));
  if (got) snprintf(id, cap, "%s", got);
  cJSON_Delete(arr);
  return got ? 0 : -1;
}

int proc_run_world(const char *path, const char *json, const char *const *extra_env, proc_result *r) {
  memset(r, 0, sizeof *r);
  FILE *f = fopen(path, "w");
  int bad = !f || fputs(json, f) < 0;
  if (f && fclose(f)) bad = 1;
  if (bad) return -1;
  const char *args[] = {"run", path, "--no-save", "--json", NULL};
  return proc_agora(args, NULL, extra_env, r);
}

int proc_import_snapshot(const char *file, const char *db, char *id, size_t cap) {
  const char *args[] = {"chats", "import", file, "--db", db, NULL};
  proc_result r;
  int rc = proc_agora(args, NULL, NULL, &r);
  if (!rc && r.status == 0) snprintf(id, cap, "%.*s", (int)strcspn(r.out, "\r\n"), r.out);
  rc = rc || r.status || !id[0] ? -1 : 0;
  proc_result_free(&r);
  return rc;
}

void proc_refused_(const char *file, int line, const char *const *args, const char *const *extra_env,
                   const char *want, const char *also) {
  proc_result r = {.status = 0};
  if (proc_agora(args, NULL, extra_env, &r)) unit_fail_(file, line, "agora %s did not run", args[0]);
  else if (r.status != 2) unit_fail_(file, line, "agora %s: exit status %d, expected 2", args[0], r.status);
  else if (!strstr(r.err, want) || (also && !strstr(r.err, also)))
    unit_fail_(file, line, "agora %s: stderr lacks '%s'%s%s: %s", args[0], want, also ? " or " : "", also ? also : "",
               r.err);
  proc_result_free(&r);
}

int proc_ok_(const char *file, int line, const char *const *args, const char *input, const char *const *extra_env,
             proc_result *r) {
  *r = (proc_result){.status = -1};
  if (proc_agora(args, input, extra_env, r)) {
    unit_fail_(file, line, "agora %s did not run", args[0]);
    return 0;
  }
  if (r->status) unit_fail_(file, line, "agora %s: exit status %d, expected 0: %s", args[0], r->status, r->err);
  return !r->status;
}

void proc_check_messages_(const char *file, int line, const char *ndjson, const char *want) {
  char *got = proc_messages(ndjson);
  if (!got || strcmp(got, want) != 0)
    unit_fail_(file, line, "messages == \"%s\", expected \"%s\"", got ? got : "(null)", want);
  free(got);
}

int proc_children(void) {
  DIR *d = opendir("/proc");
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char path[300], stat[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f) fclose(f);
    stat[len] = '\0';
    const char *after = strrchr(stat, ')'); /* "pid (comm) state ppid": comm may hold anything */
    char state;
    long ppid;
    if (after && sscanf(after + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)getpid()) n++;
  }
  if (d) closedir(d);
  return n;
}
