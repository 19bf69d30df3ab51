/* The agora commands. Each takes the arguments after its name and returns the process exit status
 * (docs/cli.md: 0 success, 1 runtime failure, 2 bad usage or input). */
#ifndef AG_CLI_H
#define AG_CLI_H

int cli_run(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_chats(int argc, char **argv);
int cli_worlds(int argc, char **argv);
int cli_console(int argc, char **argv);
int cli_say(int argc, char **argv);
int cli_init(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_tools(int argc, char **argv);
int cli_host(int argc, char **argv);
int cli_cache(int argc, char **argv);
int cli_memory(int argc, char **argv);

/* "agora: <message>" on stderr; returns the exit status for err. */
int cli_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when arg is -h or --help. */
int cli_is_help(const char *arg);

#endif
