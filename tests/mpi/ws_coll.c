/* ws_coll: collective wait states of known size, for checking the
 * minimum-duration wait-state estimate (rank.R.waits) against the truth.
 *
 *   ws_coll allreduce|barrier|bcast|reduce|iallreduce|ibcast [DELAY seconds, default 0.1] [ITER, default 8]
 *
 * Meant for 4 ranks; works with 2 or more.  Each rank calls the collective
 * ITER times at ONE call site.  In odd iterations one designated late rank
 * computes DELAY before the call; in even ones nobody is late, so every
 * category also has wait-free calls (the estimator takes their cost as the
 * minimum).  Messages are 8 doubles so a wait-free call is short.
 *
 *   mode       late rank           truth, summed over iterations i
 *   allreduce  the last rank       every rank p: max_q(entry q,i) - entry p,i
 *   barrier    the last rank       the same
 *   bcast      the root (0)        non-roots p: max(0, entry root,i - entry p,i)
 *   reduce     the last rank       the root (0): max(0, max_q(entry q,i) - entry root,i)
 *   iallreduce as allreduce, with MPI_Iallreduce + MPI_Wait (Wait at NxN in MPI_Wait)
 *   ibcast     as bcast, with MPI_Ibcast + MPI_Wait (Late Broadcast in MPI_Wait)
 *
 * Entry times are CLOCK_MONOTONIC, which all ranks on one machine share.
 * After the loop they are exchanged with MPI_Allgather (other call sites,
 * another function than any mode tests), and rank 0 prints, in rank order,
 * "truth rank=R pattern=P function=F wait=S" for every rank the pattern
 * applies to (all ranks; non-roots for bcast; the root for reduce), each
 * preceded by "detail rank=R waits=w0,w1,..." (per-iteration truth). */
/* clock_gettime and CLOCK_MONOTONIC are POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITER 1000
#define COUNT 8

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

enum mode { ALLREDUCE, BARRIER, BCAST, REDUCE, IALLREDUCE, IBCAST, NMODES };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const char *const modes[] = {"allreduce", "barrier", "bcast", "reduce", "iallreduce", "ibcast"};
    const char *arg = argc > 1 ? argv[1] : "";
    int mode = -1;
    for (int m = 0; m < NMODES; m++)
        if (strcmp(arg, modes[m]) == 0)
            mode = m;
    double delay = argc > 2 ? atof(argv[2]) : 0.1;
    int iter = argc > 3 ? atoi(argv[3]) : 8;
    if (mode < 0 || size < 2 || iter < 1 || iter > MAX_ITER) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 4 ws_coll allreduce|barrier|bcast|reduce|iallreduce|ibcast [DELAY] "
                            "[ITER<=%d]\n",
                    MAX_ITER);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The root is 0 for bcast and reduce.  Bcast: a late root makes the
     * non-roots wait (Late Broadcast); reduce: a late non-root makes the
     * root wait (Early Reduce). */
    int late = mode == BCAST || mode == IBCAST ? 0 : size - 1;
    double entry[MAX_ITER], in[COUNT], out[COUNT], sink = 0;
    for (int k = 0; k < COUNT; k++)
        in[k] = rank + k;

    /* Start together, so launch skew does not show up as a wait in the first
     * iteration.  Not MPI_Barrier: in barrier mode it would add its own
     * waits to the MPI_Barrier rows the test sums. */
    int one = 1, *ones = malloc(size * sizeof *ones);
    MPI_Allgather(&one, 1, MPI_INT, ones, 1, MPI_INT, MPI_COMM_WORLD);

    for (int it = 0; it < iter; it++) {
        if (rank == late && it % 2 == 1)
            sink += compute(delay);
        entry[it] = now();
        switch (mode) {
        case ALLREDUCE:
            MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case BARRIER:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case BCAST:
            MPI_Bcast(in, COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            break;
        case REDUCE:
            MPI_Reduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            break;
        case IALLREDUCE:
        case IBCAST: {
            /* The nonblocking form returns at once; the wait is in the
             * MPI_Wait that completes it (its request kind tells the
             * estimator which pattern). */
            MPI_Request req;
            if (mode == IALLREDUCE)
                MPI_Iallreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
            else
                MPI_Ibcast(in, COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            break;
        }
        }
    }

    double *all = malloc((size_t)size * iter * sizeof *all);
    MPI_Allgather(entry, iter, MPI_DOUBLE, all, iter, MPI_DOUBLE, MPI_COMM_WORLD);
    if (rank == 0) {
        static const char *const pattern[] = {"wait_nxn",     "wait_barrier", "late_broadcast",
                                              "early_reduce", "wait_nxn",     "late_broadcast"};
        static const char *const function[] = {"MPI_Allreduce", "MPI_Barrier", "MPI_Bcast",
                                               "MPI_Reduce",    "MPI_Wait",    "MPI_Wait"};
        for (int p = 0; p < size; p++) {
            /* Only the ranks the pattern can occur on get a truth line. */
            if (((mode == BCAST || mode == IBCAST) && p == 0) || (mode == REDUCE && p != 0))
                continue;
            double sum = 0;
            printf("detail rank=%d waits=", p);
            for (int i = 0; i < iter; i++) {
                double last = all[i], mine = all[(size_t)p * iter + i];
                for (int q = 1; q < size; q++)
                    if (all[(size_t)q * iter + i] > last)
                        last = all[(size_t)q * iter + i];
                /* bcast: waiting for the root only; the others: for the last
                 * rank to enter (for reduce p is the root). */
                double w = (mode == BCAST || mode == IBCAST ? all[i] : last) - mine;
                if (w < 0)
                    w = 0;
                printf("%s%.6f", i ? "," : "", w);
                sum += w;
            }
            printf("\ntruth rank=%d pattern=%s function=%s wait=%.6f\n", p, pattern[mode], function[mode], sum);
        }
        fflush(stdout);
    }
    if (sink < 0)
        printf("sink=%g\n", sink);
    free(all);
    free(ones);
    MPI_Finalize();
    return 0;
}
