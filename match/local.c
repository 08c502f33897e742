/* match/local.c — the rank-local steps of matching at MPI_Finalize (see
 * match/local.h; the wait definitions and the propagation are described at
 * the top of match/exchange.c, which calls these between its messages).
 * Nothing here calls MPI or depends on the number of ranks: the work is
 * proportional to this rank's records and to what its partners sent it,
 * which is what bench/match_sim.c measures. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "match/clock.h"
#include "match/local.h"
#include "match/measured.h"
#include "state/clock.h"
#include "state/prefault.h"

struct wp_mwire wp_mwire_of(const struct wp_mrec *r)
{
    return (struct wp_mwire){r->chan,
                             r->k,
                             wp_match_ref_ns(r->side ? r->post : r->t0),
                             wp_match_ref_ns(r->t0),
                             wp_match_ref_ns(r->t1),
                             r->cause,
                             r->side,
                             r->lr};
}

/* --- the partners' records -------------------------------------------------------------- */

static size_t wp_wkey(uint64_t chan, uint64_t k, uint32_t side)
{
    return (size_t)wp_mix64(chan ^ wp_mix64(k * 2 + side));
}

void wp_wtab_build(struct wp_wtab *t, const struct wp_mwire *in, size_t nin)
{
    *t = (struct wp_wtab){in, NULL, 0};
    size_t slots = 16;
    while (slots < 2 * nin)
        slots <<= 1;
    if (in && nin && (t->slot = wp_calloc_ready(slots, sizeof *t->slot)) != NULL) {
        t->mask = slots - 1;
        for (size_t i = 0; i < nin; i++) {
            size_t s = wp_wkey(in[i].chan, in[i].k, in[i].side) & t->mask;
            while (t->slot[s])
                s = (s + 1) & t->mask;
            t->slot[s] = (uint32_t)(i + 1);
        }
    }
}

void wp_wtab_free(struct wp_wtab *t)
{
    free(t->slot);
    t->slot = NULL;
}

const struct wp_mwire *wp_wfind(const struct wp_wtab *t, uint64_t chan, uint64_t k, uint32_t side)
{
    if (t->slot == NULL)
        return NULL;
    for (size_t i = wp_wkey(chan, k, side) & t->mask;; i = (i + 1) & t->mask) {
        uint32_t s = t->slot[i];
        if (s == 0)
            return NULL;
        const struct wp_mwire *w = &t->v[s - 1];
        if (w->chan == chan && w->k == k && w->side == side)
            return w;
    }
}

/* --- the waits' receive records --------------------------------------------------------- */

static void wp_itab_put(struct wp_itab *t, uint64_t chan, uint64_t k, long inst)
{
    size_t i = wp_wkey(chan, k, 1) & t->mask;
    while (t->chan[i] && !(t->chan[i] == chan && t->k[i] == k))
        i = (i + 1) & t->mask;
    t->chan[i] = chan, t->k[i] = k, t->inst[i] = inst;
}

static long wp_itab_get(const struct wp_itab *t, uint64_t chan, uint64_t k)
{
    if (t->chan == NULL || chan == 0)
        return -1;
    for (size_t i = wp_wkey(chan, k, 1) & t->mask; t->chan[i]; i = (i + 1) & t->mask)
        if (t->chan[i] == chan && t->k[i] == k)
            return t->inst[i];
    return -1;
}

/* --- matching ------------------------------------------------------------------------- */

/* A send's predecessor, as its record names it (wp_mprev). */
struct wp_pkey {
    uint64_t chan, k;
};

void wp_match_local(const struct wp_mrec *recs, size_t nrec, const struct wp_wtab *tab, struct wp_mlocal *m)
{
    memset(m, 0, sizeof *m);
    /* The Late Sender waits, resolved by the propagation; the sends whose
     * receivers waited, which tell them how late their predecessor made
     * them. */
    size_t nw = 0, nps = 0;
    struct wp_winst *wi = wp_malloc_ready((nrec ? nrec : 1) * sizeof *wi);
    struct wp_psend *ps = wp_malloc_ready((nrec ? nrec : 1) * sizeof *ps);
    m->nomem = wi == NULL || ps == NULL;
    /* pred (channel, number) of each psend, resolved to a wp_winst once
     * all are known. */
    struct wp_pkey *pk = wp_malloc_ready((nrec ? nrec : 1) * sizeof *pk);
    for (size_t i = 0; i < nrec;) {
        const struct wp_mrec *r = &recs[i];
        /* A run of records of one completion call is one instance. */
        size_t j = i + 1;
        if (r->call)
            while (j < nrec && recs[j].call == r->call)
                j++;
        int matched = 0, cause_peer = -1;
        uint64_t wait = 0, dur_all = 0, cause = 0, wchan = 0, wk = 0;
        for (size_t q = i; q < j; q++) {
            const struct wp_mrec *x = &recs[q];
            const struct wp_mwire *w = wp_wfind(tab, x->chan, x->k, x->side ? 0 : 1);
            if (w == NULL)
                continue;
            /* The wait this rank's call made the partner take: its own
             * computation before the call is then a cause. */
            double p0 = w->t0, p1 = w->t1, mine = wp_match_ref_ns(x->side ? x->post : x->t0);
            if (x->side == 0 ? mine > p0 : (w->lr && p1 >= mine && mine > p0))
                wp_cause_used(x->cause);
            if (x->side == 0 && mine > p0 && ps && pk && wi) {
                ps[nps] = (struct wp_psend){x->chan, x->k, x->peer, 0, -1};
                pk[nps++] = (struct wp_pkey){x->pchan, x->pk};
            }
            if (x->side == 0 && !x->lr)
                continue;
            double t0 = wp_match_ref_ns(x->t0), t1 = wp_match_ref_ns(x->t1);
            uint64_t dur = wp_ticks_duration_ns(x->t1 > x->t0 ? x->t1 - x->t0 : 0), one;
            if (x->side) {
                /* A message sent after its receive returned was not that
                 * receive's: the numbering of the channel went wrong (a
                 * wildcard receive that could not be numbered).  The
                 * clocks' alignment errs by up to half a round trip of its
                 * ping-pong (tens of microseconds on a loaded node), so
                 * only a gap beyond 1 ms counts; a smaller one is a late
                 * sender whose message came as the receive ended. */
                if (w->t > t1 + 1e6) {
                    m->inconsistent++;
                    continue;
                }
                one = wp_match_clip(w->t - t0, dur);
            } else {
                one = t1 >= w->t ? wp_match_clip(w->t - t0, dur) : 0;
            }
            matched = 1;
            if (one > wait) {
                wait = one;
                cause = w->cause;
                cause_peer = x->peer;
                wchan = x->chan, wk = x->k;
            }
            if (dur > dur_all)
                dur_all = dur;
        }
        if (r->side == 0 && !r->lr) {
            i = j;
            continue;
        }
        wp_measured_add(&r->cat, r->first, r->k >> WP_MATCH_BLOCK_LOG2, matched, wait, dur_all);
        if (wait > 0 && cause_peer >= 0) {
            if (r->side && wi && ps)
                wi[nw++] = (struct wp_winst){.chan = wchan, .k = wk, .cat = r->cat, .wait = (double)wait,
                                             .delayer = cause_peer, .cause = cause, .first = i, .last = j};
            else
                wp_cause_add(&r->cat, r->side ? WP_PAT_LATE_SENDER : WP_PAT_LATE_RECEIVER, cause_peer, cause,
                             wait * wp_match_weight(r->k, wp_match_dense_log2), 0);
        }
        i = j;
    }

    /* Every receive record of a wait stands for it: a send names its
     * predecessor by any of them. */
    struct wp_itab it = {0};
    size_t islots = 16;
    while (islots < 2 * nrec)
        islots <<= 1;
    it.chan = wp_calloc_ready(islots, sizeof *it.chan);
    it.k = wp_malloc_ready(islots * sizeof *it.k);
    it.inst = wp_malloc_ready(islots * sizeof *it.inst);
    if (it.chan && it.k && it.inst) {
        it.mask = islots - 1;
        for (size_t i = 0; i < nw; i++)
            for (size_t q = wi[i].first; q < wi[i].last; q++)
                wp_itab_put(&it, recs[q].chan, recs[q].k, (long)i);
    } else {
        free(it.chan);
        it.chan = NULL;
    }
    for (size_t i = 0; i < nps; i++)
        ps[i].pred = wp_itab_get(&it, pk[i].chan, pk[i].k);
    free(pk);
    m->wi = wi, m->nw = nw, m->ps = ps, m->nps = nps, m->it = it;
}

void wp_mlocal_free(struct wp_mlocal *m)
{
    free(m->it.chan);
    free(m->it.k);
    free(m->it.inst);
    free(m->wi);
    free(m->ps);
    memset(m, 0, sizeof *m);
}

/* --- propagation ------------------------------------------------------------------------ */

static int wp_term_cmp(const void *a, const void *b)
{
    const struct wp_term *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Counted as causes (count set), and kept (the largest WP_TERMS, scaled
 * back to the whole wait) for the waits it propagates to. */
static void wp_resolve_(struct wp_winst *w, double pwait, const struct wp_term *p, uint32_t np, int count)
{
    double prop = pwait < w->wait ? pwait : w->wait;
    if (!(prop > 0) || np == 0)
        prop = 0;
    struct wp_term all[WP_TERMS + 1];
    int n = 0;
    all[n++] = (struct wp_term){w->delayer, 0, w->cause, w->wait - prop};
    double psum = 0;
    for (uint32_t i = 0; i < np && i < WP_TERMS; i++)
        psum += p[i].ns;
    /* What the wait counts for among its category's causes (measured.c);
     * the terms passed on stay one instance's. */
    double wt = (double)wp_match_weight(w->k, wp_match_dense_log2);
    for (uint32_t i = 0; prop > 0 && psum > 0 && i < np && i < WP_TERMS; i++) {
        double part = prop * p[i].ns / psum;
        if (count)
            wp_cause_add(&w->cat, WP_PAT_LATE_SENDER, p[i].rank, p[i].cause, (uint64_t)(part * wt + 0.5), 1);
        int j = 0;
        while (j < n && !(all[j].rank == p[i].rank && all[j].cause == p[i].cause))
            j++;
        if (j == n)
            all[n++] = (struct wp_term){p[i].rank, 0, p[i].cause, 0};
        all[j].ns += part;
    }
    if (count && w->wait - prop > 0)
        wp_cause_add(&w->cat, WP_PAT_LATE_SENDER, w->delayer, w->cause, (uint64_t)((w->wait - prop) * wt + 0.5),
                     0);
    qsort(all, (size_t)n, sizeof *all, wp_term_cmp);
    w->nt = n < WP_TERMS ? n : WP_TERMS;
    double kept = 0;
    for (int i = 0; i < w->nt; i++)
        kept += all[i].ns;
    for (int i = 0; i < w->nt; i++) {
        w->t[i] = all[i];
        w->t[i].ns = kept > 0 ? all[i].ns * w->wait / kept : 0;
    }
    w->resolved = 1;
}

void wp_resolve(struct wp_winst *w, double pwait, const struct wp_term *p, uint32_t np)
{
    wp_resolve_(w, pwait, p, np, 1);
}

static int wp_psend_by_peer(const void *a, const void *b)
{
    const struct wp_psend *x = a, *y = b;
    return (x->peer > y->peer) - (x->peer < y->peer);
}

void wp_prop_sort(struct wp_mlocal *m)
{
    qsort(m->ps, m->nps, sizeof *m->ps, wp_psend_by_peer);
}

size_t wp_prop_out(struct wp_mlocal *m, struct wp_pwire *out, int *peer)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nps; i++) {
        struct wp_psend *s = &m->ps[i];
        if (s->sent || (s->pred >= 0 && !m->wi[s->pred].resolved))
            continue;
        struct wp_pwire *x = &out[n];
        memset(x, 0, sizeof *x);
        x->chan = s->chan, x->k = s->k;
        if (s->pred >= 0) {
            const struct wp_winst *p = &m->wi[s->pred];
            x->wait = p->wait;
            x->nt = (uint32_t)p->nt;
            memcpy(x->t, p->t, sizeof x->t);
        }
        peer[n++] = s->peer;
        s->sent = 1;
    }
    return n;
}

void wp_prop_in(struct wp_mlocal *m, const struct wp_pwire *in, size_t nin)
{
    for (size_t i = 0; i < nin; i++) {
        long j = wp_itab_get(&m->it, in[i].chan, in[i].k);
        struct wp_winst *w = j >= 0 ? &m->wi[j] : NULL;
        if (w && !w->resolved && w->chan == in[i].chan && w->k == in[i].k)
            wp_resolve(w, in[i].wait, in[i].t, in[i].nt < WP_TERMS ? in[i].nt : WP_TERMS);
    }
}

long long wp_prop_open(const struct wp_mlocal *m)
{
    long long open = 0;
    for (size_t i = 0; i < m->nps; i++)
        open += !m->ps[i].sent;
    for (size_t i = 0; i < m->nw; i++)
        open += !m->wi[i].resolved;
    return open;
}

void wp_prop_direct(struct wp_mlocal *m)
{
    for (size_t i = 0; i < m->nw; i++)
        if (!m->wi[i].resolved)
            wp_resolve(&m->wi[i], 0, NULL, 0);
}

/* --- propagation over gathered waits ---------------------------------------------------- */

size_t wp_prop_pack(const struct wp_mlocal *m, struct wp_gprop *blk, size_t cap)
{
    /* Each record makes at most one wait or one send, so a block of one
     * more than the records fits; one that does not fit (never, by that
     * count) sends nothing, and its waits end as direct. */
    blk[0] = (struct wp_gprop){0};
    if (1 + m->nw + m->nps > cap)
        return 1;
    blk[0] = (struct wp_gprop){.chan = m->nw, .k = m->nps};
    size_t n = 1;
    for (size_t i = 0; i < m->nw; i++) {
        const struct wp_winst *w = &m->wi[i];
        blk[n++] = (struct wp_gprop){w->chan, w->k, w->cause, w->wait, w->delayer, 0};
    }
    for (size_t i = 0; i < m->nps; i++) {
        const struct wp_psend *x = &m->ps[i];
        blk[n++] = (struct wp_gprop){x->chan, x->k, 0, 0, (int32_t)x->pred, x->peer};
    }
    return n;
}

/* A wait's key: the receiving rank and the record that decided it, which
 * is what a send's answer names (wp_prop_in). */
static size_t wp_gkey(int32_t rank, uint64_t chan, uint64_t k)
{
    return (size_t)wp_mix64(wp_wkey(chan, k, 1) ^ wp_mix64((uint64_t)(uint32_t)rank));
}

/* What wp_prop_gathered's rounds share: the gathered waits w (wrank[g]:
 * whose), this rank's own among them from mine on (m->wi, whose causes
 * count), the sends waiting for each wait (dep, cut by dep_at), and the
 * sends made ready for the next round (next[0..nnext)). */
struct wp_gctx {
    struct wp_mlocal *m;
    int me;
    size_t mine;
    struct wp_winst *w;
    const int32_t *wrank;
    const size_t *dep_at;
    const long *dep;
    size_t *next, nnext, open_w;
};

/* Resolve gathered wait g from its predecessor's terms (this rank's own
 * through wp_resolve, which counts its causes) and make the sends that
 * waited for it ready. */
static void wp_gresolve(struct wp_gctx *x, size_t g, double pwait, const struct wp_term *p, uint32_t np)
{
    if (x->wrank[g] == x->me && x->m->wi) {
        struct wp_winst *own = &x->m->wi[g - x->mine];
        wp_resolve(own, pwait, p, np);
        x->w[g].nt = own->nt;
        memcpy(x->w[g].t, own->t, sizeof x->w[g].t);
        x->w[g].resolved = 1;
    } else {
        wp_resolve_(&x->w[g], pwait, p, np, 0);
    }
    x->open_w--;
    for (size_t d = x->dep_at[g]; d < x->dep_at[g + 1]; d++)
        x->next[x->nnext++] = (size_t)x->dep[d];
}

/* The rounds of match/exchange.c's wp_propagate, run for all ranks in one
 * process: the same answers, delivered in the same rounds, so every wait is
 * resolved exactly as the messages would resolve it and the round count is
 * the same.  Work and memory are proportional to the gathered waits and
 * sends (each send is looked at once, when its predecessor is resolved),
 * not to the rounds. */
int wp_prop_gathered(struct wp_mlocal *m, int me, const struct wp_gprop *all, int nranks, size_t blk,
                     uint64_t cap, uint64_t *rounds)
{
    size_t nw = 0, ns = 0;
    for (int q = 0; q < nranks; q++) {
        nw += (size_t)all[(size_t)q * blk].chan;
        ns += (size_t)all[(size_t)q * blk].k;
    }
    size_t slots = 16;
    while (slots < 2 * nw)
        slots <<= 1;
    struct wp_winst *w = wp_calloc_ready(nw ? nw : 1, sizeof *w);
    int32_t *wrank = wp_malloc_ready((nw ? nw : 1) * sizeof *wrank);
    long *spred = wp_malloc_ready((ns ? ns : 1) * sizeof *spred), *dep = wp_malloc_ready((ns ? ns : 1) * sizeof *dep);
    size_t *dep_at = wp_calloc_ready(nw + 1, sizeof *dep_at), *cur = wp_malloc_ready((ns ? ns : 1) * sizeof *cur),
           *next = wp_malloc_ready((ns ? ns : 1) * sizeof *next);
    uint32_t *tab = wp_calloc_ready(slots, sizeof *tab);
    const struct wp_gprop **sp = wp_malloc_ready((ns ? ns : 1) * sizeof *sp);
    int ok = w && wrank && spred && dep && dep_at && cur && next && tab && sp;
    size_t mine = 0; /* this rank's first wait among all */
    if (ok) {
        size_t iw = 0, is = 0;
        for (int q = 0; q < nranks; q++) {
            const struct wp_gprop *b = &all[(size_t)q * blk];
            size_t qw = (size_t)b[0].chan, qs = (size_t)b[0].k, base = iw;
            if (q == me)
                mine = base;
            for (size_t i = 0; i < qw; i++, iw++) {
                const struct wp_gprop *x = &b[1 + i];
                w[iw] = (struct wp_winst){.chan = x->chan, .k = x->k, .wait = x->wait, .delayer = x->a,
                                          .cause = x->cause};
                wrank[iw] = q;
                size_t h = wp_gkey(q, x->chan, x->k) & (slots - 1);
                while (tab[h])
                    h = (h + 1) & (slots - 1);
                tab[h] = (uint32_t)(iw + 1);
            }
            for (size_t i = 0; i < qs; i++, is++) {
                sp[is] = &b[1 + qw + i];
                spred[is] = sp[is]->a >= 0 && (size_t)sp[is]->a < qw ? (long)(base + (size_t)sp[is]->a) : -1;
                if (spred[is] >= 0)
                    dep_at[spred[is] + 1]++;
            }
        }
        /* The sends that wait for each wait, as one array cut by dep_at. */
        for (size_t g = 0; g < nw; g++)
            dep_at[g + 1] += dep_at[g];
        size_t *fill = wp_calloc_ready(nw ? nw : 1, sizeof *fill);
        ok = fill != NULL;
        for (size_t s = 0; ok && s < ns; s++)
            if (spred[s] >= 0)
                dep[dep_at[spred[s]] + fill[spred[s]]++] = (long)s;
        free(fill);
    }
    if (ok) {
        struct wp_gctx x = {m, me, mine, w, wrank, dep_at, dep, next, 0, nw};
        size_t ncur = 0, open_s = ns;
        for (size_t s = 0; s < ns; s++)
            if (spred[s] < 0)
                cur[ncur++] = s;
        uint64_t round = 0;
        for (;; round++) {
            x.nnext = 0;
            /* Every ready send answers; its predecessor was resolved
             * before this round, as a message's content is fixed when it
             * is sent. */
            for (size_t i = 0; i < ncur; i++) {
                size_t s = cur[i];
                const struct wp_gprop *sd = sp[s];
                open_s--;
                size_t h = wp_gkey(sd->b, sd->chan, sd->k) & (slots - 1);
                long g = -1;
                for (; tab[h]; h = (h + 1) & (slots - 1)) {
                    const struct wp_winst *c = &w[tab[h] - 1];
                    if (c->chan == sd->chan && c->k == sd->k && wrank[tab[h] - 1] == sd->b) {
                        g = (long)tab[h] - 1;
                        break;
                    }
                }
                if (g < 0 || w[g].resolved)
                    continue;
                if (spred[s] >= 0) {
                    const struct wp_winst *p = &w[spred[s]];
                    wp_gresolve(&x, (size_t)g, p->wait, p->t, (uint32_t)(p->nt < WP_TERMS ? p->nt : WP_TERMS));
                } else {
                    wp_gresolve(&x, (size_t)g, 0, NULL, 0);
                }
            }
            if (x.open_w + open_s == 0 || round >= cap)
                break;
            if (ncur == 0)
                /* Nothing moved: the waits still open wait for senders
                 * that will never tell (dropped records): direct. */
                for (size_t g = 0; g < nw; g++)
                    if (!w[g].resolved)
                        wp_gresolve(&x, g, 0, NULL, 0);
            size_t *t = cur;
            cur = x.next, x.next = t;
            ncur = x.nnext;
        }
        next = x.next; /* the buffers may have been swapped: both are freed below */
        *rounds = round + 1;
        for (size_t i = 0; i < m->nps; i++)
            m->ps[i].sent = 1;
    }
    free(w);
    free(wrank);
    free(spred);
    free(dep);
    free(dep_at);
    free(cur);
    free(next);
    free(tab);
    free(sp);
    return ok ? 0 : -1;
}
