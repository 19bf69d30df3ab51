/* hello: the smallest program on libagora. Opens a world file, prints every message as the agents
 * answer one human message, and exits when the world is quiet.
 *
 *   cc hello.c $(pkg-config --cflags --libs agora) -o hello
 *   ./hello /usr/share/agora/examples/relay.json "@Ann the relay starts now"
 */
#include <agora.h>

#include <stdio.h>

static void print_message(const agora_event *ev, void *ctx) {
  (void)ctx;
  if (agora_event_type(ev) == AGORA_EVENT_MESSAGE) printf("%s: %s\n", agora_event_sender(ev), agora_event_text(ev));
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hello WORLD.json TEXT\n");
    return 2;
  }
  agora_world *w = NULL;
  agora_options opts = {.flags = AGORA_NO_SAVE}; /* nothing stored: a one-off run */
  int rc = agora_world_open(argv[1], NULL, &opts, &w);
  if (!rc) rc = agora_subscribe(w, print_message, NULL) < 0 ? -1 : 0;
  if (!rc) rc = agora_publish(w, "human", argv[2]);
  if (!rc) rc = agora_run_until_quiet(w);
  if (rc) fprintf(stderr, "hello: %s (%s)\n", agora_errmsg(), agora_strerror(rc));
  agora_world_close(w);
  printf("libagora %s\n", agora_version());
  return rc ? 1 : 0;
}
