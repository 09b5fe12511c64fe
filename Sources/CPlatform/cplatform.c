// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include <sys/vfs.h>
#include "cplatform.h"

#include <sys/timex.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int kiosk_peer_credentials(int fd, unsigned *uid, int *pid) {
    struct ucred c;
    socklen_t size = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &size) != 0) return -1;
    *uid = c.uid;
    *pid = c.pid;
    return 0;
}

void kiosk_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

int kiosk_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int kiosk_set_timer_slack(unsigned long ns) { return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }

int kiosk_open_pty(char *name, unsigned long size) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, name, size) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int kiosk_clock_unsynchronized(void) {
    struct timex t = {0};
    if (adjtimex(&t) < 0) return -1;
    /* systemd-timedated's rule (what timedatectl shows): synchronised while the kernel's maximum
       error is under 16 s. The kernel sets STA_UNSYNC itself once it passes 16 s; chrony keeps
       STA_UNSYNC set on a clock it disciplines unless told to sync the RTC, so the flag alone
       would call a good clock bad. */
    return t.maxerror >= 16000000 ? 1 : 0;
}

long long kiosk_statfs_type(const char *path) {
    struct statfs s;
    if (statfs(path, &s) != 0) return -1;
    return (long long)s.f_type;
}
