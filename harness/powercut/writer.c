// SPDX-License-Identifier: Apache-2.0
// pc-writer: the power-cut harness's own self-test (harness/powercut/guest.sh, phase "broken"):
// a stand-in for the kiosk's grant that writes the used-token store in the kiosk's own format
// (Sources/Policy/Credentials/UsedTokens.swift: a header, "c:CTI -" lines sorted, "end COUNT") the
// way the kiosk does (Sources/Platform/SmallFile.swift: STORE.new written, fsync, rename over
// STORE, fsync of the folder), or with a step left out, so that the checker can be shown to catch
// a write path that is not durable. The store it leaves is read by the real kiosk at each point.
//
//   pc-writer MODE STORE CTI-HEX...     one claim: the store rewritten whole to hold these CTIs
//                                       (the last one the new grant), as the kiosk rewrites it;
//                                       prints "granted LAST-CTI" once the claim returned
//   MODE: good       write, fsync, rename, fsync the folder (the kiosk's path)
//         nofsync    write, rename, fsync the folder (the fsync before the rename left out)
//         nosync     write, rename (no fsync at all)
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void fail(const char *what) { perror(what); exit(1); }

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: pc-writer good|nofsync|nosync STORE CTI-HEX...\n"); return 64; }
  const char *mode = argv[1], *store = argv[2];
  int sync_file = !strcmp(mode, "good"), sync_dir = strcmp(mode, "nosync") != 0;
  if (!sync_file && strcmp(mode, "nofsync") && strcmp(mode, "nosync")) { fprintf(stderr, "pc-writer: unknown mode %s\n", mode); return 64; }
  char tmp[4096], dir[4096];
  snprintf(tmp, sizeof tmp, "%s.new", store);
  snprintf(dir, sizeof dir, "%s", store);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0; else strcpy(dir, ".");
  int n = argc - 3;
  char **keys = calloc((size_t)n, sizeof *keys);
  memcpy(keys, argv + 3, (size_t)n * sizeof *keys);
  qsort(keys, (size_t)n, sizeof *keys, cmp);
  FILE *f = fopen(tmp, "w");
  if (!f) fail(tmp);
  fprintf(f, "kiosk-used-tokens 1\n");
  for (int j = 0; j < n; j++) fprintf(f, "c:%s -\n", keys[j]);
  fprintf(f, "end %d\n", n);
  if (fflush(f) != 0) fail(tmp);
  if (sync_file && fsync(fileno(f)) != 0) fail("fsync");
  if (fclose(f) != 0) fail(tmp);
  if (rename(tmp, store) != 0) fail("rename");
  if (sync_dir) {
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    if (d < 0 || fsync(d) != 0) fail("fsync of the folder");
    close(d);
  }
  printf("granted %s\n", argv[argc - 1]);
  return 0;
}
