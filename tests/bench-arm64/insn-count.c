// SPDX-License-Identifier: Apache-2.0
/* insn-count: a QEMU TCG plugin (qemu-user 7.2, Debian bookworm's qemu-user) counting the guest
 * instructions executed, per thread: in qemu-user each guest thread is a vCPU of its own, and each
 * vCPU adds only to its own slot, so no count is lost to a race (the insn plugin of QEMU's
 * tests/plugin adds to one shared counter from every thread). Built against qemu-plugin.h from
 * Debian's qemu source package (tests/bench-arm64/run.sh).
 *
 *   qemu-aarch64 -plugin ./libinsn-count.so,out=FILE ...
 *
 * At exit FILE gets "total N" and one "thread VCPU N" a thread that ran. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 4096
static uint64_t counts[MAX_VCPUS];
static char out_path[4096] = "insn-count.txt";

static void tb_exec(unsigned int vcpu, void *udata) {
    counts[vcpu < MAX_VCPUS ? vcpu : MAX_VCPUS - 1] += (uintptr_t)udata;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
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
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "out=", 4)) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
