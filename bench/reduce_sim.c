/* bench/reduce_sim.c — the cross-rank reduction of the wait-state table
 * (fallback/wsreduce.c, the same code the finalize step runs) for a job of
 * many ranks, simulated in one process with synthetic per-rank data.
 *
 *   reduce_sim [RANKS] [SHARED_SITES] [VARIANT_SITES]
 *
 * Each rank has SHARED_SITES call sites that every rank has (an SPMD code's
 * MPI calls), with two size classes each (two rows that the rank combines),
 * and one site of VARIANT_SITES variants chosen by rank (code paths only
 * some ranks take).  Waits are drawn from a hash of (rank, site).
 *
 * The tree is walked exactly as wp_agg_tree in fallback/estimate.c: rank r
 * merges, in step k, the list of rank r + 2^k (holding ranks r + 2^k ..
 * r + 2^(k+1) - 1) unless bit k of r is set, when it sends.  Depth first,
 * so only O(log P) lists are alive at once, as in the real job where each
 * rank holds only its own.
 *
 * Printed: the total CPU time of all merges (what the job spends summed
 * over ranks), the critical path (the finish time of rank 0 when every rank
 * runs in parallel and messages cost nothing: each rank starts a merge when
 * both its list and the child's are ready), the largest list any rank sends
 * or holds (bytes), the peak bytes of lists alive in this process, the
 * process's peak resident size, and a check of the result against a direct
 * computation (calls and nranks per site, the minimum and maximum rank).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fallback/wsreduce.h"

static long P, SHARED, VARIANTS;
static double cpu_total;
static size_t max_list, live_bytes, peak_live;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "reduce_sim: out of memory\n");
        exit(1);
    }
    live_bytes += n;
    if (live_bytes > peak_live)
        peak_live = live_bytes;
    return p;
}

static void xfree(void *p, size_t n)
{
    free(p);
    live_bytes -= n;
}

static uint64_t wait_ns(long rank, long site)
{
    return mix((uint64_t)rank * 1000003u + (uint64_t)site) % 1000000000u; /* up to 1 s */
}

/* The rows of one rank, made into its list as estimate.c does. */
static struct wp_agg *rank_list(long r, size_t *n)
{
    size_t rows = (size_t)SHARED * 2 + 1;
    struct wp_agg *v = xmalloc(rows * sizeof *v);
    size_t k = 0;
    for (long s = 0; s < SHARED; s++)
        for (int half = 0; half < 2; half++) {
            struct wp_agg *a = &v[k++];
            memset(a, 0, sizeof *a);
            snprintf(a->site, sizeof a->site, "solver_step_%ld (solver.c:%ld)", s, 100 + s);
            a->fn = (int32_t)(s % 7 + 1);
            a->pattern = (int32_t)(s % 5 + 1);
            a->calls = 10;
            a->time_ns = wait_ns(r, s) / 2 + 1000;
            a->wait_ns = wait_ns(r, s) / 2;
            a->nranks = 1;
            a->wmin = a->wmax = a->wait_ns * 1e-9;
            a->rmin = a->rmax = r;
        }
    struct wp_agg *a = &v[k++];
    memset(a, 0, sizeof *a);
    long var = VARIANTS ? r % VARIANTS : 0;
    snprintf(a->site, sizeof a->site, "boundary_case_%ld (boundary.c:%ld)", var, 10 + var);
    a->fn = 3;
    a->pattern = 1;
    a->calls = 1;
    a->time_ns = a->wait_ns = wait_ns(r, 100000 + var);
    a->nranks = 1;
    a->wmin = a->wmax = a->wait_ns * 1e-9;
    a->rmin = a->rmax = r;
    *n = wp_agg_normalize(v, k);
    /* Keep only what the list holds, so the byte counts are exact. */
    struct wp_agg *w = xmalloc(*n * sizeof *w);
    memcpy(w, v, *n * sizeof *w);
    xfree(v, rows * sizeof *v);
    return w;
}

/* The list rank r holds after merging all steps below limit; *ready is the
 * time it is ready (critical path, in seconds of merge work). */
static struct wp_agg *subtree(long r, long limit, size_t *n, double *ready)
{
    double t0 = now();
    size_t nc;
    struct wp_agg *cur = rank_list(r, &nc);
    double t = now() - t0;
    cpu_total += t;
    for (long mask = 1; mask < limit && r + mask < P; mask <<= 1) {
        size_t nin;
        double child_ready;
        struct wp_agg *in = subtree(r + mask, mask, &nin, &child_ready);
        if (nin * sizeof *in > max_list)
            max_list = nin * sizeof *in;
        struct wp_agg *out = xmalloc((nc + nin) * sizeof *out);
        double m0 = now();
        size_t no = wp_agg_merge(cur, nc, in, nin, out);
        double dt = now() - m0;
        /* Give back the room merged duplicates did not need. */
        live_bytes -= (nc + nin - no) * sizeof *out;
        cpu_total += dt;
        t = (t > child_ready ? t : child_ready) + dt;
        xfree(in, nin * sizeof *in);
        xfree(cur, nc * sizeof *cur);
        cur = out;
        nc = no;
    }
    if (nc * sizeof *cur > max_list)
        max_list = nc * sizeof *cur;
    *n = nc;
    *ready = t;
    return cur;
}

int main(int argc, char **argv)
{
    P = argc > 1 ? atol(argv[1]) : 100000;
    SHARED = argc > 2 ? atol(argv[2]) : 20;
    VARIANTS = argc > 3 ? atol(argv[3]) : 64;
    if (P < 1 || SHARED < 0 || VARIANTS < 1) {
        fprintf(stderr, "usage: reduce_sim [RANKS] [SHARED_SITES] [VARIANT_SITES]\n");
        return 2;
    }
    long limit = 1;
    while (limit < P)
        limit <<= 1;
    double w0 = now();
    size_t n;
    double crit;
    struct wp_agg *res = subtree(0, limit, &n, &crit);
    double wall = now() - w0;
    /* Check against a direct computation. */
    int ok = n == (size_t)(SHARED + (VARIANTS < P ? VARIANTS : P));
    for (size_t i = 0; i < n && ok; i++) {
        const struct wp_agg *a = &res[i];
        long s = -1, var = -1;
        if (sscanf(a->site, "solver_step_%ld", &s) == 1) {
            ok = a->nranks == (uint64_t)P && a->calls == (uint64_t)P * 20;
            double mn = 2, mx = -1;
            long rmn = -1, rmx = -1;
            for (long r = 0; r < P; r++) {
                double w = (wait_ns(r, s) / 2 * 2) * 1e-9;
                if (w < mn)
                    mn = w, rmn = r;
                if (w > mx)
                    mx = w, rmx = r;
            }
            ok = ok && a->rmin == rmn && a->rmax == rmx;
        } else if (sscanf(a->site, "boundary_case_%ld", &var) == 1) {
            uint64_t want = (uint64_t)(P / VARIANTS + (var < P % VARIANTS));
            ok = a->nranks == want;
        } else {
            ok = 0;
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("ranks=%ld shared_sites=%ld variant_sites=%ld steps=%d\n", P, SHARED, VARIANTS,
           __builtin_ctzl((unsigned long)limit));
    printf("result_records=%zu result_bytes=%zu largest_list_bytes=%zu\n", n, n * sizeof *res, max_list);
    printf("cpu_all_merges_s=%.3f critical_path_s=%.6f wall_s=%.3f\n", cpu_total, crit, wall);
    printf("peak_live_list_bytes=%zu max_rss_kib=%ld\n", peak_live, ru.ru_maxrss);
    printf("check=%s\n", ok ? "ok" : "MISMATCH");
    xfree(res, n * sizeof *res);
    return ok ? 0 : 1;
}
