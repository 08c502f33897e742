/* threads: MPI_THREAD_MULTIPLE with NT worker threads per rank (2 ranks).
 * Worker t computes for D seconds in worker_compute, then exchanges a
 * message with worker t of the other rank (tag t); ITER times.  Prints
 * "truth rank=R tid=T lifetime=S compute=S" for each worker (its kernel
 * thread id, the wall time from its first to its last instruction, and the
 * wall time it spent in worker_compute) and
 * "truth rank=R threads=NT seconds=S" with the wall time the workers ran. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double delay = 0.1;
static int iter = 10, rank, size;

#include "clock.h"

__attribute__((noinline)) static double worker_compute(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

static void *worker(void *arg)
{
    double born = now();
    int t = (int)(long)arg, peer = rank ^ 1, out = t, in = -1;
    volatile double sink = 0;
    double computing = 0;
    for (int it = 0; it < iter; it++) {
        double c0 = now();
        sink += worker_compute(delay);
        computing += now() - c0;
        if (peer < size)
            MPI_Sendrecv(&out, 1, MPI_INT, peer, t, &in, 1, MPI_INT, peer, t, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    }
    printf("truth rank=%d tid=%d lifetime=%.6f compute=%.6f\n", rank, (int)gettid(), now() - born, computing);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, nt = argc > 1 ? atoi(argv[1]) : 4;
    delay = argc > 2 ? atof(argv[2]) : 0.1;
    iter = argc > 3 ? atoi(argv[3]) : 10;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t th[64];
    double t0 = now();
    for (int t = 0; t < nt && t < 64; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < nt && t < 64; t++)
        pthread_join(th[t], NULL);
    printf("truth rank=%d threads=%d seconds=%.6f\n", rank, nt, now() - t0);
    MPI_Finalize();
    return 0;
}
