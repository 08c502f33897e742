/* tests/mpi/timers.c — report the SIGPROF timers of this process, as the
 * kernel sees them, while sampling runs, during MPI_Pcontrol(0) and after
 * MPI_Pcontrol(1).
 *
 * usage: timers HZ
 *        timers HZ toggle
 *        timers HZ grid
 *
 * Two worker threads are started after MPI_Init (so waitprof samples
 * them) and compute until the end.  At each of the three points, every
 * timer listed in /proc/self/timers that sends SIGPROF is read with the
 * timer_gettime system call, and one line is printed per timer:
 *   timer rank=R point=on|paused|resumed id=N armed=0|1 interval_ns=P phase_ns=F
 * armed says whether the timer will expire again; phase_ns is the time of
 * its next expiration in CLOCK_MONOTONIC modulo the kernel's tick (the
 * resolution of CLOCK_MONOTONIC_COARSE), folded to the nearer side (a
 * negative value: just before a tick), as far as the clock reads around
 * timer_gettime pin it down (within a few microseconds).  The paused point is
 * read after three periods of pause and then as soon as no timer runs, or
 * after another second (printed as extra_wait_ms), so every thread's
 * handler had its chance to stop its own timer.
 *
 * toggle: no workers; sampling is paused from the start, then resumed for
 * 5 ms and paused for 2 ms, 600 times: each sampled stretch is shorter than
 * a period at 100 Hz.  Whether a stretch holds a grid point depends on its
 * phase, which drifts with the run's jitter, so the count is about binomial:
 * 600 stretches at one chance in two give 300 samples with a standard
 * deviation near 12 on an idle machine (298-306 in ten runs here).  Under
 * a load of 8 counts 24 % high were seen, so t_timers.sh accepts 70 % to
 * 135 %: what it guards against, a restart that begins a new period, would
 * give none, and samples counted twice twice as many.
 * Prints the time spent resumed, as the program measured it:
 *   toggle rank=R on_s=S
 * (t_timers.sh: the samples must follow it, as they would without the
 * pauses: a restart that began a new period would sample none of it.)
 *
 * grid: the workers are started and the timers printed once, at point
 * "on", after a line
 *   tick rank=R tick_ns=T
 */
#include <signal.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *worker(void *arg)
{
    (void)arg;
    volatile double x = 0;
    while (!stop)
        for (int i = 0; i < 100000; i++)
            x += i * 0.5;
    return NULL;
}

static void spin_s(double s)
{
    double t0 = MPI_Wtime();
    volatile double x = 0;
    while (MPI_Wtime() - t0 < s)
        x += 1.0;
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Print the SIGPROF timers (when print) and return how many will expire
 * again. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t tick_ns(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0)
        return 0;
    return (int64_t)res.tv_sec * 1000000000 + res.tv_nsec;
}

static int report(int rank, const char *point, int print)
{
    int running = 0;
    int64_t tick = tick_ns();
    FILE *f = fopen("/proc/self/timers", "r");
    if (f == NULL) {
        printf("timer rank=%d point=%s error=no-proc-timers\n", rank, point);
        return 0;
    }
    char line[256];
    int id = -1;
    while (fgets(line, sizeof line, f)) {
        int sig;
        if (sscanf(line, "ID: %d", &id) == 1)
            continue;
        if (sscanf(line, "signal: %d/", &sig) != 1 || sig != SIGPROF || id < 0)
            continue;
        /* The kernel's own id, so the raw system call: glibc's timer_t is
         * not guaranteed to be it. */
        struct itimerspec its;
        int64_t t0 = mono_ns();
        int rc = (int)syscall(SYS_timer_gettime, id, &its);
        int64_t t1 = mono_ns();
        if (rc != 0) {
            printf("timer rank=%d point=%s id=%d error=timer_gettime\n", rank, point, id);
            continue;
        }
        uint64_t p = (uint64_t)its.it_interval.tv_sec * 1000000000ull + (uint64_t)its.it_interval.tv_nsec;
        int armed = its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0;
        running += armed;
        /* The expiration lies between t0 + remaining and t1 + remaining. */
        int64_t at = (t0 + t1) / 2 + (int64_t)its.it_value.tv_sec * 1000000000 + its.it_value.tv_nsec;
        int64_t phase = tick > 0 ? at % tick : 0;
        if (phase > tick / 2)
            phase -= tick;
        if (print)
            printf("timer rank=%d point=%s id=%d armed=%d interval_ns=%llu phase_ns=%lld\n", rank, point, id,
                   armed, (unsigned long long)p, (long long)phase);
    }
    fclose(f);
    return running;
}

/* The paused and resumed points of the default mode. */
static void pause_and_resume(int rank, int hz)
{
    MPI_Pcontrol(0);
    /* A timer stops at its thread's next signal, which comes when that
     * thread next runs: on 2 cores shared by more busy threads, a thread
     * may wait tens of milliseconds for a core.  So look again every
     * 10 ms, for up to a second, before printing. */
    pause_s(3.0 / hz + 0.05);
    int waited = 0;
    while (report(rank, "paused", 0) > 0 && waited < 1000) {
        pause_s(0.01);
        waited += 10;
    }
    printf("paused rank=%d extra_wait_ms=%d\n", rank, waited);
    report(rank, "paused", 1);
    MPI_Pcontrol(1);
    pause_s(0.05);
    report(rank, "resumed", 1);
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int hz = argc > 1 ? atoi(argv[1]) : 100;
    if (hz < 1)
        hz = 100;
    if (argc > 2 && strcmp(argv[2], "toggle") == 0) {
        MPI_Pcontrol(0);
        double on = 0;
        for (int i = 0; i < 600; i++) {
            double t0 = MPI_Wtime();
            MPI_Pcontrol(1);
            spin_s(0.005);
            MPI_Pcontrol(0);
            on += MPI_Wtime() - t0;
            spin_s(0.002);
        }
        printf("toggle rank=%d on_s=%.4f\n", rank, on);
        fflush(stdout);
        MPI_Finalize();
        return 0;
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    pause_s(0.2);
    int grid = argc > 2 && strcmp(argv[2], "grid") == 0;
    if (grid)
        printf("tick rank=%d tick_ns=%lld\n", rank, (long long)tick_ns());
    report(rank, "on", 1);
    if (!grid)
        pause_and_resume(rank, hz);
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
