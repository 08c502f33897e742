/* late_sender: rank 1 computes for DELAY ms, then sends; rank 0 waits in
 * MPI_Recv meanwhile.  Repeated ITER times.  Prints the truth each rank
 * measured (CLOCK_MONOTONIC; cpu_compute on the thread's CPU clock) as
 * "truth rank=R key=value". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Burn CPU for sec seconds; noinline so it is a frame of its own. */
__attribute__((noinline)) double compute_loop(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) : 0.2;
    int iter = argc > 2 ? atoi(argv[2]) : 5;
    double in_recv = 0, in_compute = 0, cpu_compute = 0, sink = 0;
    int buf = 0;
    for (int it = 0; it < iter; it++) {
        if (rank == 0) {
            double t0 = now();
            MPI_Recv(&buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            in_recv += now() - t0;
        } else if (rank == 1) {
            double t0 = now(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            sink += compute_loop(delay);
            in_compute += now() - t0;
            cpu_compute += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
            MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    printf("truth rank=%d in_recv=%.6f in_compute=%.6f cpu_compute=%.6f sink=%d\n", rank, in_recv, in_compute,
           cpu_compute, sink > 1e30);
    MPI_Finalize();
    return 0;
}
