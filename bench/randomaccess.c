/* bench/randomaccess.c — a RandomAccess-like kernel (after HPCC's MPI
 * RandomAccess): what waitprof adds to a latency-bound exchange of small
 * messages.
 *
 * usage: randomaccess [iterations [repeats [updates]]]   (defaults 2000, 31, 64)
 *
 * Every rank owns 2^20 64-bit words of a table spread over the ranks.  An
 * iteration draws `updates` pseudo-random 64-bit values (HPCC's shift-and-
 * xor generator), applies those whose word is its own and sends every
 * other rank the ones for its words in one message (MPI_Irecv from every
 * peer, MPI_Isend to every peer, MPI_Waitall), then applies what it
 * received: about 0.5 KiB per message at 2 ranks, so the exchange is
 * bound by message latency, not bandwidth.
 *
 * As in bench/coll_cost.c, every timed repeat of `iterations` through the
 * MPI_ names (waitprof's wrappers when it is preloaded) is paired with the
 * same repeat through the PMPI_ names on a duplicate of MPI_COMM_WORLD made
 * with PMPI_Comm_dup, which waitprof never sees; the order within a pair
 * alternates.  One line from rank 0:
 *   randomaccess ns_per_update=<MPI median> pmpi_ns_per_update=<PMPI median>
 *                ratio=<median of MPI/PMPI> added_ns_per_iter=<median of MPI - PMPI>
 *                calls_per_iter=C iterations=N repeats=R updates=U ranks=P check=X
 * Times are the slowest rank's per repeat; ns_per_update is per update
 * drawn on one rank.  check is the xor of the table, so that the work
 * cannot be optimized away (it is the same with and without waitprof).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12 reads
 * as an array of no elements passed where MPI_Waitall's prototype wants
 * count of them (-Wstringop-overflow).  The warning is silenced rather than
 * the constant hidden behind a volatile pointer, so that the timed loops'
 * code stays what it was: both halves of a pair would pay the extra load. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define RA_POLY 0x0000000000000007ULL
#define RA_LOCAL_BITS 20

static int ra_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ra_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ra_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int rank, size, nupd;
static uint64_t *table, ran = 1;
static uint64_t *sbuf, *rbuf; /* per peer: a count, then up to nupd values */
static MPI_Request *req;
static MPI_Comm ra_bare;

static void ra_apply(uint64_t v)
{
    table[v & ((1u << RA_LOCAL_BITS) - 1)] ^= v;
}

/* One iteration.  A macro over the four calls, as in coll_cost.c: the
 * calls stay direct, as a program makes them. */
#define RA_ITER(IRECV, ISEND, WAITALL, COMM)                                                       \
    do {                                                                                           \
        for (int p_ = 0; p_ < size; p_++)                                                          \
            sbuf[(size_t)p_ * (nupd + 1)] = 0;                                                      \
        for (int u_ = 0; u_ < nupd; u_++) {                                                        \
            ran = (ran << 1) ^ ((int64_t)ran < 0 ? RA_POLY : 0);                                   \
            int owner_ = (int)((ran >> RA_LOCAL_BITS) % (uint64_t)size);                           \
            if (owner_ == rank) {                                                                  \
                ra_apply(ran);                                                                     \
            } else {                                                                               \
                uint64_t *b_ = &sbuf[(size_t)owner_ * (nupd + 1)];                                 \
                b_[1 + b_[0]++] = ran;                                                             \
            }                                                                                      \
        }                                                                                          \
        int nr_ = 0;                                                                               \
        for (int p_ = 0; p_ < size; p_++)                                                          \
            if (p_ != rank)                                                                        \
                IRECV(&rbuf[(size_t)p_ * (nupd + 1)], nupd + 1, MPI_UINT64_T, p_, 5, COMM, &req[nr_++]); \
        for (int p_ = 0; p_ < size; p_++)                                                          \
            if (p_ != rank)                                                                        \
                ISEND(&sbuf[(size_t)p_ * (nupd + 1)], (int)sbuf[(size_t)p_ * (nupd + 1)] + 1, MPI_UINT64_T, \
                      p_, 5, COMM, &req[nr_++]);                                                    \
        WAITALL(nr_, req, MPI_STATUSES_IGNORE);                                                    \
        for (int p_ = 0; p_ < size; p_++) {                                                        \
            if (p_ == rank)                                                                        \
                continue;                                                                          \
            const uint64_t *b_ = &rbuf[(size_t)p_ * (nupd + 1)];                                   \
            for (uint64_t k_ = 0; k_ < b_[0] && k_ < (uint64_t)nupd; k_++)                        \
                ra_apply(b_[1 + k_]);                                                              \
        }                                                                                          \
    } while (0)

static double ra_run(long iters, int pmpi)
{
    PMPI_Barrier(ra_bare);
    double t0 = MPI_Wtime();
    if (pmpi)
        for (long i = 0; i < iters; i++)
            RA_ITER(PMPI_Irecv, PMPI_Isend, PMPI_Waitall, ra_bare);
    else
        for (long i = 0; i < iters; i++)
            RA_ITER(MPI_Irecv, MPI_Isend, MPI_Waitall, MPI_COMM_WORLD);
    double s = MPI_Wtime() - t0;
    PMPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, ra_bare);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? atol(argv[1]) : 2000;
    int repeats = argc > 2 ? atoi(argv[2]) : 31;
    nupd = argc > 3 ? atoi(argv[3]) : 64;
    if (iters < 1 || repeats < 1 || nupd < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: randomaccess [iterations [repeats [updates]]] (at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    table = calloc((size_t)1 << RA_LOCAL_BITS, sizeof *table);
    sbuf = calloc((size_t)size * (size_t)(nupd + 1), sizeof *sbuf);
    rbuf = calloc((size_t)size * (size_t)(nupd + 1), sizeof *rbuf);
    req = calloc(2 * (size_t)size, sizeof *req);
    double *v = malloc(4 * (size_t)repeats * sizeof *v);
    if (!table || !sbuf || !rbuf || !req || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    ran = 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1);
    PMPI_Comm_dup(MPI_COMM_WORLD, &ra_bare);
    ra_run(iters / 10 + 1, 0);
    ra_run(iters / 10 + 1, 1);
    double *per = v, *base = v + repeats, *ratio = v + 2 * repeats, *diff = v + 3 * repeats;
    for (int r = 0; r < repeats; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int pmpi = (k + r) % 2;
            t[pmpi] = ra_run(iters, pmpi);
        }
        per[r] = t[0] / (double)iters / nupd * 1e9;
        base[r] = t[1] / (double)iters / nupd * 1e9;
        ratio[r] = t[0] / t[1];
        diff[r] = (t[0] - t[1]) / (double)iters * 1e9;
    }
    uint64_t check = 0;
    for (size_t i = 0; i < (size_t)1 << RA_LOCAL_BITS; i++)
        check ^= table[i];
    if (rank == 0)
        printf("randomaccess ns_per_update=%.3f pmpi_ns_per_update=%.3f ratio=%.4f added_ns_per_iter=%.2f "
               "calls_per_iter=%d iterations=%ld repeats=%d updates=%d ranks=%d check=%llx\n",
               ra_median(per, repeats), ra_median(base, repeats), ra_median(ratio, repeats),
               ra_median(diff, repeats), 2 * (size - 1) + 1, iters, repeats, nupd, size,
               (unsigned long long)check);
    free(v);
    free(req);
    free(rbuf);
    free(sbuf);
    free(table);
    PMPI_Comm_free(&ra_bare);
    MPI_Finalize();
    return 0;
}
