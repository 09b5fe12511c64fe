// SPDX-License-Identifier: Apache-2.0
/* The GNU extensions glibc hides without _GNU_SOURCE, which Swift's Glibc module does not define. */
#ifndef KIOSK_CPLATFORM_H
#define KIOSK_CPLATFORM_H

/* Names the calling thread (at most 15 characters are kept), as top and /proc/PID/task show it. */
void kiosk_set_thread_name(const char *name);
/* pipe2(fds, O_CLOEXEC): 0, or -1 and errno. */
int kiosk_pipe_cloexec(int fds[2]);

/* prctl(PR_SET_TIMERSLACK, ns) for the calling thread: how much later than asked the kernel may
   end its timed sleeps (50 us by default); 0, or -1 and errno. */
int kiosk_set_timer_slack(unsigned long ns);

/* issue 22: a pseudo-terminal pair for the OSDP bench (posix_openpt, grantpt, unlockpt,
   ptsname_r are X/Open): the master's descriptor, the slave's path in `name`; -1 and errno. */
int kiosk_open_pty(char *name, unsigned long size);
/* Whether the kernel says the system clock is unsynchronised (adjtimex(2), modes 0, changes
   nothing): 1 when its maximum error has reached 16 s (where the kernel sets STA_UNSYNC), 0 when
   synchronised, -1 and errno when the call failed (systemd's ProtectClock= refuses even this
   read). What timedatectl shows as "System clock synchronized". */
int kiosk_clock_unsynchronized(void);

/* issue 33: who is at the other end of a Unix socket (SO_PEERCRED; struct ucred needs
   _GNU_SOURCE, which Swift's Glibc does not define): 0, or -1 and errno. */
int kiosk_peer_credentials(int fd, unsigned *uid, int *pid);

/* issue 45: statfs(2)'s f_type of a path (the file system's magic number: TMPFS_MAGIC,
   OVERLAYFS_SUPER_MAGIC...; <sys/vfs.h> is not in Swift's Glibc module), or -1 and errno. */
long long kiosk_statfs_type(const char *path);

#endif
