/* ws_stall: rank 0 receives a large message (BYTES) ITER times at one call
 * site of MPI_Recv; in odd iterations rank 1 computes DELAY first (a late
 * sender), in even ones rank 0 computes first (the sender is on time).  The
 * receive then waits for part of its duration and transfers for the rest,
 * so the share of its time spent waiting is well inside (0, 1).
 * Truth on CLOCK_MONOTONIC: rank 1 puts its send-entry time into the message;
 * rank 0 sums wait = max(0, send entry - receive entry) and the receive's
 * duration.  Prints "truth rank=0 stall_share=F wait=S in_recv=S". */
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
    for (int i = 0; i < iter; i++) {
        int late = i % 2 == 1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
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
    if (rank == 0)
        printf("truth rank=0 stall_share=%.4f wait=%.6f in_recv=%.6f\n", in_recv > 0 ? wait / in_recv : 0, wait,
               in_recv);
    free(buf);
    MPI_Finalize();
    return 0;
}
