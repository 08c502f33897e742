/* timeline: two phases of known imbalance for the per-rank timeline.
 *
 *   timeline [PHASE seconds, default 0.6]
 *
 * After three balanced MPI_Allreduce rounds (every rank computes 50 ms, so
 * the estimator has a minimum that is not a wait):
 * - phase A: the last rank (the late one) computes PHASE seconds in
 *   compute_a() while every other rank waits for it in MPI_Allreduce;
 * - phase B: every other rank computes PHASE seconds in compute_b() while
 *   the late rank waits in MPI_Recv for a message rank 0 sends after its
 *   computation; then one MPI_Allreduce.
 * Each phase starts after an MPI_Barrier.  Rank 0 prints the phases in
 * CLOCK_MONOTONIC seconds: "truth phase=A start=S end=S" (start: rank 0
 * left the barrier; end: the earliest rank that computed finished), the
 * same for B, and "truth late=R". */
#define _POSIX_C_SOURCE 200809L
#define WP_TEST_COMPUTE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

__attribute__((noinline)) static void compute_a(double sec)
{
    compute(sec);
}

__attribute__((noinline)) static void compute_b(double sec)
{
    compute(sec);
}

__attribute__((noinline)) static double reduce(double v)
{
    double out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double phase = argc > 1 ? atof(argv[1]) : 0.6, sum = 0;
    int late = size - 1;
    for (int i = 0; i < 3; i++) {
        compute(0.05);
        sum = reduce(sum + 1);
    }
    /* Phase A. */
    MPI_Barrier(MPI_COMM_WORLD);
    double a0 = now(), a1 = 1e300;
    if (rank == late) {
        compute_a(phase);
        a1 = now();
    }
    sum = reduce(sum + 1);
    /* Phase B. */
    MPI_Barrier(MPI_COMM_WORLD);
    double b0 = now(), b1 = 1e300;
    int token = 0;
    if (rank != late) {
        compute_b(phase);
        b1 = now();
        if (rank == 0)
            MPI_Send(&token, 1, MPI_INT, late, 5, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    sum = reduce(sum + 1);
    double ends[2] = {a1, b1}, first[2];
    MPI_Reduce(ends, first, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("truth late=%d\n", late);
        printf("truth phase=A start=%.6f end=%.6f\n", a0, first[0]);
        printf("truth phase=B start=%.6f end=%.6f\n", b0, first[1]);
    }
    MPI_Finalize();
    return sum < 0;
}
