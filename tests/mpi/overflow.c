/* tests/mpi/overflow.c — known CPU time under known functions, a known
 * wait and a paused stretch, for the overflow trigger (t_overflow.sh):
 * - rank 1 computes in overflow_work() for SEC seconds of its own CPU
 *   time, measured with CLOCK_THREAD_CPUTIME_ID and printed as a truth
 *   line, while rank 0 waits for its message in MPI_Recv (then
 *   overflow_wait_s says how long, in wall time);
 * - then, between MPI_Pcontrol(0) and MPI_Pcontrol(1), rank 1 computes
 *   PAUSED seconds of CPU time in paused_work(), which no sample may
 *   see (its own truth line), and after MPI_Pcontrol(1) as long again in
 *   resumed_work(), which the samples see again (a truth line too);
 * - with a third argument T > 0, rank 1 does its overflow_work on T
 *   threads instead, each for SEC seconds of its own CPU time (one truth
 *   line per thread, with the thread's kernel id), while its main thread
 *   waits for them in pthread_join.
 * Both ranks first move to the same CPU (the lowest one rank 0 may use),
 * so that rank 0's wait competes with rank 1's work for it: a waiting
 * rank that yields its CPU (Open MPI with mpi_yield_when_idle) then spends
 * little CPU time in its wait, however idle the machine is; on a core of
 * its own it would spin it away whole.  "pin rank=R cpu=C ok=1|0" says
 * whether that worked.
 * Arguments: SEC PAUSED [T]. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* noinline and noclone, so that the samples land under the function's own
 * frame and name, and each with its own constant K, so that the compiler
 * does not fold the three into one (GCC did: one address, three names).
 * They spin on the thread's CPU clock, so that the CPU time is what was
 * asked for however busy the machine is. */
#define SPIN(sec, K)                                \
    do {                                            \
        double t0 = cpu_now();                      \
        volatile double x = 0;                      \
        while (cpu_now() - t0 < (sec))              \
            for (int i = 0; i < 2000; i++)          \
                x = x + i * (K);                    \
    } while (0)

__attribute__((noinline, noclone)) static void overflow_work(double sec)
{
    SPIN(sec, 1e-9);
}

__attribute__((noinline, noclone)) static void paused_work(double sec)
{
    SPIN(sec, 2e-9);
}

__attribute__((noinline, noclone)) static void resumed_work(double sec)
{
    SPIN(sec, 3e-9);
}

static double work_sec;

static void *worker(void *arg)
{
    (void)arg;
    double c0 = cpu_now();
    overflow_work(work_sec);
    double c1 = cpu_now();
    printf("truth rank=1 thread tid=%ld cpu_ns=%.0f\n", (long)syscall(SYS_gettid), (c1 - c0) * 1e9);
    return NULL;
}

int main(int argc, char **argv)
{
    double sec = argc > 1 ? atof(argv[1]) : 0.6;
    double paused = argc > 2 ? atof(argv[2]) : 0.2;
    int nt = argc > 3 ? atoi(argv[3]) : 0;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int token = 0, cpu = 0, ok;
    cpu_set_t set;
    if (rank == 0 && sched_getaffinity(0, sizeof set, &set) == 0)
        while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
            cpu++;
    MPI_Bcast(&cpu, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ok = sched_setaffinity(0, sizeof set, &set) == 0;
    printf("pin rank=%d cpu=%d ok=%d\n", rank, cpu, ok);
    if (rank == 1) {
        if (nt > 0) {
            pthread_t th[16];
            work_sec = sec;
            if (nt > 16)
                nt = 16;
            for (int t = 0; t < nt; t++)
                pthread_create(&th[t], NULL, worker, NULL);
            for (int t = 0; t < nt; t++)
                pthread_join(th[t], NULL);
        } else {
            double c0 = cpu_now();
            overflow_work(sec);
            double c1 = cpu_now();
            printf("truth rank=1 cpu_ns=%.0f\n", (c1 - c0) * 1e9);
        }
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        /* The paused stretch: MPI_Pcontrol is local to the rank. */
        MPI_Pcontrol(0);
        double c0 = cpu_now();
        paused_work(paused);
        double c1 = cpu_now();
        MPI_Pcontrol(1);
        double c2 = cpu_now();
        resumed_work(paused);
        double c3 = cpu_now();
        printf("truth rank=1 paused_ns=%.0f\n", (c1 - c0) * 1e9);
        printf("truth rank=1 resumed_ns=%.0f\n", (c3 - c2) * 1e9);
    } else if (rank == 0) {
        double w0 = wall_now();
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double w1 = wall_now();
        printf("truth rank=0 wait_ns=%.0f\n", (w1 - w0) * 1e9);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
