/* The virtual clock's speed (issue 13): a 30-day simulated world, 20 scripted agents, an hourly cron
 * item every agent answers, run as a discrete-event simulation without storage. Reports simulated hours
 * per real second and messages per second, min/median/max over runs. Usage: bench_sim [days] [runs]. */
#include "support/bench_stat.h"
#include "world/clock.h"
#include "world/world.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AGENTS 20


/* One simulated run of days days: seconds taken into *secs, messages into *msgs. */
static int sim_once(int days, double *secs, double *msgs) {
  char json[8192];
  int n = snprintf(json, sizeof json,
                   "{\"name\": \"bench\", \"variables\": {\"town\": \"Millbrook\"},"
                   " \"clock\": {\"mode\": \"virtual\", \"start\": \"2026-03-01T00:00:00Z\","
                   " \"until\": \"2026-03-%02dT00:00:00Z\"},"
                   " \"schedule\": [{\"cron\": \"0 * * * *\", \"from\": \"world\","
                   " \"text\": \"{{town}}, {{weekday}} {{time}}: report.\"}], \"agents\": [",
                   days + 1 > 31 ? 31 : days + 1);
  for (int i = 0; i < AGENTS; i++)
    n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"name\": \"a%d\", \"system_prompt\": \"{{agent}} on {{date}}\","
                  " \"replies\": [\"all well\", \"nothing new\"]}", i ? "," : "", i);
  snprintf(json + n, sizeof json - (size_t)n, "]}");
  world_spec spec;
  ag_errmsg em = {""};
  struct event_base *base = event_base_new();
  world *w = NULL;
  world_clock *c = NULL;
  int rc = world_spec_parse(json, strlen(json), "bench", &spec, &em);
  if (!rc) rc = world_new(base, &spec, &w, &em);
  if (!rc) rc = world_clock_new(w, &c, &em);
  double t0 = bench_now_s();
  if (!rc) rc = world_clock_finish(c);
  *secs = bench_now_s() - t0;
  *msgs = w ? (double)world_last_seq(w) : 0;
  if (rc) fprintf(stderr, "bench_sim: %s\n", em.text[0] ? em.text : ag_strerror(rc));
  world_clock_free(c);
  world_free(w);
  if (!rc) world_spec_free(&spec);
  event_base_free(base);
  return rc;
}

int main(int argc, char **argv) {
  int days = argc > 1 ? atoi(argv[1]) : 30, runs = argc > 2 ? atoi(argv[2]) : 5;
  if (days < 1 || days > 30 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: bench_sim [days 1-30] [runs]\n");
    return 2;
  }
  double hours[100], rate[100], msgs = 0;
  for (int r = 0; r < runs; r++) {
    double secs;
    if (sim_once(days, &secs, &msgs)) return 1;
    hours[r] = days * 24 / secs;
    rate[r] = msgs / secs;
  }
  printf("%d simulated days, %d agents, hourly cron: %.0f messages a run\n\n", days, AGENTS, msgs);
  printf("| %-46s | %10s | %10s | %10s | %-9s |\n", "scenario", "min", "median", "max", "unit");
  printf("|------------------------------------------------|------------|------------|------------|-----------|\n");
  bench_row("virtual clock, no storage", "sim hours/s", hours, runs);
  bench_row("  messages published and answered", "messages/s", rate, runs);
  return 0;
}
