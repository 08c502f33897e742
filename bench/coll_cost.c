/* bench/coll_cost.c — what waitprof adds to a collective call: loops of
 * MPI_Barrier and of an 8-byte MPI_Allreduce (one double, MPI_SUM).
 *
 * usage: coll_cost [calls [repeats]]        (defaults 2000, 101)
 *
 * As in bench/pingpong.c, every timed repeat of calls collectives through
 * the MPI_ names (waitprof's wrappers when it is preloaded) is paired with
 * the same repeat through the PMPI_ names on a duplicate of
 * MPI_COMM_WORLD made with PMPI_Comm_dup, which waitprof never sees; the
 * order within a pair alternates.  The in-run figures are medians over
 * repeats of MPI/PMPI and of MPI - PMPI per call.  Under waitprof with
 * matching on (WAITPROF_MATCH, default one in 16), every collective on a
 * numbered communicator is numbered (an atomic add on the communicator's
 * counter and the hash that chooses), and a chosen one (the first 16, then
 * blocks of 4 in 64) goes into the communicator's batch, which is reduced
 * (two MPI_Allreduce) over the communicator each 256 chosen instances; so
 * the difference between a run with matching and one with WAITPROF_MATCH=0
 * is numbering, choice and batches.
 *
 * One line from rank 0:
 *   coll_cost barrier_us=<MPI median> barrier_pmpi_us=<PMPI median>
 *             barrier_ratio=<median of MPI/PMPI> barrier_added_ns=<median of MPI - PMPI>
 *             allreduce_us=... allreduce_pmpi_us=... allreduce_ratio=... allreduce_added_ns=...
 *             calls=N repeats=R ranks=P
 * Times are per call, the maximum over ranks of each repeat.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts. */
static double cc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cc_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static MPI_Comm cc_bare; /* the PMPI half's communicator */

/* n calls of CALL(COMM), seconds in *SECS, the slowest rank's.  A macro,
 * as in pingpong.c: the calls stay direct, as a program makes them. */
#define CC_LOOP(CALL, COMM, SECS)                                                           \
    do {                                                                                    \
        PMPI_Barrier(COMM);                                                                 \
        double t0_ = MPI_Wtime();                                                           \
        for (long i_ = 0; i_ < n; i_++)                                                     \
            CALL;                                                                           \
        double s_ = MPI_Wtime() - t0_;                                                      \
        PMPI_Allreduce(MPI_IN_PLACE, &s_, 1, MPI_DOUBLE, MPI_MAX, COMM);                     \
        *(SECS) = s_;                                                                       \
    } while (0)

static double cc_run(int kind, long n, int pmpi)
{
    double secs, x = 1, y = 0;
    if (kind == 0 && pmpi)
        CC_LOOP(PMPI_Barrier(cc_bare), cc_bare, &secs);
    else if (kind == 0)
        CC_LOOP(MPI_Barrier(MPI_COMM_WORLD), cc_bare, &secs);
    else if (pmpi)
        CC_LOOP(PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, cc_bare), cc_bare, &secs);
    else
        CC_LOOP(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), cc_bare, &secs);
    return secs;
}

/* repeats pairs; per[] and base[] in µs per call, ratio[] and diff[] (ns). */
static void cc_series(int kind, long n, int repeats, double *per, double *base, double *ratio, double *diff)
{
    cc_run(kind, n / 10 + 1, 0);
    cc_run(kind, n / 10 + 1, 1);
    for (int r = 0; r < repeats; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int pmpi = (k + r) % 2;
            t[pmpi] = cc_run(kind, n, pmpi) / (double)n;
        }
        per[r] = t[0] * 1e6;
        base[r] = t[1] * 1e6;
        ratio[r] = per[r] / base[r];
        diff[r] = (t[0] - t[1]) * 1e9;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 2000;
    int repeats = argc > 2 ? atoi(argv[2]) : 101;
    if (calls < 1 || repeats < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_cost [calls [repeats]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    PMPI_Comm_dup(MPI_COMM_WORLD, &cc_bare);
    double *v = malloc(8 * (size_t)repeats * sizeof *v);
    if (v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double *b = v, *bp = v + repeats, *br = v + 2 * repeats, *bd = v + 3 * repeats;
    double *a = v + 4 * repeats, *ap = v + 5 * repeats, *ar = v + 6 * repeats, *ad = v + 7 * repeats;
    cc_series(0, calls, repeats, b, bp, br, bd);
    cc_series(1, calls, repeats, a, ap, ar, ad);
    if (rank == 0)
        printf("coll_cost barrier_us=%.4f barrier_pmpi_us=%.4f barrier_ratio=%.4f barrier_added_ns=%.2f "
               "allreduce_us=%.4f allreduce_pmpi_us=%.4f allreduce_ratio=%.4f allreduce_added_ns=%.2f "
               "calls=%ld repeats=%d ranks=%d\n",
               cc_median(b, repeats), cc_median(bp, repeats), cc_median(br, repeats), cc_median(bd, repeats),
               cc_median(a, repeats), cc_median(ap, repeats), cc_median(ar, repeats), cc_median(ad, repeats),
               calls, repeats, size);
    free(v);
    PMPI_Comm_free(&cc_bare);
    MPI_Finalize();
    return 0;
}
