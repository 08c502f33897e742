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
 * timer at 0, 100, 1000 and 10000 Hz, set up as waitprof sets its own
 * (timer_create on CLOCK_MONOTONIC, SIGEV_THREAD_ID), and a handler that only
 * counts.  The rates alternate within each repeat, in a rotated order.  One
 * line per rate:
 *   signal_cost hz=<H> seconds=<median> signals=<median> us_per_signal=<median>
 * us_per_signal is, per repeat, (time at H - time at 0 Hz) / signals taken,
 * then the median over repeats; at 100 Hz it rests on few signals and is
 * the noisiest.
 * Build: cc -std=c11 -O2 signal_cost.c (add -lrt on old glibc).
 */
#define _GNU_SOURCE /* SIGEV_THREAD_ID and the sigevent field for the thread id */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SC_RATES 4

static volatile sig_atomic_t sc_signals;

static void sc_on_sigprof(int sig)
{
    (void)sig;
    sc_signals++;
}

static double sc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The fixed work: 'sweeps' passes of a three-point average over a[0..n). */
static double sc_work(double *a, size_t n, long sweeps)
{
    for (long s = 0; s < sweeps; s++)
        for (size_t i = 1; i + 1 < n; i++)
            a[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
    return a[n / 2];
}

/* Seconds for the work with a timer at hz (0: no timer); *signals gets the
 * number of handler runs. */
static double sc_run(double *a, size_t n, long sweeps, int hz, long *signals)
{
    timer_t tm;
    if (hz > 0) {
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
        long period = 1000000000L / hz;
        struct itimerspec its = {{0, period}, {0, period}};
        timer_settime(tm, 0, &its, NULL);
    }
    sc_signals = 0;
    double t0 = sc_now();
    volatile double sink = sc_work(a, n, sweeps);
    double t = sc_now() - t0;
    (void)sink;
    if (hz > 0)
        timer_delete(tm);
    *signals = sc_signals;
    return t;
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
    static const int rates[SC_RATES] = {0, 100, 1000, 10000};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sc_on_sigprof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);

    size_t n = (size_t)kib * 1024 / sizeof(double);
    double *a = malloc(n * sizeof *a);
    double *t = malloc(3 * SC_RATES * (size_t)repeats * sizeof *t);
    if (a == NULL || t == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = (double)(i % 7);
    /* Size the work to about half a second without signals. */
    long sweeps = 1, sig;
    while (sc_run(a, n, sweeps, 0, &sig) < 0.05)
        sweeps *= 2;
    sweeps *= 10;

    double *secs = t, *sigs = t + SC_RATES * repeats, *cost = t + 2 * SC_RATES * repeats;
    for (int r = 0; r < repeats; r++) {
        double mine[SC_RATES];
        long got[SC_RATES];
        for (int k = 0; k < SC_RATES; k++) {
            int i = (k + r) % SC_RATES;
            mine[i] = sc_run(a, n, sweeps, rates[i], &got[i]);
        }
        for (int i = 0; i < SC_RATES; i++) {
            secs[i * repeats + r] = mine[i];
            sigs[i * repeats + r] = (double)got[i];
            cost[i * repeats + r] = got[i] > 0 ? (mine[i] - mine[0]) / (double)got[i] * 1e6 : 0.0;
        }
    }
    for (int i = 0; i < SC_RATES; i++)
        printf("signal_cost hz=%d seconds=%.4f signals=%.0f us_per_signal=%.2f\n", rates[i],
               sc_median(secs + i * repeats, repeats), sc_median(sigs + i * repeats, repeats),
               sc_median(cost + i * repeats, repeats));
    free(a);
    free(t);
    return 0;
}
