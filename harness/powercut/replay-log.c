// SPDX-License-Identifier: Apache-2.0
// replay-log: reads the log that device-mapper's log-writes target keeps, lists its entries and
// replays a prefix of it onto a scratch device (or image file): the state a disk would hold if the
// power had gone after that entry. Written for harness/powercut from the format the kernel
// documents (Documentation/admin-guide/device-mapper/log-writes.rst, drivers/md/dm-log-writes.c);
// no code of xfstests' replay-log is in it.
//
//   replay-log --log LOG --list                     one line an entry (below)
//   replay-log --log LOG --find-mark NAME           the index of the first MARK entry named NAME
//   replay-log --log LOG --replay DEV --to N [--from K]
//        writes entries K..N-1 (K defaults to 0) onto DEV: with K > 0, DEV must already hold the
//        replay of entries 0..K-1 (an incremental replay); N may be the entry count (all of it)
//
// The log (all numbers little-endian):
//   the super block, in the first SECTORSIZE bytes: u64 magic 0x6a736677736872, u64 version 1,
//     u64 nr_entries, u32 sectorsize (the data device's logical block size)
//   then the entries, each starting on a SECTORSIZE boundary: a SECTORSIZE block whose first 32
//     bytes are u64 sector, u64 nr_sectors (both in SECTORSIZE units of the data device),
//     u64 flags, u64 data_len; a MARK's name (data_len bytes) follows in that block; a write's
//     nr_sectors * SECTORSIZE bytes of data follow the block; a DISCARD and a FLUSH carry none.
//   flags: 1 FLUSH, 2 FUA, 4 DISCARD, 8 MARK, 16 METADATA
// The target logs a write only once a flush has made it durable (or at once for FUA), so the log
// is the order in which data reached stable storage: any prefix of it is a possible disk after a
// power cut. nr_entries in the super block is updated at each FUA and MARK, and at removal.
//
// --list prints: INDEX FLAGS SECTOR NR_SECTORS [MARK-NAME], FLAGS a comma list or "-", e.g.
//   17 FLUSH,FUA 40960 1
//   18 MARK 0 0 grant-1
// and a first line "# entries N sectorsize S".
// A DISCARD is replayed as zeros (what a loop device on tmpfs reads back after one).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MAGIC 0x6a736677736872ULL
#define F_FLUSH 1u
#define F_FUA 2u
#define F_DISCARD 4u
#define F_MARK 8u
#define F_METADATA 16u

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void die(const char *what) {
  fprintf(stderr, "replay-log: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
  exit(1);
}

static void read_all(int fd, void *buf, size_t len, uint64_t off) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) { if (n == 0) errno = 0; die("cannot read the log (cut short?)"); }
    got += (size_t)n;
  }
}
static void write_all(int fd, const void *buf, size_t len, uint64_t off) {
  size_t put = 0;
  while (put < len) {
    ssize_t n = pwrite(fd, (const char *)buf + put, len - put, (off_t)(off + put));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("cannot write the scratch device");
    put += (size_t)n;
  }
}

struct entry {
  uint64_t sector, nr, flags, data_len;
  char mark[512];
};

// Reads the entry at byte offset *pos; advances *pos past it.
static void next_entry(int fd, uint32_t ss, uint64_t *pos, struct entry *e, unsigned char *block) {
  read_all(fd, block, ss, *pos);
  e->sector = le64(block);
  e->nr = le64(block + 8);
  e->flags = le64(block + 16);
  e->data_len = le64(block + 24);
  e->mark[0] = 0;
  if (e->flags & F_MARK) {
    size_t n = e->data_len < ss - 32 ? (size_t)e->data_len : ss - 32;
    if (n > sizeof e->mark - 1) n = sizeof e->mark - 1;
    memcpy(e->mark, block + 32, n);
    e->mark[n] = 0;
  }
  *pos += ss;
  if (!(e->flags & (F_DISCARD | F_MARK))) *pos += e->nr * ss;
}

static void flag_names(uint64_t f, char *out) {
  static const char *names[] = {"FLUSH", "FUA", "DISCARD", "MARK", "METADATA"};
  out[0] = 0;
  for (int i = 0; i < 5; i++)
    if (f & (1u << i)) { if (out[0]) strcat(out, ","); strcat(out, names[i]); }
  if (f >> 5) sprintf(out + strlen(out), "%s0x%" PRIx64, out[0] ? "," : "", f & ~(uint64_t)0x1f);
  if (!out[0]) strcpy(out, "-");
}

static void usage(void) {
  fprintf(stderr, "usage: replay-log --log LOG (--list | --find-mark NAME | --replay DEV --to N [--from K])\n");
  exit(64);
}

int main(int argc, char **argv) {
  const char *log = NULL, *dev = NULL, *mark = NULL;
  int list = 0;
  long long to = -1, from = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--log") && more) log = argv[++i];
    else if (!strcmp(a, "--list")) list = 1;
    else if (!strcmp(a, "--find-mark") && more) mark = argv[++i];
    else if (!strcmp(a, "--replay") && more) dev = argv[++i];
    else if (!strcmp(a, "--to") && more) to = atoll(argv[++i]);
    else if (!strcmp(a, "--from") && more) from = atoll(argv[++i]);
    else usage();
  }
  if (!log || list + !!mark + !!dev != 1 || (dev && (to < 0 || from < 0 || from > to))) usage();

  int fd = open(log, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(log);
  unsigned char super[512];
  read_all(fd, super, sizeof super, 0);
  if (le64(super) != LOG_MAGIC) { errno = 0; die("no log-writes super block (bad magic)"); }
  if (le64(super + 8) != 1) { errno = 0; die("unknown log-writes version"); }
  uint64_t count = le64(super + 16);
  uint32_t ss = le32(super + 24);
  if (ss < 512 || ss > 65536 || (ss & (ss - 1))) { errno = 0; die("implausible sector size in the super block"); }
  unsigned char *block = malloc(ss);
  if (!block) die("out of memory");
  struct entry e;
  uint64_t pos = ss;

  if (list || mark) {
    if (list) printf("# entries %" PRIu64 " sectorsize %u\n", count, ss);
    for (uint64_t i = 0; i < count; i++) {
      next_entry(fd, ss, &pos, &e, block);
      if (mark) {
        if ((e.flags & F_MARK) && !strcmp(e.mark, mark)) { printf("%" PRIu64 "\n", i); return 0; }
        continue;
      }
      char f[96];
      flag_names(e.flags, f);
      printf("%" PRIu64 " %s %" PRIu64 " %" PRIu64 "%s%s\n", i, f, e.sector, e.nr, e.mark[0] ? " " : "", e.mark);
    }
    if (mark) { fprintf(stderr, "replay-log: no mark %s\n", mark); return 1; }
    return 0;
  }

  if ((uint64_t)to > count) { fprintf(stderr, "replay-log: --to %lld is past the %" PRIu64 " entries\n", to, count); return 1; }
  int out = open(dev, O_WRONLY | O_CLOEXEC);
  if (out < 0) die(dev);
  size_t cap = 1 << 20;
  unsigned char *data = malloc(cap), *zeros = calloc(1, cap);
  if (!data || !zeros) die("out of memory");
  for (long long i = 0; i < to; i++) {
    uint64_t at = pos;
    next_entry(fd, ss, &pos, &e, block);
    if (i < from) continue;
    if (e.flags & F_MARK) continue;
    uint64_t bytes = e.nr * ss, off = e.sector * ss;
    for (uint64_t done = 0; done < bytes; done += cap) {
      size_t n = bytes - done < cap ? (size_t)(bytes - done) : cap;
      if (e.flags & F_DISCARD) write_all(out, zeros, n, off + done);
      else {
        read_all(fd, data, n, at + ss + done);
        write_all(out, data, n, off + done);
      }
    }
  }
  if (fsync(out) < 0 && errno != EINVAL) die("fsync of the scratch device");
  close(out);
  return 0;
}
