/* bench/poll_cost.c — what the wrappers add to the calls a latency-bound
 * program makes most: polls and nonblocking point-to-point calls.
 *
 * usage: poll_cost [calls [repeats [self|world [requests]]]]
 *        (defaults 200000, 9, self, 64), one rank
 *
 * Four loops, each timed through the MPI_ names (waitprof's wrappers when
 * it is preloaded) and paired with the same loop through the PMPI_ names,
 * which no wrapper sees; the order within a pair alternates between
 * repeats, and the figures are medians over repeats of MPI - PMPI per call:
 *   test      MPI_Test on a receive that never completes (a tag nobody
 *             sends);
 *   testany   MPI_Testany over 64 such receives (or requests of them, up
 *             to PC_MAX);
 *   iprobe    MPI_Iprobe on that tag;
 *   isendrecv MPI_Irecv and MPI_Isend of 8 bytes to itself, then
 *             MPI_Waitall of the two: per iteration, so three calls.
 * All on MPI_COMM_SELF, which waitprof does not number, or with "world"
 * on MPI_COMM_WORLD, which it numbers: there every nonblocking call takes
 * a number and the chosen ones are followed to their completion, as in a
 * program's halo exchange.
 * The requests the MPI_ loops poll were made through the MPI_ names too,
 * those of the PMPI_ loops through the PMPI_ names: under waitprof the
 * former are numbered and some of them followed as chosen matched
 * instances, as in a real program.  Output:
 *   poll_cost test_ns=.. test_pmpi_ns=.. test_added_ns=.. testany_ns=..
 *             ... isendrecv_added_ns=.. calls=N repeats=R
 * Under callgrind, --toggle-collect=pc_mpi_* counts one loop's
 * instructions.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12 reads
 * as an array of no elements passed where MPI_Waitall's prototype wants
 * count of them (-Wstringop-overflow).  The warning is silenced rather than
 * the constant hidden behind a volatile pointer, so that the timed loops'
 * code stays what it was: both halves of a pair would pay the extra load. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define PC_TAG 4712 /* nothing in this program sends it */
#define PC_MAX 1024 /* the most requests testany may poll */

/* How many requests testany polls (64 unless the fifth argument says). */
static int pc_n = 64;

/* The communicator of every loop (see above). */
static MPI_Comm pc_comm;

static double pc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The loops: noinline and external, so that callgrind can name them.  Each
 * returns something that depends on every call, so none is optimized
 * away. */
__attribute__((noinline)) long pc_mpi_test(MPI_Request *r, long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

__attribute__((noinline)) long pc_pmpi_test(MPI_Request *r, long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        PMPI_Test(r, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

__attribute__((noinline)) long pc_mpi_testany(MPI_Request *r, long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0, idx = 0;
        MPI_Testany(pc_n, r, &idx, &flag, MPI_STATUS_IGNORE);
        hits += flag + idx;
    }
    return hits;
}

__attribute__((noinline)) long pc_pmpi_testany(MPI_Request *r, long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0, idx = 0;
        PMPI_Testany(pc_n, r, &idx, &flag, MPI_STATUS_IGNORE);
        hits += flag + idx;
    }
    return hits;
}

__attribute__((noinline)) long pc_mpi_iprobe(long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, PC_TAG, pc_comm, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

__attribute__((noinline)) long pc_pmpi_iprobe(long calls)
{
    long hits = 0;
    for (long i = 0; i < calls; i++) {
        int flag = 0;
        PMPI_Iprobe(MPI_ANY_SOURCE, PC_TAG, pc_comm, &flag, MPI_STATUS_IGNORE);
        hits += flag;
    }
    return hits;
}

__attribute__((noinline)) long pc_mpi_isendrecv(long calls)
{
    double out = 1, in = 0, sum = 0;
    for (long i = 0; i < calls; i++) {
        MPI_Request r[2];
        MPI_Irecv(&in, 1, MPI_DOUBLE, 0, 1, pc_comm, &r[0]);
        MPI_Isend(&out, 1, MPI_DOUBLE, 0, 1, pc_comm, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        sum += in;
    }
    return (long)sum;
}

__attribute__((noinline)) long pc_pmpi_isendrecv(long calls)
{
    double out = 1, in = 0, sum = 0;
    for (long i = 0; i < calls; i++) {
        MPI_Request r[2];
        PMPI_Irecv(&in, 1, MPI_DOUBLE, 0, 1, pc_comm, &r[0]);
        PMPI_Isend(&out, 1, MPI_DOUBLE, 0, 1, pc_comm, &r[1]);
        PMPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        sum += in;
    }
    return (long)sum;
}

static int pc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts (the lower middle of an even
 * count: a figure one repeat produced). */
static double pc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, pc_cmp);
    return v[(n - 1) / 2];
}

enum { PC_TEST, PC_TESTANY, PC_IPROBE, PC_ISENDRECV, PC_LOOPS };
static const char *const pc_name[PC_LOOPS] = {"test", "testany", "iprobe", "isendrecv"};

static MPI_Request pc_req[2][PC_MAX]; /* [0] made through MPI_, [1] through PMPI_ */
static double pc_in[2][PC_MAX];

static long pc_run(int loop, int pmpi, long calls)
{
    MPI_Request *r = pc_req[pmpi];
    switch (loop) {
    case PC_TEST:
        return pmpi ? pc_pmpi_test(r, calls) : pc_mpi_test(r, calls);
    case PC_TESTANY:
        return pmpi ? pc_pmpi_testany(r, calls) : pc_mpi_testany(r, calls);
    case PC_IPROBE:
        return pmpi ? pc_pmpi_iprobe(calls) : pc_mpi_iprobe(calls);
    default:
        return pmpi ? pc_pmpi_isendrecv(calls) : pc_mpi_isendrecv(calls);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    int repeats = argc > 2 ? atoi(argv[2]) : 9;
    pc_comm = argc > 3 && strcmp(argv[3], "world") == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    pc_n = argc > 4 ? atoi(argv[4]) : 64;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (calls < 1 || repeats < 1 || pc_n < 1 || pc_n > PC_MAX) {
        fprintf(stderr, "usage: poll_cost [calls [repeats [self|world [requests (1..%d)]]]]\n", PC_MAX);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *v = malloc(3 * (size_t)repeats * sizeof *v);
    if (v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long sink = 0;
    if (rank == 0) {
        for (int i = 0; i < pc_n; i++) {
            MPI_Irecv(&pc_in[0][i], 1, MPI_DOUBLE, 0, PC_TAG, pc_comm, &pc_req[0][i]);
            PMPI_Irecv(&pc_in[1][i], 1, MPI_DOUBLE, 0, PC_TAG, pc_comm, &pc_req[1][i]);
        }
        printf("poll_cost");
        for (int loop = 0; loop < PC_LOOPS; loop++) {
            double *ns = v, *pns = v + repeats, *diff = v + 2 * repeats;
            /* Warm-up: a tenth of a run, at least 1000 calls, each way. */
            long warm = calls / 10 > 1000 ? calls / 10 : 1000;
            sink += pc_run(loop, 0, warm) + pc_run(loop, 1, warm);
            for (int r = 0; r < repeats; r++) {
                for (int k = 0; k < 2; k++) {
                    int pmpi = (k + r) % 2;
                    double t0 = pc_now();
                    sink += pc_run(loop, pmpi, calls);
                    (pmpi ? pns : ns)[r] = (pc_now() - t0) * 1e9 / (double)calls;
                }
                diff[r] = ns[r] - pns[r];
            }
            printf(" %s_ns=%.2f %s_pmpi_ns=%.2f %s_added_ns=%.2f", pc_name[loop], pc_median(ns, repeats),
                   pc_name[loop], pc_median(pns, repeats), pc_name[loop], pc_median(diff, repeats));
        }
        printf(" calls=%ld repeats=%d requests=%d sink=%ld\n", calls, repeats, pc_n, sink % 7);
        for (int i = 0; i < pc_n; i++) {
            MPI_Cancel(&pc_req[0][i]);
            MPI_Request_free(&pc_req[0][i]);
            PMPI_Cancel(&pc_req[1][i]);
            PMPI_Request_free(&pc_req[1][i]);
        }
    }
    free(v);
    MPI_Finalize();
    return 0;
}
