/* ws_sendwait: MPI_Waitall completing sends only must not be counted as
 * Late Sender, while a Waitall completing receives in the same run is.
 *
 *   ws_sendwait [DELAY seconds, default 0.1] [ITER, default 8]
 *
 * 2 ranks.  Every iteration starts with an MPI_Barrier, then:
 *   sends    rank 0 posts two MPI_Isend of BYTES (large enough that
 *            completing them needs the receiver) and completes them with
 *            MPI_Waitall at one call site; in odd iterations rank 1 sleeps
 *            DELAY before receiving (a late receiver: rank 0 really waits
 *            there, and that is not a Late Sender wait state);
 *   receives rank 0 posts two MPI_Irecv of RBYTES and completes them with MPI_Waitall
 *            at another call site; in odd iterations rank 1 sleeps DELAY
 *            before sending (Late Sender).
 * Rank 1 puts its send-entry time into each message it sends; rank 0 sums
 * max(0, latest send entry - Waitall entry) over the receive iterations.
 * Prints "truth rank=0 pattern=late_sender function=MPI_Waitall wait=S"
 * (the receive Waitall only) and "sendwait rank=0 waited=S" (the time rank
 * 0 spent in the send Waitall, measured around it).  Times are
 * CLOCK_MONOTONIC, shared by the ranks of one machine. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BYTES (4 * 1024 * 1024) /* sends: large, so completing them needs the receiver */
#define RBYTES (64 * 1024)       /* receives: small, so a transfer is short beside DELAY */

#include "clock.h"

/* Sleep to a deadline, not spin: on a 2-core machine shared with others a
 * spinning rank takes the CPU from the rank it delays; sampling signals cut
 * a plain usleep short. */
static void sleep_for(double sec)
{
    double until = now() + sec;
    while (now() < until)
        usleep(1000);
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12 reads
 * as an array of no elements passed where MPI_Waitall's prototype wants
 * count of them (-Wstringop-overflow).  Through a volatile pointer the
 * call is the same and the constant is out of the compiler's sight. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

__attribute__((noinline)) static void complete_sends(MPI_Request *reqs)
{
    MPI_Waitall(2, reqs, statuses_ignore);
}

__attribute__((noinline)) static void complete_receives(MPI_Request *reqs)
{
    MPI_Waitall(2, reqs, statuses_ignore);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) : 0.1;
    int iter = argc > 2 ? atoi(argv[2]) : 8;
    if (size != 2 || iter < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_sendwait [DELAY] [ITER]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf[2] = {malloc(BYTES), malloc(BYTES)};
    if (!buf[0] || !buf[1])
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(buf[0], 0, BYTES);
    memset(buf[1], 0, BYTES);
    MPI_Request reqs[2];
    double truth = 0, waited = 0;
    for (int it = 0; it < iter; it++) {
        int late = it % 2 == 1;
        /* Sends: rank 0 sends, rank 1 receives (late in odd iterations). */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int m = 0; m < 2; m++)
                MPI_Isend(buf[m], BYTES, MPI_BYTE, 1, m, MPI_COMM_WORLD, &reqs[m]);
            double t0 = now();
            complete_sends(reqs);
            waited += now() - t0;
        } else {
            if (late)
                sleep_for(delay);
            for (int m = 0; m < 2; m++)
                MPI_Recv(buf[m], BYTES, MPI_BYTE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        /* Receives: rank 1 sends (late in odd iterations), rank 0 waits. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int m = 0; m < 2; m++)
                MPI_Irecv(buf[m], RBYTES, MPI_BYTE, 1, 100 + m, MPI_COMM_WORLD, &reqs[m]);
            double entry = now();
            complete_receives(reqs);
            /* The call waits for both messages: until the sender entered
             * its last send (the messages are small, so the transfer before
             * it is short; a sender descheduled between its two sends makes
             * the receiver wait, and the truth holds that too). */
            double latest = 0;
            for (int m = 0; m < 2; m++) {
                double t;
                memcpy(&t, buf[m], sizeof t);
                if (t > latest)
                    latest = t;
            }
            if (latest > entry)
                truth += latest - entry;
        } else {
            if (late)
                sleep_for(delay);
            for (int m = 0; m < 2; m++) {
                double t = now();
                memcpy(buf[m], &t, sizeof t);
                MPI_Send(buf[m], RBYTES, MPI_BYTE, 0, 100 + m, MPI_COMM_WORLD);
            }
        }
    }
    if (rank == 0) {
        printf("truth rank=0 pattern=late_sender function=MPI_Waitall wait=%.6f\n", truth);
        printf("sendwait rank=0 waited=%.6f\n", waited);
    }
    free(buf[0]);
    free(buf[1]);
    MPI_Finalize();
    return 0;
}
