/* bench/wrapper_cost.c — time of one cheap MPI call, to measure what the
 * waitprof wrappers add to every call.
 *
 * usage: wrapper_cost [calls [repeats]]     (defaults 1000000, 9)
 *
 * MPI_Iprobe on a tag nobody sends is about the cheapest MPI call that still
 * enters the library's progress engine, so the wrapper's share of it is as
 * large as it gets.  Rank 0 times 'calls' of them per repeat, after a warm-up
 * that faults in everything the first calls touch.  Each repeat is paired
 * with one of PMPI_Iprobe, which no wrapper intercepts: a baseline from the
 * same process at the same moment, so MPI - PMPI is the wrapper's cost even
 * when runs differ from each other.  Output, rank 0:
 *   wrapper_cost ns_per_call=<MPI median> pmpi_ns_per_call=<PMPI median>
 *                added_ns=<median over repeats of MPI - PMPI> min=... max=...
 *                calls=N repeats=R total_calls=T
 *   wrapper_cost clock_gettime_ns=<median> rdtsc_ns=<median> check=...
 * The second line times the two clocks a wrapper may read, alone in the same
 * kind of loop: clock_gettime(CLOCK_MONOTONIC) and (x86-64) rdtsc.  One read
 * is part of every wrapped call, so this tells how much of the added time is
 * the clock and how much the wrapper's own instructions.  Run it with
 * one rank: other ranks only wait.
 *
 * Under callgrind run with --collect-atstart=no --toggle-collect=wc_loop:
 * only wc_loop (the MPI_Iprobe loop and everything it calls) is then counted,
 * so the instruction total divided by total_calls (warm-up included) is the
 * instructions per MPI_Iprobe, free of MPI_Init and of timing noise.
 */
/* clock_gettime is POSIX, hidden by -std=c11 without this. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define WC_TAG 4711 /* a tag nothing in this program ever sends */

static double wc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* noinline and external: callgrind's --toggle-collect names this function,
 * so it must exist as a symbol and must not be merged into main. */
__attribute__((noinline)) long wc_loop(long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, WC_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

/* The same through the profiling entry point. */
__attribute__((noinline)) long wc_loop_pmpi(long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        PMPI_Iprobe(MPI_ANY_SOURCE, WC_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

/* The same shape for the clock alone; the sum keeps the reads live. */
__attribute__((noinline)) long wc_clock_loop(long calls)
{
    long sum = 0;
    for (long i = 0; i < calls; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec;
    }
    return sum;
}

/* The TSC alone (0 where there is none to read). */
__attribute__((noinline)) long wc_tsc_loop(long calls)
{
    long sum = 0;
#if defined(__x86_64__)
    for (long i = 0; i < calls; i++)
        sum += (long)__rdtsc();
#else
    (void)calls;
#endif
    return sum;
}

static int wc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts.  An even count takes the lower
 * middle: a figure that one run really produced. */
static double wc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, wc_cmp);
    return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    int repeats = argc > 2 ? atoi(argv[2]) : 9;
    if (calls < 1 || repeats < 1) {
        fprintf(stderr, "usage: wrapper_cost [calls [repeats]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *v = malloc(3 * (size_t)repeats * sizeof *v);
    if (v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double *ns = v, *pns = v + repeats, *diff = v + 2 * repeats;
    long hits = 0;
    if (rank == 0) {
        /* Warm-up: a tenth of a run, at least 1000 calls. */
        long warm = calls / 10 > 1000 ? calls / 10 : 1000;
        hits += wc_loop(warm) + wc_loop_pmpi(warm);
        for (int r = 0; r < repeats; r++) {
            /* Alternate which half of the pair runs first. */
            for (int k = 0; k < 2; k++) {
                int pmpi = (k + r) % 2;
                double t0 = wc_now();
                hits += pmpi ? wc_loop_pmpi(calls) : wc_loop(calls);
                (pmpi ? pns : ns)[r] = (wc_now() - t0) * 1e9 / (double)calls;
            }
            diff[r] = ns[r] - pns[r];
        }
        double added = wc_median(diff, repeats), pmed = wc_median(pns, repeats);
        double med = wc_median(ns, repeats);
        printf("wrapper_cost ns_per_call=%.2f pmpi_ns_per_call=%.2f added_ns=%.2f min=%.2f max=%.2f calls=%ld "
               "repeats=%d total_calls=%ld\n",
               med, pmed, added, ns[0], ns[repeats - 1], calls, repeats, warm + calls * repeats);

        long sink = wc_clock_loop(warm) + wc_tsc_loop(warm);
        for (int r = 0; r < repeats; r++) {
            double t0 = wc_now();
            sink += wc_clock_loop(calls);
            double t1 = wc_now();
            sink += wc_tsc_loop(calls);
            ns[r] = (t1 - t0) * 1e9 / (double)calls;
            pns[r] = (wc_now() - t1) * 1e9 / (double)calls;
        }
        printf("wrapper_cost clock_gettime_ns=%.2f rdtsc_ns=%.2f check=%ld\n", wc_median(ns, repeats),
               wc_median(pns, repeats), sink & 1);
        if (hits != 0)
            fprintf(stderr, "wrapper_cost: %ld unexpected matches for tag %d\n", hits, WC_TAG);
    }
    free(v);
    MPI_Finalize();
    return 0;
}
