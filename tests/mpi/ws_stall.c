/* ws_stall: MPI-Stall and MPI-Work from samples, against a truth measured
 * on CLOCK_MONOTONIC.
 *
 *   ws_stall [DELAY, default 0.1] [ITER, default 10] [recv|allreduce, default recv]
 *
 * recv: rank 0 receives a large message (BYTES) ITER times at one call
 * site of MPI_Recv; in odd iterations rank 1 computes DELAY first (a late
 * sender), in even ones rank 0 computes first (the sender is on time).  The
 * receive then waits for part of its duration and transfers for the rest,
 * so the share of its time spent waiting is well inside (0, 1).
 * Rank 1 puts its send-entry time into the message; rank 0 sums
 * wait = max(0, send entry - receive entry) and the receive's duration.
 *
 * allreduce: every iteration, rank 1 computes DELAY and then every rank
 * calls MPI_Allreduce (MPI_MAX) on BYTES/4 of doubles, the first of which is
 * the caller's entry time: rank 0 waits in every call, never in a call of
 * its own that did not wait, so only the global minimum (rank 1's calls)
 * tells its waiting from its reduction work.  Rank 0 sums
 * wait = last entry - own entry and the call's duration.
 *
 * Prints "truth rank=0 stall_share=F wait=S in_recv=S" (in_recv: the time
 * in the measured call, either one). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (16 << 20)

#define WP_TEST_COMPUTE
#include "clock.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double delay = argc > 1 ? atof(argv[1]) : 0.1;
    int iter = argc > 2 ? atoi(argv[2]) : 10;
    char *buf = malloc(BYTES);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(buf, 1, BYTES);
    double wait = 0, in_recv = 0;
    int allreduce = argc > 3 && strcmp(argv[3], "allreduce") == 0;
    double *v = (double *)buf, *red = NULL;
    /* A quarter of BYTES: the reduction's own time (about 4 ms here) stays
     * well inside the call, and the minimum-duration method's bias for
     * collectives small against it: the late rank's calls, which set the
     * global minimum, are faster than the reduction part of the early
     * rank's (measured with 16 MiB: sampled share 5-7 points above the
     * truth, at 2 ranks on Open MPI). */
    size_t nv = BYTES / 4 / sizeof(double);
    if (allreduce && (red = malloc(nv * sizeof *red)) == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t k = 1; allreduce && k < nv; k++)
        v[k] = (double)k;
    for (int i = 0; i < iter; i++) {
        int late = i % 2 == 1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (allreduce) {
            if (rank == 1)
                compute(delay);
            double entry = now();
            v[0] = entry;
            MPI_Allreduce(v, red, (int)nv, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double leave = now();
            in_recv += leave - entry;
            if (red[0] > entry)
                wait += red[0] - entry;
        } else if (rank == 0) {
            if (!late)
                compute(delay);
            double entry = now();
            MPI_Recv(buf, BYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double leave = now(), sent;
            memcpy(&sent, buf, sizeof sent);
            in_recv += leave - entry;
            if (sent > entry)
                wait += sent - entry;
        } else if (rank == 1) {
            if (late)
                compute(delay);
            double t = now();
            memcpy(buf, &t, sizeof t);
            MPI_Send(buf, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    free(red);
    if (rank == 0)
        printf("truth rank=0 stall_share=%.4f wait=%.6f in_recv=%.6f\n", in_recv > 0 ? wait / in_recv : 0, wait,
               in_recv);
    free(buf);
    MPI_Finalize();
    return 0;
}
