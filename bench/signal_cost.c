/* bench/signal_cost.c — what one timer signal costs a computing thread on
 * this machine, with an empty handler: no MPI, no waitprof.
 *
 * usage: signal_cost [repeats [kib]]        (defaults 9, 4096)
 *
 * Why: waitprof's handler times itself (handler_ns_total in rank.R.meta), but
 * a sample costs the program more than that: the timer interrupt, the
 * kernel's signal delivery and sigreturn, on a VM the hypervisor's part in
 * the timer, and the caches the detour disturbs.  None of that is visible
 * from inside the handler.  This program measures it directly: a fixed
 * amount of work (sweeps over an array of 'kib' KiB; the default 4 MiB is
 * about the working set of bench/workload.c) runs with a per-thread SIGPROF
 * timer, set up as waitprof sets its own (timer_create on CLOCK_MONOTONIC,
 * SIGEV_THREAD_ID), and a handler that only counts.  The thread is pinned
 * to the CPU it starts on, so that the interrupts counted are its own.
 *
 * Timers, each run in turn within every repeat, in a rotated order:
 *   hz=0       no timer (the baseline)
 *   hz=100, 1000, 10000 timer=free: started at a relative time, as
 *              WAITPROF_TIMER=free does
 *   hz=TICK timer=free: one expiration per kernel tick (TICK = 1 s / the
 *              tick length, the resolution of CLOCK_MONOTONIC_COARSE), at a
 *              phase that has nothing to do with the tick
 *   hz=TICK timer=tick: the same rate with every expiration on a tick (the
 *              first at a multiple of the tick length), as waitprof's
 *              default WAITPROF_TIMER=tick does
 *   hz=TICK timer=halftick: the same, half a tick off: the control that the
 *              absolute start alone changes nothing
 * One line per timer:
 *   signal_cost hz=<H> timer=<T> seconds=<median> signals=<median>
 *       interrupts=<median> us_per_signal=<median>
 * interrupts are the CPU's local timer interrupts during the work (the LOC
 * line of /proc/interrupts; -1 where it cannot be read): with the timer on
 * the tick there should be about none more than without a timer.
 * us_per_signal is, per repeat, (time with the timer - time without) /
 * signals taken, then the median over repeats; it is noisiest at 100 Hz,
 * which takes few signals.
 * Build: cc -std=c11 -O2 signal_cost.c (add -lrt on old glibc).
 */
#define _GNU_SOURCE /* SIGEV_THREAD_ID, sched_setaffinity, CLOCK_MONOTONIC_COARSE */

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { SC_FREE, SC_TICK, SC_HALFTICK };
static const char *const sc_kinds[] = {"free", "tick", "halftick"};

struct sc_timer {
    long hz;  /* 0: no timer */
    int kind; /* SC_FREE, SC_TICK, SC_HALFTICK */
};

#define SC_TIMERS 7

static volatile sig_atomic_t sc_signals;

static void sc_on_sigprof(int sig)
{
    (void)sig;
    sc_signals++;
}

static int64_t sc_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* This CPU's local timer interrupts so far, or -1. */
static long sc_interrupts(int cpu)
{
    FILE *f = fopen("/proc/interrupts", "r");
    if (f == NULL)
        return -1;
    char line[8192];
    long v = -1;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ')
            p++;
        if (strncmp(p, "LOC:", 4) != 0)
            continue;
        p += 4;
        for (int k = 0; k <= cpu; k++) {
            char *end;
            v = strtol(p, &end, 10);
            if (end == p) {
                v = -1;
                break;
            }
            p = end;
        }
    }
    fclose(f);
    return v;
}

/* The fixed work: 'sweeps' passes of a three-point average over a[0..n). */
static double sc_work(double *a, size_t n, long sweeps)
{
    for (long s = 0; s < sweeps; s++)
        for (size_t i = 1; i + 1 < n; i++)
            a[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
    return a[n / 2];
}

/* Seconds for the work with timer t; *signals gets the number of handler
 * runs, *ints the CPU's timer interrupts meanwhile. */
static double sc_run(double *a, size_t n, long sweeps, struct sc_timer t, int64_t tick, int cpu,
                     long *signals, long *ints)
{
    timer_t tm;
    long i0 = sc_interrupts(cpu);
    if (t.hz > 0) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGPROF;
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        if (timer_create(CLOCK_MONOTONIC, &ev, &tm) != 0) {
            perror("signal_cost: timer_create");
            exit(1);
        }
        /* The rates here are all above 1 Hz, so the period fits in tv_nsec. */
        long period = 1000000000L / t.hz;
        struct itimerspec its = {{0, period}, {0, period}};
        int flags = 0;
        if (t.kind != SC_FREE) {
            int64_t at = (sc_ns() / tick + 2) * tick + (t.kind == SC_HALFTICK ? tick / 2 : 0);
            its.it_value.tv_sec = (time_t)(at / 1000000000);
            its.it_value.tv_nsec = (long)(at % 1000000000);
            flags = TIMER_ABSTIME;
        }
        timer_settime(tm, flags, &its, NULL);
    }
    sc_signals = 0;
    int64_t t0 = sc_ns();
    volatile double sink = sc_work(a, n, sweeps);
    double secs = (double)(sc_ns() - t0) * 1e-9;
    (void)sink;
    if (t.hz > 0)
        timer_delete(tm);
    long i1 = sc_interrupts(cpu);
    *signals = sc_signals;
    *ints = i0 >= 0 && i1 >= 0 ? i1 - i0 : -1;
    return secs;
}

static int sc_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double sc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, sc_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 9;
    long kib = argc > 2 ? atol(argv[2]) : 4096;
    if (repeats < 1 || kib < 1) {
        fprintf(stderr, "usage: signal_cost [repeats [kib]]\n");
        return 2;
    }
    struct timespec res;
    int64_t tick = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0
                       ? (int64_t)res.tv_sec * 1000000000 + res.tv_nsec
                       : 0;
    if (tick < 100000 || tick > 100000000) {
        fprintf(stderr, "signal_cost: no usable tick length (%lld ns)\n", (long long)tick);
        return 1;
    }
    long tick_hz = (long)(1000000000 / tick);
    const struct sc_timer timers[SC_TIMERS] = {
        {0, SC_FREE},       {100, SC_FREE},     {1000, SC_FREE}, {10000, SC_FREE},
        {tick_hz, SC_FREE}, {tick_hz, SC_TICK}, {tick_hz, SC_HALFTICK},
    };
    int cpu = sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu < 0 ? 0 : cpu, &one);
    if (cpu < 0 || sched_setaffinity(0, sizeof one, &one) != 0)
        cpu = -1; /* not pinned: the interrupt counts would be another CPU's */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sc_on_sigprof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);

    size_t n = (size_t)kib * 1024 / sizeof(double);
    double *a = malloc(n * sizeof *a);
    double *t = malloc(4 * SC_TIMERS * (size_t)repeats * sizeof *t);
    if (a == NULL || t == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 7);
    /* Size the work to about half a second without signals. */
    long sweeps = 1, sig, ints;
    while (sc_run(a, n, sweeps, timers[0], tick, cpu, &sig, &ints) < 0.05)
        sweeps *= 2;
    sweeps *= 10;

    size_t span = SC_TIMERS * (size_t)repeats;
    double *secs = t, *sigs = t + span, *cost = t + 2 * span, *irq = t + 3 * span;
    for (int r = 0; r < repeats; r++) {
        double mine[SC_TIMERS];
        long got[SC_TIMERS], in[SC_TIMERS];
        for (int k = 0; k < SC_TIMERS; k++) {
            int i = (k + r) % SC_TIMERS;
            mine[i] = sc_run(a, n, sweeps, timers[i], tick, cpu, &got[i], &in[i]);
        }
        for (int i = 0; i < SC_TIMERS; i++) {
            secs[i * repeats + r] = mine[i];
            sigs[i * repeats + r] = (double)got[i];
            irq[i * repeats + r] = cpu >= 0 ? (double)in[i] : -1.0;
            cost[i * repeats + r] = got[i] > 0 ? (mine[i] - mine[0]) / (double)got[i] * 1e6 : 0.0;
        }
    }
    for (int i = 0; i < SC_TIMERS; i++)
        printf("signal_cost hz=%ld timer=%s seconds=%.4f signals=%.0f interrupts=%.0f us_per_signal=%.2f\n",
               timers[i].hz, sc_kinds[timers[i].kind], sc_median(secs + i * repeats, repeats),
               sc_median(sigs + i * repeats, repeats), sc_median(irq + i * repeats, repeats),
               sc_median(cost + i * repeats, repeats));
    free(a);
    free(t);
    return 0;
}
