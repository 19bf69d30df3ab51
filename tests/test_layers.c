/* The one-way dependency rule of docs/architecture.md, read from the source tree: a folder includes
 * only its own headers and those of lower layers. Folders side by side (net and storage, llm and mcp,
 * chat and cluster, console and serve) do not include each other, so net/ includes only common/, and
 * mcp/ reaches the network through net/, never through llm/. Folders not in the table (tests, bench,
 * fuzz, a new layer) are not checked. A subsystem that runs on libagora (issue 27: console/, serve/)
 * includes only common/'s pure helpers besides its own headers: it reaches the world through
 * include/agora.h.
 * So does cli/, which may also include its subsystems' doors (console/console.h, serve/serve.h), and
 * those doors themselves include no folder but common/. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "support/unit.h"

typedef struct layer {
  const char *dir;
  int rank; /* an include must name a folder of lower rank, or its own */
  int lib;  /* on libagora: of the other folders, common/ alone (cli/: and its subsystems' doors) */
} layer;

static const layer layers[] = {
    {.dir = "common", .rank = 0},  {.dir = "storage", .rank = 1}, {.dir = "net", .rank = 1},
    {.dir = "llm", .rank = 2},     {.dir = "mcp", .rank = 2},     {.dir = "agents", .rank = 3},
    {.dir = "world", .rank = 4},   {.dir = "chat", .rank = 5},    {.dir = "cluster", .rank = 5},
    {.dir = "runtime", .rank = 6}, {.dir = "console", .rank = 7, .lib = 1}, {.dir = "serve", .rank = 7, .lib = 1},
    {.dir = "cli", .rank = 8, .lib = 1},
};
#define N_LAYERS (sizeof layers / sizeof *layers)

/* cli/'s includes of its subsystems (console/, serve/): only their doors, checked themselves below. */
static int subsystem_door(const layer *from, const char *name) {
  return !strcmp(from->dir, "cli") &&
         (!strncmp(name, "console/console.h\"", 18) || !strncmp(name, "serve/serve.h\"", 14));
}

static const layer *layer_of(const char *name, size_t len) {
  for (size_t i = 0; i < N_LAYERS; i++)
    if (strlen(layers[i].dir) == len && strncmp(layers[i].dir, name, len) == 0) return &layers[i];
  return NULL;
}

/* Checks one file's `#include "dir/..."` lines; returns the number of includes that go up or sideways. */
static int check_file(const layer *from, const char *path) {
  FILE *f = fopen(path, "r");
  char line[1024];
  int bad = 0, n = 0;
  CHECK(f != NULL);
  while (f && fgets(line, sizeof line, f)) {
    n++;
    if (strncmp(line, "#include \"", 10) != 0) continue;
    const char *name = line + 10, *slash = strchr(name, '/');
    const layer *to = slash ? layer_of(name, (size_t)(slash - name)) : NULL;
    if (to && to != from && from->lib && to->rank > 0 && !subsystem_door(from, name)) {
      unit_fail_(path, n, "%s/ includes %.*s/ (it runs on include/agora.h: common/ alone)", from->dir,
                 (int)(slash - name), name);
      bad++;
      continue;
    }
    if (!to || to == from || to->rank < from->rank) continue;
    unit_fail_(path, n, "%s/ includes %.*s/ (%s/ is not below it)", from->dir, (int)(slash - name), name, to->dir);
    bad++;
  }
  if (f) fclose(f);
  return bad;
}

static int check_dir(const layer *l) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", unit_src_path(l->dir));
  DIR *d = opendir(dir);
  int bad = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0)) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    bad += check_file(l, path);
  }
  if (d) closedir(d);
  return d ? bad : -1;
}

static void includes_point_down(void) {
  for (size_t i = 0; i < N_LAYERS; i++) CHECK_INT(check_dir(&layers[i]), 0);
}

/* The subsystems' doors, which cli/ includes: like a file of a folder on libagora. */
static void doors_are_public(void) {
  static const layer door = {.dir = "door", .rank = 7, .lib = 1};
  static const char *const doors[] = {"console/console.h", "serve/serve.h"};
  for (size_t i = 0; i < sizeof doors / sizeof *doors; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s", unit_src_path(doors[i]));
    CHECK_INT(check_file(&door, path), 0);
  }
}

int main(int argc, char **argv) {
  static const unit_test tests[] = {UNIT(includes_point_down), UNIT(doors_are_public)};
  return unit_main(argc, argv, tests, sizeof tests / sizeof *tests);
}
