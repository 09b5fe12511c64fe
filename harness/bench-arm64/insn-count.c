// SPDX-License-Identifier: Apache-2.0
/* insn-count: a QEMU TCG plugin (qemu-user 7.2, Debian bookworm's qemu-user) counting the guest
 * instructions executed, per thread: in qemu-user each guest thread is a vCPU of its own, and each
 * vCPU adds only to its own slot, so no count is lost to a race (the insn plugin of QEMU's
 * harness/plugin adds to one shared counter from every thread). Built against qemu-plugin.h from
 * Debian's qemu source package (harness/bench-arm64/run.sh).
 *
 *   qemu-aarch64 -plugin ./libinsn-count.so,out=FILE[,sym=FILE2] ...
 *
 * At exit FILE gets "total N" and one "thread VCPU N" a thread that ran. With sym=FILE2, the
 * instructions by the symbol (of the main program; "?" for a shared library) each translated
 * block starts in, one "N SYMBOL" a line, most first: where the instructions go. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 4096
static uint64_t counts[MAX_VCPUS];
static char out_path[4096] = "insn-count.txt";

/* By symbol: an entry a translated block, counted with atomic adds (the block may run on any thread). */
struct block { const char *symbol; uint64_t insns; uint64_t runs; struct block *next; };
static struct block *blocks;   /* prepended at translation, which QEMU serialises */
static char sym_path[4096];

static void block_exec(unsigned int vcpu, void *udata) {
    struct block *b = udata;
    __atomic_fetch_add(&b->runs, 1, __ATOMIC_RELAXED);
    counts[vcpu < MAX_VCPUS ? vcpu : MAX_VCPUS - 1] += b->insns;
}

static int by_count(const void *a, const void *b) {
    uint64_t x = ((const struct block *)a)->runs, y = ((const struct block *)b)->runs;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void write_symbols(void) {
    /* Sum the blocks by symbol name (the names are QEMU's, stable for the run). */
    size_t n = 0, cap = 1024;
    struct block *sums = calloc(cap, sizeof *sums);
    for (struct block *b = blocks; b; b = b->next) {
        const char *name = b->symbol ? b->symbol : "?";
        size_t i;
        for (i = 0; i < n && strcmp(sums[i].symbol, name); i++) {}
        if (i == n) {
            if (n == cap) sums = realloc(sums, (cap *= 2) * sizeof *sums);
            sums[n].symbol = name; sums[n].runs = 0; n++;
        }
        sums[i].runs += b->runs * b->insns;
    }
    qsort(sums, n, sizeof *sums, by_count);
    FILE *f = fopen(sym_path, "w");
    if (f) {
        for (size_t i = 0; i < n; i++) if (sums[i].runs) fprintf(f, "%" PRIu64 " %s\n", sums[i].runs, sums[i].symbol);
        fclose(f);
    }
    free(sums);
}

static void tb_exec(unsigned int vcpu, void *udata) {
    counts[vcpu < MAX_VCPUS ? vcpu : MAX_VCPUS - 1] += (uintptr_t)udata;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    if (sym_path[0]) {
        struct block *b = calloc(1, sizeof *b);
        b->symbol = qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0));
        b->insns = qemu_plugin_tb_n_insns(tb);
        b->next = blocks;
        blocks = b;
        qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
        return;
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(uintptr_t)qemu_plugin_tb_n_insns(tb));
}

static void at_exit(qemu_plugin_id_t id, void *p) {
    FILE *f = fopen(out_path, "w");
    if (!f) return;
    uint64_t total = 0;
    for (int i = 0; i < MAX_VCPUS; i++) total += counts[i];
    fprintf(f, "total %" PRIu64 "\n", total);
    for (int i = 0; i < MAX_VCPUS; i++)
        if (counts[i]) fprintf(f, "thread %d %" PRIu64 "\n", i, counts[i]);
    fclose(f);
    if (sym_path[0]) write_symbols();
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "out=", 4)) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
        else if (!strncmp(argv[i], "sym=", 4)) snprintf(sym_path, sizeof sym_path, "%s", argv[i] + 4);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
