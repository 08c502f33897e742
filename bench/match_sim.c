/* bench/match_sim.c — the rank-local work of matching at MPI_Finalize for
 * one rank of a P-rank halo exchange, through the library's own code
 * (match/local.c), without MPI: what one rank computes does not depend on
 * P, only on its own records and its partners'.
 *
 * usage: match_sim P [iterations [neighbours [rate [rounds [repeats]]]]]
 *        (defaults 20000, 2, 16, 8, 5)
 *
 * The simulated rank (P / 2) exchanges one message with each of its
 * neighbours per iteration, MPI_Irecv and MPI_Isend to each, then one
 * MPI_Waitall: 2 neighbours on a ring of P ranks, 4 on a periodic 2-D grid
 * of P ranks (the most nearly square factorisation).  Its records are the
 * ones the wrappers would keep at WAITPROF_MATCH=rate: the instances
 * wp_match_chosen picks, with the rate halved (as match/numbering.c does
 * when its buffer fills) until they fit in the default buffer, a quarter
 * of WAITPROF_MEMORY (4 MiB).  Without thinning (WAITPROF_MATCH_DENSE=0,
 * wp_match_dense_log2 left 0): the most records a rank can hold, whose
 * cost per record is what this measures; thinning only makes a full
 * buffer rarer.  Its partners' records of the same
 * instances, which the exchange would bring, are made alike.  Entry times
 * carry a deterministic jitter of up to 3 µs per rank and iteration, so
 * that some receives wait for a late sender and some sends make their
 * partner wait; a send names the last receive of the iteration before as
 * its predecessor when that was recorded.
 *
 * Then, as wp_match_finalize does between its messages: the lookup table
 * of the partners' records (wp_wtab_build), the matching loop
 * (wp_match_local), and the propagation's local work for rounds rounds
 * (wp_prop_out, wp_prop_in, wp_prop_open; the partners' answers for this
 * rank's waits spread evenly over the rounds, each naming two terminal
 * delays), then the waits still open resolved as direct.  Each repeat
 * starts from the same records; times are the thread's CPU time, medians
 * over repeats.  One line:
 *   match_sim P=.. neighbours=.. rate=.. records=.. received=.. waits=..
 *     sends_waited=.. rounds=.. table_ns=.. match_ns=.. prop_ns=.. total_ns=..
 *     ns_per_record=.. bytes=.. rss_kb=.. rss_base_kb=.. partners=..
 *     rec_bytes=.. check=ok|FAIL
 * bytes: the arrays the finalize step allocates for these records (the
 * records themselves, the wires received, the lookup tables, the waits and
 * sends); rss_kb the process's peak resident set (VmHWM), rss_base_kb the
 * same before the records were made.  check: every instance matched, none
 * inconsistent, every wait resolved and every send told.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "match/clock.h"
#include "match/local.h"
#include "match/measured.h"
#include "state/clock.h"

#define SIM_ITER_NS 10000.0 /* one iteration of the halo exchange */
#define SIM_JITTER_NS 3000
#define SIM_LAT_NS 500.0
#define SIM_BUFFER (4u << 20)

static uint64_t sim_comm_id = 0x5741495450524f46ull; /* MPI_COMM_WORLD's, as numbering gives it */
static uint64_t sim_t0;                             /* ticks of time 0 */

/* CPU time of this thread: the machine is shared, and a step that was
 * descheduled would otherwise count the other processes' time. */
static double sim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long sim_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static int sim_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sim_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, sim_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A rank's deterministic lateness in iteration i, ns, by its place
 * relative to the simulated rank (who: the direction of a neighbour, or
 * the number of directions for the rank itself), not by its number: the
 * simulated rank then sees the same waits whatever P is, and only the
 * channels' and ranks' values differ. */
static double sim_jitter(int who, uint64_t i)
{
    return (double)(wp_mix64((uint64_t)(who + 1) * 0x100000001b3ull ^ i) % SIM_JITTER_NS);
}

/* Ticks of time ns: before calibration the library converts ticks to ns
 * one to one (state/clock.c), so this is exact. */
static uint64_t sim_ticks(double ns)
{
    return sim_t0 + (uint64_t)ns;
}

struct sim {
    int P, rank, nb, nbr[4];
    unsigned bits;
    uint64_t iters;
};

/* The neighbour in direction d (0..nb-1) of rank r, and the direction
 * opposite d. */
static int sim_neighbour(const struct sim *s, int r, int d, int px)
{
    if (s->nb == 2)
        return d == 0 ? (r + 1) % s->P : (r + s->P - 1) % s->P;
    int py = s->P / px, x = r % px, y = r / px;
    switch (d) {
    case 0: x = (x + 1) % px; break;
    case 1: x = (x + px - 1) % px; break;
    case 2: y = (y + 1) % py; break;
    default: y = (y + py - 1) % py; break;
    }
    return y * px + x;
}
static int sim_opposite(int d)
{
    return d ^ 1;
}

/* When a rank (who as in sim_jitter), in iteration i, enters its sends
 * and its MPI_Waitall. */
static double sim_send_ns(int who, uint64_t i)
{
    return (double)i * SIM_ITER_NS + 100 + sim_jitter(who, i);
}
static double sim_wait_ns(int who, uint64_t i)
{
    return (double)i * SIM_ITER_NS + 200 + sim_jitter(who, i);
}

/* This rank's records and its partners' wires at sampling exponent bits;
 * returns the number of records (wires: the same number). */
static size_t sim_make(const struct sim *s, unsigned bits, struct wp_mrec *rec, struct wp_mwire *wire,
                       size_t cap)
{
    size_t n = 0, nw = 0;
    const struct wp_mcat send_cat = {0x2000, 3, 1, 0}, recv_cat = {0x1000, 5, 1, 1};
    uint64_t pchan = 0, pk = 0;
    int r = s->rank;
    for (uint64_t i = 0; i < s->iters; i++) {
        if (!wp_match_chosen(i, bits, wp_match_dense_log2)) {
            /* The waitall of an unrecorded iteration breaks the link. */
            pchan = 0;
            continue;
        }
        if (n + 2 * (size_t)s->nb > cap)
            return SIZE_MAX;
        double mine_send = sim_send_ns(s->nb, i), mine_wait = sim_wait_ns(s->nb, i), exit = mine_wait;
        for (int d = 0; d < s->nb; d++) {
            double theirs = sim_send_ns(d, i) + SIM_LAT_NS;
            if (theirs > exit)
                exit = theirs;
        }
        for (int d = 0; d < s->nb; d++) {
            int p = s->nbr[d];
            uint64_t chan = wp_match_channel(sim_comm_id, r, p, d + 1);
            rec[n++] = (struct wp_mrec){.chan = chan, .k = i, .post = sim_ticks(mine_send),
                                        .t0 = sim_ticks(mine_send), .t1 = sim_ticks(mine_send),
                                        .cause = wp_mix64((uint64_t)r << 32 | 1) | 1, .pchan = pchan, .pk = pk,
                                        .cat = send_cat, .peer = p, .side = 0, .first = (uint8_t)wp_match_first(i)};
            /* The partner's receive of it: posted at the start of the
             * iteration, waited from its waitall's entry. */
            double pw = sim_wait_ns(d, i), pexit = pw > mine_send + SIM_LAT_NS ? pw : mine_send + SIM_LAT_NS;
            wire[nw++] = (struct wp_mwire){chan, i, wp_match_ref_ns(sim_ticks((double)i * SIM_ITER_NS)),
                                           wp_match_ref_ns(sim_ticks(pw)), wp_match_ref_ns(sim_ticks(pexit)),
                                           wp_mix64((uint64_t)p << 32 | 2) | 1, 1, 0};
        }
        for (int d = 0; d < s->nb; d++) {
            int p = s->nbr[d];
            uint64_t chan = wp_match_channel(sim_comm_id, p, r, sim_opposite(d) + 1);
            rec[n++] = (struct wp_mrec){.chan = chan, .k = i, .post = sim_ticks((double)i * SIM_ITER_NS),
                                        .t0 = sim_ticks(mine_wait), .t1 = sim_ticks(exit),
                                        .cause = wp_mix64((uint64_t)r << 32 | 2) | 1, .call = i + 1,
                                        .cat = recv_cat, .peer = p, .side = 1, .first = (uint8_t)wp_match_first(i)};
            double ps = sim_send_ns(d, i);
            wire[nw++] = (struct wp_mwire){chan, i, wp_match_ref_ns(sim_ticks(ps)), wp_match_ref_ns(sim_ticks(ps)),
                                           wp_match_ref_ns(sim_ticks(ps)), wp_mix64((uint64_t)p << 32 | 1) | 1, 0,
                                           0};
            pchan = chan, pk = i;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    struct sim s = {0};
    s.P = argc > 1 ? atoi(argv[1]) : 0;
    s.iters = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000;
    s.nb = argc > 3 ? atoi(argv[3]) : 2;
    unsigned rate = argc > 4 ? (unsigned)atoi(argv[4]) : 16;
    int rounds = argc > 5 ? atoi(argv[5]) : 8;
    int repeats = argc > 6 ? atoi(argv[6]) : 5;
    if (s.P < 2 || s.iters < 1 || (s.nb != 2 && s.nb != 4) || rate < 1 || rounds < 1 || repeats < 1) {
        fprintf(stderr, "usage: match_sim P [iterations [neighbours (2 or 4) [rate [rounds [repeats]]]]]\n");
        return 2;
    }
    long rss_base = sim_hwm_kb();
    sim_t0 = wp_ticks();
    s.rank = s.P / 2;
    int px = 1;
    for (int f = 1; (long)f * f <= s.P; f++)
        if (s.P % f == 0)
            px = f;
    if (s.nb == 4)
        px = s.P / px; /* the longer side along x */
    for (int d = 0; d < s.nb; d++)
        s.nbr[d] = sim_neighbour(&s, s.rank, d, px);
    unsigned bits = 0;
    while ((2u << bits) <= rate && bits < 30)
        bits++;
    /* The buffer of the wrappers: a quarter of the default WAITPROF_MEMORY. */
    size_t cap = SIM_BUFFER / sizeof(struct wp_mrec);
    struct wp_mrec *rec = malloc(cap * sizeof *rec);
    struct wp_mwire *wire = malloc(cap * sizeof *wire);
    if (rec == NULL || wire == NULL)
        return 1;
    size_t n;
    while ((n = sim_make(&s, bits, rec, wire, cap)) == SIZE_MAX)
        bits++;
    int npart = 0;
    for (int d = 0; d < s.nb; d++) {
        int dup = 0;
        for (int e = 0; e < d; e++)
            dup |= s.nbr[e] == s.nbr[d];
        npart += !dup;
    }

    double *tt = malloc(3 * (size_t)repeats * sizeof *tt);
    size_t nwaits = 0, nps = 0, bytes = 0;
    int ok = 1, used_rounds = 0;
    for (int rep = 0; rep < repeats; rep++) {
        memset(&wp_match_cnt, 0, sizeof wp_match_cnt);
        double a = sim_now_ns();
        struct wp_wtab tab;
        wp_wtab_build(&tab, wire, n);
        double b = sim_now_ns();
        struct wp_mlocal m;
        wp_match_local(rec, n, &tab, &m);
        double c = sim_now_ns();
        /* The partners' answers: for each wait, what its delayer's
         * predecessor cost it, with two terminal delays further along. */
        struct wp_pwire *ans = malloc((m.nw ? m.nw : 1) * sizeof *ans);
        struct wp_pwire *out = malloc((m.nps ? m.nps : 1) * sizeof *out);
        int *peer = malloc((m.nps ? m.nps : 1) * sizeof *peer);
        if (ans == NULL || out == NULL || peer == NULL || m.nomem)
            return 1;
        for (size_t i = 0; i < m.nw; i++) {
            const struct wp_winst *w = &m.wi[i];
            ans[i] = (struct wp_pwire){.chan = w->chan, .k = w->k, .wait = w->wait / 2, .nt = 2};
            ans[i].t[0] = (struct wp_term){w->delayer ^ 1, 0, 77, w->wait / 4};
            ans[i].t[1] = (struct wp_term){w->delayer ^ 2, 0, 78, w->wait / 4};
        }
        double d0 = sim_now_ns();
        wp_prop_sort(&m);
        int round = 0;
        size_t told = 0;
        for (;; round++) {
            wp_prop_out(&m, out, peer);
            /* Round j brings the answers j, j + rounds, j + 2 rounds, ... */
            size_t lo = m.nw * (size_t)round / (size_t)rounds, hi = m.nw * (size_t)(round + 1) / (size_t)rounds;
            if (round < rounds) {
                wp_prop_in(&m, ans + lo, hi - lo);
                told += hi - lo;
            }
            if (wp_prop_open(&m) == 0 || round >= rounds + 2)
                break;
        }
        wp_prop_direct(&m);
        double e = sim_now_ns();
        tt[rep] = b - a;
        tt[repeats + rep] = c - b;
        tt[2 * repeats + rep] = e - d0;
        for (size_t i = 0; i < m.nw; i++)
            ok &= m.wi[i].resolved;
        for (size_t i = 0; i < m.nps; i++)
            ok &= m.ps[i].sent;
        ok &= m.inconsistent == 0 && told == m.nw;
        /* Every receive and every send's partner record found: one
         * measured instance per receive call and none unmatched. */
        ok &= wp_match_cnt.unmatched == 0 && wp_match_cnt.matched == n / 2 / (size_t)s.nb;
        nwaits = m.nw, nps = m.nps, used_rounds = round + 1;
        size_t islots = 16;
        while (islots < 2 * n)
            islots <<= 1;
        bytes = n * sizeof(struct wp_mrec) + n * sizeof(struct wp_mwire) + (tab.mask + 1) * sizeof *tab.slot +
                n * (sizeof(struct wp_winst) + sizeof(struct wp_psend) + 2 * sizeof(uint64_t)) +
                islots * (2 * sizeof(uint64_t) + sizeof(long)) + m.nps * (sizeof(struct wp_pwire) + sizeof(int));
        free(ans);
        free(out);
        free(peer);
        wp_wtab_free(&tab);
        wp_mlocal_free(&m);
    }
    double tab_ns = sim_median(tt, repeats), match_ns = sim_median(tt + repeats, repeats),
           prop_ns = sim_median(tt + 2 * repeats, repeats);
    printf("match_sim P=%d neighbours=%d rate=%u records=%zu received=%zu waits=%zu sends_waited=%zu rounds=%d "
           "table_ns=%.0f match_ns=%.0f prop_ns=%.0f total_ns=%.0f ns_per_record=%.1f bytes=%zu rss_kb=%ld "
           "rss_base_kb=%ld partners=%d rec_bytes=%zu check=%s\n",
           s.P, s.nb, 1u << bits, n, n, nwaits, nps, used_rounds, tab_ns, match_ns, prop_ns,
           tab_ns + match_ns + prop_ns, (tab_ns + match_ns + prop_ns) / (double)(n ? n : 1), bytes, sim_hwm_kb(),
           rss_base, npart, sizeof(struct wp_mrec), ok ? "ok" : "FAIL");
    free(tt);
    free(rec);
    free(wire);
    return ok ? 0 : 1;
}
