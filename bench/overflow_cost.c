/* bench/overflow_cost.c — what one overflow signal costs a computing
 * thread on this machine, with an empty handler: no MPI, no waitprof.
 *
 * usage: overflow_cost [repeats [period_ns [iterations]]]
 *                      (defaults 21, 1000000, 1500000000)
 *
 * Why: WAITPROF_TIMER=overflow:task-clock@PERIOD samples a thread every
 * PERIOD ns of its CPU time from a perf_event that signals the thread at
 * each overflow (sampler/overflow.c).  The kernel drives a task-clock
 * event's sampling with a high-resolution timer of its own, so, unlike
 * waitprof's default timers on the kernel's tick (bench/signal_cost.c),
 * each sample may cost an interrupt.  This program measures it: a fixed
 * amount of work (strided writes over 16 KiB) runs, in turn within each
 * repeat,
 *   none      with no trigger (the baseline),
 *   overflow  with a task-clock event of period_ns, set up as waitprof
 *             sets up its own (pid 0, cpu -1, O_ASYNC, F_SETSIG SIGPROF,
 *             F_SETOWN_EX to the thread, no ring buffer),
 *   cputimer  with a POSIX timer on CLOCK_THREAD_CPUTIME_ID of the same
 *             period (what WAITPROF_CLOCK=cpu uses),
 * and a handler that only counts.  The work is timed in the thread's CPU
 * time, which the interrupts it takes are charged to, so that other
 * programs on the machine change the figures less than they would a wall
 * time.  The thread is pinned to the CPU it starts on.
 * One line per trigger:
 *   overflow_cost trigger=<T> period_ns=<P> cpu_s=<median> signals=<median>
 *       us_per_signal=<median>
 * us_per_signal is, per repeat, (CPU time with the trigger - without) /
 * signals taken, then the median over repeats.
 * Build: cc -std=c11 -O2 bench/overflow_cost.c (add -lrt on old glibc).
 */
#define _GNU_SOURCE /* F_SETOWN_EX, F_SETSIG, SIGEV_THREAD_ID, sched_setaffinity */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MAXREP 101

static volatile long nsig;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    nsig++;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned char arr[16384];

static double work(long n)
{
    double t0 = cpu_s();
    for (long i = 0; i < n; i++)
        arr[(i * 64) & 16383]++;
    __asm__ volatile("" ::: "memory");
    return cpu_s() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

/* The overflow trigger, as sampler/overflow.c opens it; -1 on failure. */
static int open_overflow(long period)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = (uint64_t)period;
    a.wakeup_events = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct f_owner_ex own = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    long period = argc > 2 ? atol(argv[2]) : 1000000;
    long iters = argc > 3 ? atol(argv[3]) : 1500000000;
    if (reps < 1 || reps > MAXREP || period < 10000 || period >= 1000000000 || iters < 1) {
        fprintf(stderr, "usage: overflow_cost [repeats (1-%d) [period_ns (10000-999999999) [iterations]]]\n",
                MAXREP);
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    sched_setaffinity(0, sizeof set, &set);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    static double t[3][MAXREP], sg[3][MAXREP], us[3][MAXREP];
    work(iters / 10); /* warm up */
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 3; k++) {
            int m = (k + r) % 3; /* rotated, so no trigger always runs first */
            int fd = -1;
            timer_t tm;
            nsig = 0;
            if (m == 1 && (fd = open_overflow(period)) < 0) {
                perror("overflow_cost: perf_event_open");
                return 1;
            }
            if (m == 2) {
                struct sigevent sev;
                memset(&sev, 0, sizeof sev);
                sev.sigev_notify = SIGEV_THREAD_ID;
                sev.sigev_signo = SIGPROF;
                sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
                struct itimerspec its = {{0, period}, {0, period}};
                if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tm) != 0 || timer_settime(tm, 0, &its, NULL) != 0) {
                    perror("overflow_cost: timer");
                    return 1;
                }
            }
            t[m][r] = work(iters);
            sg[m][r] = (double)nsig;
            if (fd >= 0)
                close(fd);
            if (m == 2)
                timer_delete(tm);
        }
    for (int r = 0; r < reps; r++)
        for (int m = 1; m < 3; m++)
            us[m][r] = (t[m][r] - t[0][r]) / (sg[m][r] > 0 ? sg[m][r] : 1) * 1e6;
    static const char *const name[3] = {"none", "overflow", "cputimer"};
    for (int m = 0; m < 3; m++)
        printf("overflow_cost trigger=%s period_ns=%ld cpu_s=%.4f signals=%.0f us_per_signal=%.2f\n", name[m],
               m ? period : 0, median(t[m], reps), median(sg[m], reps), m ? median(us[m], reps) : 0.0);
    return 0;
}
