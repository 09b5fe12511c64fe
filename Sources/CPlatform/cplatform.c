// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include "cplatform.h"

#include <sys/timex.h>

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

void kiosk_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

int kiosk_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int kiosk_set_timer_slack(unsigned long ns) { return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }

int kiosk_clock_unsynchronized(void) {
    struct timex t = {0};
    int state = adjtimex(&t);
    if (state < 0) return -1;
    return state == TIME_ERROR || (t.status & STA_UNSYNC) ? 1 : 0;
}
