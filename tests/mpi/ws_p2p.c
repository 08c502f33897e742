/* ws_p2p: point-to-point wait states of known size, for checking the
 * minimum-duration wait-state estimate (rank.R.waits) against the truth.
 *
 *   ws_p2p recv|ssend [DELAY seconds, default 0.1] [ITER, default 10]
 *
 * Needs at least 2 ranks; ranks above 1 only join the barriers.  Every
 * iteration starts with an MPI_Barrier (its own call site) so the delays of
 * one iteration do not shift into the next.
 *
 * recv: rank 0 receives from rank 1 ITER times at ONE MPI_Recv call site.
 *   Odd iterations: rank 1 computes DELAY before sending (late sender, rank
 *   0 waits about DELAY).  Even iterations: rank 0 computes DELAY before
 *   receiving, so the message is already there: a wait-free call, which the
 *   estimator needs as the minimum of the category.  Rank 1 puts its
 *   send-entry time into the message; rank 0 sums
 *   max(0, send entry - receive entry).
 *   Prints "truth rank=0 pattern=late_sender function=MPI_Recv wait=S".
 *
 * ssend: the mirror image: rank 0 calls MPI_Ssend at ONE call site; in odd
 *   iterations rank 1 computes DELAY before receiving (late receiver), in
 *   even iterations rank 0 computes DELAY before sending (the receive is
 *   already posted).  After the loop rank 1 sends its receive-entry times
 *   to rank 0 in one separate message (another call site); rank 0 sums
 *   max(0, receive entry - ssend entry).
 *   Prints "truth rank=0 pattern=late_receiver function=MPI_Ssend wait=S".
 *
 * Both also print "detail rank=0 waits=w0,w1,..." (per-iteration truth) for
 * the log.  Times are CLOCK_MONOTONIC, which all ranks on one machine
 * share, so timestamps of different ranks can be subtracted. */
/* clock_gettime and CLOCK_MONOTONIC are POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITER 1000

#include "clock.h"

/* Burn CPU (not sleep) for sec seconds of wall time: a computing rank, as in
 * a real imbalance.  noinline: a frame of its own in the profile. */
__attribute__((noinline)) static double compute(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

static void print_truth(const char *pattern, const char *function, const double *wait, int iter)
{
    double sum = 0;
    printf("detail rank=0 waits=");
    for (int i = 0; i < iter; i++) {
        printf("%s%.6f", i ? "," : "", wait[i]);
        sum += wait[i];
    }
    printf("\ntruth rank=0 pattern=%s function=%s wait=%.6f\n", pattern, function, sum);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    int iter = argc > 3 ? atoi(argv[3]) : 10;
    int ssend = strcmp(mode, "ssend") == 0;
    if ((!ssend && strcmp(mode, "recv") != 0) || size < 2 || iter < 1 || iter > MAX_ITER) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 ws_p2p recv|ssend [DELAY] [ITER<=%d]\n", MAX_ITER);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double wait[MAX_ITER] = {0}, entry[MAX_ITER] = {0}, sink = 0;
    for (int it = 0; it < iter; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        /* Odd iterations: the partner (rank 1) is late; even ones: rank 0
         * is, so its call finds the partner ready and does not wait. */
        int partner_late = it % 2 == 1;
        if (rank == 0) {
            if (!partner_late)
                sink += compute(delay);
            if (!ssend) {
                double sent_at;
                double t = now();
                MPI_Recv(&sent_at, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                wait[it] = sent_at > t ? sent_at - t : 0;
            } else {
                double payload = it;
                entry[it] = now();
                MPI_Ssend(&payload, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
            }
        } else if (rank == 1) {
            if (partner_late)
                sink += compute(delay);
            if (!ssend) {
                /* The entry time travels in the message itself. */
                double t = now();
                MPI_Send(&t, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            } else {
                double payload;
                entry[it] = now();
                MPI_Recv(&payload, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    if (ssend) {
        /* After the loop, so this message cannot disturb the timed calls. */
        if (rank == 1) {
            MPI_Send(entry, iter, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
        } else if (rank == 0) {
            double recv_entry[MAX_ITER];
            MPI_Recv(recv_entry, iter, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int it = 0; it < iter; it++)
                wait[it] = recv_entry[it] > entry[it] ? recv_entry[it] - entry[it] : 0;
            print_truth("late_receiver", "MPI_Ssend", wait, iter);
        }
    } else if (rank == 0) {
        print_truth("late_sender", "MPI_Recv", wait, iter);
    }
    /* Keep the compute loop's result alive without printing noise. */
    if (sink < 0)
        printf("sink=%g\n", sink);
    MPI_Finalize();
    return 0;
}
