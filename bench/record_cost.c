/* bench/record_cost.c — time of one cheap MPI call that the estimator
 * records, to measure what the per-call statistics add to a call.
 *
 * usage: record_cost [calls [repeats]]     (defaults 1000000, 9)
 *
 * A zero-byte MPI_Sendrecv with MPI_PROC_NULL as both partners returns at
 * once, yet its wrapper records it like any blocking exchange (class
 * sendrecv): the statistics' share of it is as large as it gets.  As in
 * wrapper_cost.c each repeat is paired with the same loop through
 * PMPI_Sendrecv, which no wrapper intercepts, so MPI - PMPI is what waitprof
 * adds to the call in this process at this moment.  Run the program once
 * with WAITPROF_ESTIMATE=0 (core wrappers only) and once without (wrappers
 * and statistics): the difference of the two added_ns is the statistics'
 * cost per call (bench/record_cost.sh does that).  Output, rank 0:
 *   record_cost ns_per_call=<MPI median> pmpi_ns_per_call=<PMPI median>
 *               added_ns=<median over repeats of MPI - PMPI>
 *               calls=N repeats=R total_calls=T
 * Under callgrind run with --collect-atstart=no --toggle-collect=rc_loop:
 * the instruction total divided by total_calls is the instructions per
 * recorded call. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double rc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* noinline and external: callgrind's --toggle-collect names it. */
__attribute__((noinline)) long rc_loop(long calls)
{
    long bad = 0;
    for (long i = 0; i < calls; i++)
        bad += MPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    return bad;
}

__attribute__((noinline)) long rc_loop_pmpi(long calls)
{
    long bad = 0;
    for (long i = 0; i < calls; i++)
        bad += PMPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    return bad;
}

static int rc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts (lower middle for an even n). */
static double rc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, rc_cmp);
    return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    int repeats = argc > 2 ? atoi(argv[2]) : 9;
    if (calls < 1 || repeats < 1) {
        fprintf(stderr, "usage: record_cost [calls [repeats]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *v = malloc(3 * (size_t)repeats * sizeof *v);
    if (v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double *ns = v, *pns = v + repeats, *diff = v + 2 * repeats;
    long bad = 0;
    if (rank == 0) {
        long warm = calls / 10 > 1000 ? calls / 10 : 1000;
        bad += rc_loop(warm) + rc_loop_pmpi(warm);
        for (int r = 0; r < repeats; r++) {
            for (int k = 0; k < 2; k++) {
                int pmpi = (k + r) % 2;
                double t0 = rc_now();
                bad += pmpi ? rc_loop_pmpi(calls) : rc_loop(calls);
                (pmpi ? pns : ns)[r] = (rc_now() - t0) * 1e9 / (double)calls;
            }
            diff[r] = ns[r] - pns[r];
        }
        double added = rc_median(diff, repeats), pmed = rc_median(pns, repeats), med = rc_median(ns, repeats);
        printf("record_cost ns_per_call=%.2f pmpi_ns_per_call=%.2f added_ns=%.2f calls=%ld repeats=%d "
               "total_calls=%ld\n",
               med, pmed, added, calls, repeats, warm + calls * repeats);
        if (bad)
            fprintf(stderr, "record_cost: %ld calls failed\n", bad);
    }
    free(v);
    MPI_Finalize();
    return bad != 0;
}
