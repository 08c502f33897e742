/* ws_waitall: MPI_Waitall on rank 0 completing receives of NMSG messages
 * from ranks 1..P-1 (each sender sends NMSG/(P-1); with 2 ranks rank 1 sends
 * all of them), at one call site, over three kinds of iterations:
 *   early    the messages are sent long before and rank 0 drives them to
 *            completion (MPI_Test) while it computes: complete on entry;
 *   on time  everyone meets at a barrier, then the senders send at once:
 *            no wait, but the transfer (BYTES per message) takes time;
 *   late     after the barrier message m is sent (m+1)*DELAY late: staggered
 *            late senders.
 * The truth is measured on CLOCK_MONOTONIC, shared by the ranks of one
 * machine: each sender writes its send-entry time into its message; rank 0
 * takes wait_i = max(0, latest send entry - its Waitall entry).  Prints
 * "truth rank=0 pattern=late_sender function=MPI_Waitall wait=S". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BYTES (256 * 1024)
#define NMSG 2
#define MAXP 16

#include "clock.h"

__attribute__((noinline)) static void compute(double sec, MPI_Request *reqs, int n)
{
    double t0 = now();
    volatile double x = 0;
    while (now() - t0 < sec) {
        for (int i = 0; i < 1000; i++)
            x = x + i * 1e-9;
        /* Drive pending messages to completion, as a program that polls. */
        for (int k = 0; k < n; k++)
            if (reqs[k] != MPI_REQUEST_NULL) {
                int flag;
                MPI_Test(&reqs[k], &flag, MPI_STATUS_IGNORE);
                if (flag)
                    reqs[k] = MPI_REQUEST_NULL; /* completed: its status is not needed */
            }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) : 0.02;
    int rounds = argc > 2 ? atoi(argv[2]) : 4;
    if (size < 2 || size > NMSG + 1)
        MPI_Abort(MPI_COMM_WORLD, 2);
    static char buf[NMSG][BYTES];
    MPI_Request reqs[NMSG];
    MPI_Status st[NMSG];
    double truth = 0;
    /* Message m comes from rank 1 + m % (size - 1), tagged by m. */
    for (int r = 0; r < rounds; r++)
        for (int kind = 0; kind < 3; kind++) { /* 0 early, 1 on time, 2 late */
            if (rank == 0) {
                for (int m = 0; m < NMSG; m++)
                    MPI_Irecv(buf[m], BYTES, MPI_BYTE, 1 + m % (size - 1), kind * NMSG + m, MPI_COMM_WORLD,
                              &reqs[m]);
                if (kind == 0)
                    compute(0.05, reqs, NMSG);
                MPI_Barrier(MPI_COMM_WORLD);
                double entry = now();
                /* Early iterations may have completed some requests in
                 * compute(); Waitall skips MPI_REQUEST_NULL. */
                MPI_Waitall(NMSG, reqs, st);
                double latest = 0;
                for (int m = 0; m < NMSG; m++) {
                    double t;
                    memcpy(&t, buf[m], sizeof t);
                    if (t > latest)
                        latest = t;
                }
                if (latest > entry)
                    truth += latest - entry;
            } else {
                static char out[BYTES];
                if (kind != 0)
                    MPI_Barrier(MPI_COMM_WORLD);
                double start = now();
                for (int m = rank - 1; m < NMSG; m += size - 1) {
                    if (kind == 2) {
                        /* Sleep rather than spin: on an oversubscribed
                         * machine a spinning sender would take the CPU
                         * from the ranks it delays.  Sleep to a deadline:
                         * sampling signals cut a plain usleep short. */
                        double until = start + (m + 1) * delay;
                        while (now() < until)
                            usleep(1000);
                    }
                    double t = now();
                    memcpy(out, &t, sizeof t);
                    MPI_Send(out, BYTES, MPI_BYTE, 0, kind * NMSG + m, MPI_COMM_WORLD);
                }
                if (kind == 0)
                    MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    if (rank == 0)
        printf("truth rank=0 pattern=late_sender function=MPI_Waitall wait=%.6f\n", truth);
    MPI_Finalize();
    return 0;
}
