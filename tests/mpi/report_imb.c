/* report_imb: a known imbalanced program for the cross-rank report.
 *
 *   report_imb [DELAY seconds, default 0.05] [ITER, default 10] [BALANCED, default 0]
 *
 * The first BALANCED iterations are balanced (every rank computes DELAY):
 * their MPI_Allreduce hardly waits, which gives the wait-state estimator a
 * minimum that is not itself a wait (without it, on an MPI without a stall
 * source, every call of a rank waits about equally and the estimator's
 * per-rank minimum hides the waits: the minimum-duration method's weak
 * spot).
 *
 * Each of ITER iterations: rank r computes (r + 1) x DELAY in work(), then
 * every rank calls MPI_Allreduce from exchange().  The highest rank computes
 * longest, so every other rank waits for it in exchange;MPI_Allreduce: that
 * is the main waiting call path and the highest rank causes it.  Each rank
 * measures its time inside MPI_Allreduce and rank 0 prints, in rank order,
 * "truth rank=R allreduce=S compute=S calls=N" (seconds, CLOCK_MONOTONIC).
 * After the reduction each rank passes RING doubles to the next rank in a
 * ring with MPI_Sendrecv (ring()): SIZE(r, r+1 mod n) = ITER x RING x 8
 * bytes and REQUEST(r, r+1 mod n) = ITER in the transfer matrices.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

/* Burn CPU for sec seconds of wall time: a computing rank. */
__attribute__((noinline)) static double work(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

__attribute__((noinline)) static double exchange(double v, double *inside)
{
    double out = 0, t0 = now();
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *inside += now() - t0;
    return out;
}

#define RING 1000

__attribute__((noinline)) static void ring(int rank, int size)
{
    static double out[RING], in[RING];
    MPI_Sendrecv(out, RING, MPI_DOUBLE, (rank + 1) % size, 7, in, RING, MPI_DOUBLE, (rank + size - 1) % size, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) : 0.05;
    int iter = argc > 2 ? atoi(argv[2]) : 10, balanced = argc > 3 ? atoi(argv[3]) : 0;
    double inside = 0, computing = 0, sum = 0;
    for (int i = 0; i < iter; i++) {
        double t0 = now();
        sum += work((i < balanced ? 1 : rank + 1) * delay);
        computing += now() - t0;
        sum = exchange(sum, &inside);
        ring(rank, size);
    }
    double mine[2] = {inside, computing}, *all = NULL;
    if (rank == 0)
        all = malloc(sizeof(double) * 2 * (size_t)size);
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("truth rank=%d allreduce=%.6f compute=%.6f calls=%d\n", r, all[2 * r], all[2 * r + 1], iter);
        free(all);
    }
    MPI_Finalize();
    return sum < 0;
}
