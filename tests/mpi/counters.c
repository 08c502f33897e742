/* tests/mpi/counters.c — known CPU time under a known function, and a
 * known wait, for the counters (t_counters.sh): rank 1 computes in
 * counted_work() for SEC seconds of its own CPU time, measured with
 * CLOCK_THREAD_CPUTIME_ID and printed as a truth line; rank 0 meanwhile
 * waits for its message in MPI_Recv.  With a second argument T > 0, rank
 * 1 runs counted_work on T threads instead, each for SEC seconds of its
 * own CPU time (one truth line per thread), while its main thread waits
 * for them in pthread_join.  A third argument is the exit status every
 * rank returns after MPI_Finalize (t_counters_papi.sh: the profiler keeps
 * it). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* noinline, so that its samples (and their counts) land under its own
 * frame, and noclone, so that GCC does not rename it counted_work.isra.0.
 * It spins on the thread's CPU clock, so that its CPU time is what it was
 * asked for however busy the machine is. */
__attribute__((noinline, noclone)) static double counted_work(double sec)
{
    double t0 = cpu_now();
    volatile double x = 0;
    while (cpu_now() - t0 < sec)
        for (int i = 0; i < 2000; i++)
            x = x + i * 1e-9;
    return x;
}

static double work_sec;

static void *worker(void *arg)
{
    (void)arg;
    double c0 = cpu_now();
    counted_work(work_sec);
    double c1 = cpu_now();
    printf("truth rank=1 thread cpu_ns=%.0f\n", (c1 - c0) * 1e9);
    return NULL;
}

int main(int argc, char **argv)
{
    double sec = argc > 1 ? atof(argv[1]) : 0.6;
    int nt = argc > 2 ? atoi(argv[2]) : 0;
    int status = argc > 3 ? atoi(argv[3]) : 0;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int token = 0;
    if (rank == 1 && nt > 0) {
        pthread_t th[16];
        work_sec = sec;
        if (nt > 16)
            nt = 16;
        for (int t = 0; t < nt; t++)
            pthread_create(&th[t], NULL, worker, NULL);
        for (int t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        double c0 = cpu_now();
        counted_work(sec);
        double c1 = cpu_now();
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        printf("truth rank=1 cpu_ns=%.0f\n", (c1 - c0) * 1e9);
    } else if (rank == 0) {
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    fflush(stdout);
    MPI_Finalize();
    return status;
}
