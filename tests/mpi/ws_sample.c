/* ws_sample: many messages with waits of varying size, for checking the
 * sampling error of matched instances (WAITPROF_MATCH): with one message in
 * 64 matched, the Late Sender wait waitprof scales up must lie within the
 * 95 % interval it states (rank.R.waits, ci_ns) of the truth.
 *
 *   ws_sample [N, default 10000]
 *
 * 2 ranks.  Before its i-th send, rank 1 computes 0, 0.25 or 0.5 ms (a
 * fixed pseudo-random sequence, so every run waits alike) and puts its
 * send-entry time into the message; rank 0 receives at one call site and
 * sums max(0, send entry - receive entry).  Prints
 * "truth rank=0 pattern=late_sender function=MPI_Recv wait=S". */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WP_TEST_COMPUTE
#include "clock.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 10000;
    if (size != 2 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_sample [N]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint32_t x = 12345;
    double sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        double d = ((x >> 16) % 3) * 0.25e-3;
        if (rank == 1) {
            compute(d);
            double t = now();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
        } else {
            double t0 = now(), ts;
            MPI_Recv(&ts, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (ts > t0)
                sum += ts - t0;
        }
    }
    if (rank == 0)
        printf("truth rank=0 pattern=late_sender function=MPI_Recv wait=%.6f\n", sum);
    MPI_Finalize();
    return 0;
}
