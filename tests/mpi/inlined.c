/* inlined: the late sender of late_sender.c, with its two pieces in static
 * helpers that the compiler inlines into main (built with -O2 -g):
 * exchange(), which calls MPI_Recv on rank 0 and MPI_Send on rank 1, and
 * compute(), rank 1's computation.  Their frames exist only in the DWARF
 * (DW_TAG_inlined_subroutine), which is what t_inlined.sh checks
 * waitprof reads.
 *
 *   inlined [DELAY seconds, default 0.2] [ITER, default 5]     2 ranks
 *
 * Prints "truth rank=R in_recv=S in_compute=S" as late_sender.c does. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double compute(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

static inline void exchange(int rank, int *buf)
{
    if (rank == 0)
        MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == 1)
        MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double delay = argc > 1 ? atof(argv[1]) : 0.2;
    int iter = argc > 2 ? atoi(argv[2]) : 5;
    double in_recv = 0, in_compute = 0, sink = 0;
    int buf = 0;
    for (int it = 0; it < iter; it++) {
        double t0 = now();
        if (rank == 1) {
            sink += compute(delay);
            in_compute += now() - t0;
        }
        t0 = now();
        exchange(rank, &buf);
        if (rank == 0)
            in_recv += now() - t0;
    }
    printf("truth rank=%d in_recv=%.6f in_compute=%.6f sink=%d\n", rank, in_recv, in_compute, sink > 1e30);
    MPI_Finalize();
    return 0;
}
