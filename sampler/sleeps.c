/* sampler/sleeps.c — the calls a sampling signal would cut short.
 *
 * signal(7): some calls are never restarted after a signal handler, even
 * with SA_RESTART: the sleeps (nanosleep, clock_nanosleep, usleep, sleep),
 * the waits for a signal (pause, sigsuspend, sigtimedwait, sigwaitinfo),
 * the descriptor multiplexers (poll, ppoll, select, pselect, epoll_wait,
 * epoll_pwait, epoll_pwait2), System V IPC (msgrcv, msgsnd, semop,
 * semtimedop), io_getevents, and socket calls with a receive or send
 * timeout.  Every wall-clock sample would end them early with EINTR, and a
 * program that does not retry would behave differently when profiled.
 *
 * How: on a sampled thread outside MPI, these calls run with SIGPROF
 * blocked (for the calls that take a signal mask, SIGPROF is added to the
 * mask they install).  A sampling timer that expires meanwhile stays
 * pending, counting its overruns, and is delivered when the call returns:
 * the sample then stands for all the periods the call slept (its weight is
 * si_overrun + 1), in the same call path, as Not-in-MPI, so the sleep's
 * time is kept.  Any other signal interrupts the call exactly as without
 * waitprof, at the moment it arrives, and the kernel's own accounting of
 * the time left (nanosleep's rem, select's timeval) is untouched.  This
 * was chosen over retrying an EINTR with the time left: a retry cannot
 * tell a sampling signal from a program's signal that arrived in the same
 * instant, and the program would then lose its EINTR.
 *
 * Socket calls are different: blocking SIGPROF around every recv and send
 * would cost two system calls on a path that MPI libraries and servers use
 * millions of times.  A socket call is restarted by the kernel unless its
 * socket has a timeout, so only when one returns EINTR and the thread's
 * handler ran during the call (wp_self.sigprof counts its deliveries) is
 * the call made again with SIGPROF blocked.  Its timeout then restarts:
 * the call lasts at most one sampling period longer than without waitprof.
 * Calls with a zero timeout, which an event loop makes often, are treated
 * the same way: they do not sleep, but a sample pending when they are made
 * ends them with EINTR too, and made again they are exactly what they
 * were.
 *
 * Cost: without a signal, two rt_sigprocmask system calls per wrapped
 * sleep or wait (doc/performance.md), except poll and epoll_wait on
 * descriptors that are ready at once (see poll below); a socket call pays
 * one TLS load.
 * Threads that are not sampled, and calls made inside MPI (the MPI
 * library retries its own), pass straight through.  Not covered: the same
 * system calls made with syscall(2), from a static binary, through
 * io_uring, or by libraries that call them through internal aliases
 * rather than the exported names.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "state/thread.h"

#define WP_EXPORT __attribute__((visibility("default")))

/* The real definitions, found once before any thread can need them. */
#define WP_REAL(name, ret, args) static ret(*real_##name) args;
#define WP_SLEEP_CALLS(X)                                                                                         \
    X(nanosleep, int, (const struct timespec *, struct timespec *))                                               \
    X(clock_nanosleep, int, (clockid_t, int, const struct timespec *, struct timespec *))                         \
    X(usleep, int, (useconds_t))                                                                                  \
    X(sleep, unsigned, (unsigned))                                                                                \
    X(pause, int, (void))                                                                                         \
    X(sigsuspend, int, (const sigset_t *))                                                                        \
    X(sigtimedwait, int, (const sigset_t *, siginfo_t *, const struct timespec *))                                \
    X(sigwaitinfo, int, (const sigset_t *, siginfo_t *))                                                          \
    X(poll, int, (struct pollfd *, nfds_t, int))                                                                  \
    X(ppoll, int, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))                           \
    X(select, int, (int, fd_set *, fd_set *, fd_set *, struct timeval *))                                         \
    X(pselect, int, (int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *))              \
    X(epoll_wait, int, (int, struct epoll_event *, int, int))                                                     \
    X(epoll_pwait, int, (int, struct epoll_event *, int, int, const sigset_t *))                                  \
    X(epoll_pwait2, int, (int, struct epoll_event *, int, const struct timespec *, const sigset_t *))             \
    X(msgrcv, ssize_t, (int, void *, size_t, long, int))                                                          \
    X(msgsnd, int, (int, const void *, size_t, int))                                                              \
    X(semop, int, (int, struct sembuf *, size_t))                                                                 \
    X(semtimedop, int, (int, struct sembuf *, size_t, const struct timespec *))                                   \
    X(io_getevents, int, (unsigned long, long, long, void *, struct timespec *))                                  \
    X(recv, ssize_t, (int, void *, size_t, int))                                                                  \
    X(recvfrom, ssize_t, (int, void *, size_t, int, struct sockaddr *, socklen_t *))                              \
    X(recvmsg, ssize_t, (int, struct msghdr *, int))                                                              \
    X(send, ssize_t, (int, const void *, size_t, int))                                                            \
    X(sendto, ssize_t, (int, const void *, size_t, int, const struct sockaddr *, socklen_t))                      \
    X(sendmsg, ssize_t, (int, const struct msghdr *, int))                                                        \
    X(accept, int, (int, struct sockaddr *, socklen_t *))                                                         \
    X(accept4, int, (int, struct sockaddr *, socklen_t *, int))
WP_SLEEP_CALLS(WP_REAL)
#undef WP_REAL

__attribute__((constructor)) static void wp_sleeps_resolve(void)
{
#define WP_RESOLVE(name, ret, args) real_##name = (ret(*) args)dlsym(RTLD_NEXT, #name);
    WP_SLEEP_CALLS(WP_RESOLVE)
#undef WP_RESOLVE
}

/* Does this call need SIGPROF kept out?  Only on a thread that takes
 * samples, and not inside MPI: the MPI library retries its own waits, and
 * its progress paths should not pay two system calls per poll. */
static inline int wp_quiet_needed(void)
{
    return wp_self.slot != NULL && wp_self.depth == 0;
}

/* Block SIGPROF; the caller restores *old with wp_quiet_end.  The thread's
 * mask can change meanwhile only inside a handler, whose changes the
 * kernel undoes when it returns, so restoring the saved mask is exact. */
static inline void wp_quiet_begin(sigset_t *old)
{
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, old);
}

/* Restore the mask and the call's errno (a pending sample is delivered
 * here, and the handler keeps errno too, but pthread_sigmask is not
 * promised to leave it alone). */
static inline void wp_quiet_end(const sigset_t *old)
{
    int e = errno;
    pthread_sigmask(SIG_SETMASK, old, NULL);
    errno = e;
}

/* A mask the call installs, with SIGPROF added when needed; NULL stays
 * NULL (the call then runs under the thread's mask, blocked by the caller). */
static inline const sigset_t *wp_with_prof(const sigset_t *mask, sigset_t *copy)
{
    if (mask == NULL)
        return NULL;
    *copy = *mask;
    sigaddset(copy, SIGPROF);
    return copy;
}

/* The call again with SIGPROF blocked when it returned EINTR and only a
 * sampling signal can have caused it (the thread's handler ran during the
 * call: wp_self.sigprof).  A program's signal that came in the same
 * instant as a sample is the one case this cannot tell apart: the call is
 * then made again too. */
#define WP_AGAIN_IF_SAMPLED(type, call)                                                                             \
    do {                                                                                                            \
        unsigned seen_ = wp_self.sigprof;                                                                           \
        type rc_ = call;                                                                                            \
        if (rc_ != (type)-1 || errno != EINTR || wp_self.sigprof == seen_)                                          \
            return rc_;                                                                                             \
        sigset_t old_;                                                                                              \
        wp_quiet_begin(&old_);                                                                                      \
        rc_ = call;                                                                                                 \
        wp_quiet_end(&old_);                                                                                        \
        return rc_;                                                                                                 \
    } while (0)

/* The body of a plain wrapper: the real call, with SIGPROF blocked when
 * needed.  nowait: the call does not sleep (a zero timeout), so blocking
 * would cost more than the call; but even then a pending sample can end it
 * with EINTR, and it is made again, exactly: it has no time to account. */
#define WP_QUIET_CALL(type, nowait, call)                                                                           \
    do {                                                                                                            \
        if (!wp_quiet_needed())                                                                                     \
            return call;                                                                                            \
        if (nowait)                                                                                                 \
            WP_AGAIN_IF_SAMPLED(type, call);                                                                        \
        sigset_t old_;                                                                                              \
        wp_quiet_begin(&old_);                                                                                      \
        type rc_ = call;                                                                                            \
        wp_quiet_end(&old_);                                                                                        \
        return rc_;                                                                                                 \
    } while (0)

/* The body of a wrapper of a call that installs a signal mask: with a mask,
 * SIGPROF is added to it; without one, SIGPROF is blocked around it. */
#define WP_QUIET_MASKED(type, nowait, mask, callwith)                                                               \
    do {                                                                                                            \
        if (!wp_quiet_needed())                                                                                     \
            return callwith(mask);                                                                                  \
        sigset_t copy_, old_;                                                                                       \
        if ((mask) != NULL)                                                                                         \
            return callwith(wp_with_prof((mask), &copy_));                                                          \
        if (nowait)                                                                                                 \
            WP_AGAIN_IF_SAMPLED(type, callwith(NULL));                                                              \
        wp_quiet_begin(&old_);                                                                                      \
        type rc_ = callwith(NULL);                                                                                  \
        wp_quiet_end(&old_);                                                                                        \
        return rc_;                                                                                                 \
    } while (0)

static inline int wp_ts_zero(const struct timespec *t)
{
    return t != NULL && t->tv_sec == 0 && t->tv_nsec == 0;
}

/* --- sleeps ------------------------------------------------------------------ */

WP_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    WP_QUIET_CALL(int, 0, real_nanosleep(req, rem));
}

WP_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
    WP_QUIET_CALL(int, 0, real_clock_nanosleep(clk, flags, req, rem));
}

WP_EXPORT int usleep(useconds_t us)
{
    WP_QUIET_CALL(int, us == 0, real_usleep(us));
}

WP_EXPORT unsigned sleep(unsigned s)
{
    WP_QUIET_CALL(unsigned, s == 0, real_sleep(s));
}

/* --- waits for a signal --------------------------------------------------------- */

WP_EXPORT int pause(void)
{
    WP_QUIET_CALL(int, 0, real_pause());
}

WP_EXPORT int sigsuspend(const sigset_t *mask)
{
    if (!wp_quiet_needed())
        return real_sigsuspend(mask);
    sigset_t copy = *mask;
    sigaddset(&copy, SIGPROF);
    return real_sigsuspend(&copy);
}

WP_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    WP_QUIET_CALL(int, wp_ts_zero(timeout), real_sigtimedwait(set, info, timeout));
}

WP_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    WP_QUIET_CALL(int, 0, real_sigwaitinfo(set, info));
}

/* --- descriptor multiplexing ---------------------------------------------------- */

/* The multiplexers are often called with a timeout on descriptors that
 * are already ready (an event loop): a probe with no timeout first answers
 * those without the two mask changes (about 460 ns here).  Polling is
 * level-triggered, and an epoll probe that finds nothing consumes nothing,
 * so the probe followed by the timed call is the timed call.  The probe
 * itself can end with EINTR (a pending sample, even with no timeout): then
 * the timed call answers too. */
WP_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (timeout != 0 && wp_quiet_needed()) {
        int e = errno, rc = real_poll(fds, n, 0);
        if (rc > 0 || (rc < 0 && errno != EINTR))
            return rc;
        errno = e; /* nothing ready, or a sample came: the timed call decides */
    }
    WP_QUIET_CALL(int, timeout == 0, real_poll(fds, n, timeout));
}

#define WP_CALL_PPOLL(m) real_ppoll(fds, n, timeout, m)
WP_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    WP_QUIET_MASKED(int, wp_ts_zero(timeout), mask, WP_CALL_PPOLL);
}

WP_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    WP_QUIET_CALL(int, timeout != NULL && timeout->tv_sec == 0 && timeout->tv_usec == 0,
                  real_select(n, r, w, e, timeout));
}

#define WP_CALL_PSELECT(m) real_pselect(n, r, w, e, timeout, m)
WP_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout, const sigset_t *mask)
{
    WP_QUIET_MASKED(int, wp_ts_zero(timeout), mask, WP_CALL_PSELECT);
}

WP_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    if (timeout != 0 && wp_quiet_needed()) {
        int e = errno, rc = real_epoll_wait(epfd, ev, max, 0);
        if (rc > 0 || (rc < 0 && errno != EINTR))
            return rc;
        errno = e; /* nothing ready, or a sample came: the timed call decides */
    }
    WP_QUIET_CALL(int, timeout == 0, real_epoll_wait(epfd, ev, max, timeout));
}

#define WP_CALL_EPOLL_PWAIT(m) real_epoll_pwait(epfd, ev, max, timeout, m)
WP_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
    WP_QUIET_MASKED(int, timeout == 0, mask, WP_CALL_EPOLL_PWAIT);
}

#define WP_CALL_EPOLL_PWAIT2(m) real_epoll_pwait2(epfd, ev, max, timeout, m)
WP_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
                           const sigset_t *mask)
{
    if (real_epoll_pwait2 == NULL) { /* a C library older than the call */
        errno = ENOSYS;
        return -1;
    }
    WP_QUIET_MASKED(int, wp_ts_zero(timeout), mask, WP_CALL_EPOLL_PWAIT2);
}

/* --- System V IPC and asynchronous I/O -------------------------------------------- */

WP_EXPORT ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
    WP_QUIET_CALL(ssize_t, flags & IPC_NOWAIT, real_msgrcv(id, msg, size, type, flags));
}

WP_EXPORT int msgsnd(int id, const void *msg, size_t size, int flags)
{
    WP_QUIET_CALL(int, flags & IPC_NOWAIT, real_msgsnd(id, msg, size, flags));
}

WP_EXPORT int semop(int id, struct sembuf *ops, size_t n)
{
    WP_QUIET_CALL(int, 0, real_semop(id, ops, n));
}

WP_EXPORT int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
    WP_QUIET_CALL(int, wp_ts_zero(timeout), real_semtimedop(id, ops, n, timeout));
}

/* libaio's; the program has it when it calls it.  Without it here, ENOSYS,
 * as the system call would say on a kernel without AIO. */
WP_EXPORT int io_getevents(unsigned long ctx, long min_nr, long nr, void *events, struct timespec *timeout)
{
    if (real_io_getevents == NULL)
        return -ENOSYS;
    WP_QUIET_CALL(int, wp_ts_zero(timeout), real_io_getevents(ctx, min_nr, nr, events, timeout));
}

/* --- sockets with a timeout ----------------------------------------------------------- */

/* Sockets: made again only after an EINTR a sample caused (see above). */
#define WP_SOCKET_CALL(type, call)                                                                                  \
    do {                                                                                                            \
        if (!wp_quiet_needed())                                                                                     \
            return call;                                                                                            \
        WP_AGAIN_IF_SAMPLED(type, call);                                                                            \
    } while (0)

WP_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    WP_SOCKET_CALL(ssize_t, real_recv(fd, buf, n, flags));
}

WP_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len)
{
    WP_SOCKET_CALL(ssize_t, real_recvfrom(fd, buf, n, flags, from, len));
}

WP_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    WP_SOCKET_CALL(ssize_t, real_recvmsg(fd, msg, flags));
}

WP_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    WP_SOCKET_CALL(ssize_t, real_send(fd, buf, n, flags));
}

WP_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len)
{
    WP_SOCKET_CALL(ssize_t, real_sendto(fd, buf, n, flags, to, len));
}

WP_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    WP_SOCKET_CALL(ssize_t, real_sendmsg(fd, msg, flags));
}

WP_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    WP_SOCKET_CALL(int, real_accept(fd, addr, len));
}

WP_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    WP_SOCKET_CALL(int, real_accept4(fd, addr, len, flags));
}
