/* match/exchange.c — matching: the collective batches' reductions and the
 * point-to-point records' exchange at MPI_Finalize.  See match/match.h.
 *
 * Wait definitions (Scalasca's, seed 002), per matched instance, all times
 * CLOCK_MONOTONIC nanoseconds (one clock on one node):
 * - Late Sender: a receive waited from w0 to w1 (the blocking receive's
 *   entry, or the entry of the completion call of a nonblocking one) for a
 *   message sent at s: max(0, s - w0), at most w1 - w0.
 * - Late Receiver: a blocking send from s0 to s1 whose receive was posted
 *   at p: when the send returned only after p (it waited for the receive:
 *   synchronous or rendezvous), max(0, p - s0), at most s1 - s0; else 0.
 * - Wait at NxN and at Barrier: the latest entry of all members minus the
 *   own entry; Late Broadcast: the root's entry minus the own entry (non-
 *   roots); Early Reduce: the latest non-root entry minus the root's entry
 *   (the root waits until the last contribution could have been sent; the
 *   minimum-duration estimate and the tests define it so too.  Scalasca's
 *   stricter form stops at the first non-root, which hides a reduction
 *   that waits for one late rank).  Each at most the call's own duration.
 * A completion call that completed several chosen receives waited for the
 * last of them: its wait is the longest of theirs.
 *
 * Propagation (seed 002's delay costs).  A Late Sender wait W of rank A
 * names the sender B and what B computed before its send.  When B's send
 * followed a recorded receive of B's that waited W' (the send's
 * predecessor, match/numbering.h), B was late by W' without computing
 * longer: min(W, W') of A's wait is propagated, and belongs to whatever
 * caused B's W'; the rest, W - min(W, W'), B caused directly.  Following
 * that back from wait to wait ends at terminal delays: rank and
 * computation pairs that were late without waiting.  A wait's terminal
 * delays (its direct part's cause, and its propagated part spread over its
 * predecessor's terminal delays in their proportions, the largest
 * WP_TERMS kept) are known once its predecessor's are, so they are
 * resolved in rounds after the matching: in each round, every send whose
 * predecessor is resolved (or that has none) tells its receiver the
 * predecessor's wait and terminal delays.  Predecessors precede their
 * successors in time, so the rounds end; a wait whose sender never tells
 * (its record was dropped) counts as direct.  The direct part is the
 * delayer's short-term cost, the propagated parts the terminal delays'
 * long-term costs.  Late Receiver waits and collective waits are counted
 * as direct: their delayers' previous waits are not followed. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "match/internal.h"
#include "match/match.h"
#include "format/format.h"
#include "state/functions.h"
#include "state/log.h"

/* --- point-to-point -------------------------------------------------------------------- */

/* What a record tells its partner: a send its entry, a receive its post. */
struct wp_mwire {
    uint64_t chan, k;
    double t;      /* ns in the common time base (match/clock.c): a send's entry,
                    * a receive's post */
    double t0, t1; /* a receive's wait; a blocking send's entry and exit */
    uint64_t cause; /* what the sender or receiver computed before the call */
    uint32_t side, lr;
};

#define WP_TAG_MATCH 7707

static int wp_by_peer(const void *a, const void *b)
{
    const struct wp_mrec *x = *(const struct wp_mrec *const *)a, *y = *(const struct wp_mrec *const *)b;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

/* The partners' records by (channel, number, side), open addressing. */
struct wp_wtab {
    struct wp_mwire *v;
    uint32_t *slot; /* index + 1; 0 free */
    size_t mask;
};

static size_t wp_wkey(uint64_t chan, uint64_t k, uint32_t side)
{
    return (size_t)wp_mix64(chan ^ wp_mix64(k * 2 + side));
}

static const struct wp_mwire *wp_wfind(const struct wp_wtab *t, uint64_t chan, uint64_t k, uint32_t side)
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

/* Send every element to its partner's rank (peer[i], sorted) and receive
 * the others': the nonblocking consensus of Hoefler et al. (synchronous
 * sends to the partners, receives of whatever arrives, and a nonblocking
 * barrier entered once the own sends are matched), so that no rank needs
 * to know who will send to it and nothing is gathered on one rank.  All
 * ranks call it together; a round's messages are all received before its
 * barrier completes, so rounds cannot mix.  Returns the received elements
 * (*nin set), or NULL with *nin 0 (*failed set when some were lost). */
static void *wp_nbx(MPI_Comm wcomm, int tag, const void *out, const int *peer, size_t n, size_t elsize,
                    size_t *nin, int *failed)
{
    *nin = 0;
    size_t npeers = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || peer[i] != peer[i - 1])
            npeers++;
    MPI_Request *reqs = malloc((npeers ? npeers : 1) * sizeof *reqs);
    if (reqs == NULL)
        *failed = 1;
    size_t np = 0;
    for (size_t i = 0; reqs && i < n;) {
        size_t j = i;
        while (j < n && peer[j] == peer[i])
            j++;
        if (PMPI_Issend((const char *)out + i * elsize, (int)((j - i) * elsize), MPI_BYTE, peer[i], tag, wcomm,
                        &reqs[np]) == MPI_SUCCESS)
            np++;
        i = j;
    }
    /* Whatever happened above, this rank takes part in the consensus, so
     * no other rank waits for it forever. */
    size_t cap = 1024, m = 0;
    char *in = malloc(cap * elsize);
    MPI_Request bar = MPI_REQUEST_NULL;
    int barrier = 0, done = 0;
    size_t sent = 0;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, wcomm, &flag, &st) == MPI_SUCCESS && flag) {
            int bytes = 0;
            PMPI_Get_count(&st, MPI_BYTE, &bytes);
            size_t k = (size_t)bytes / elsize;
            if (in && m + k > cap) {
                while (m + k > cap)
                    cap *= 2;
                char *g = realloc(in, cap * elsize);
                if (g == NULL)
                    free(in);
                in = g;
            }
            if (in) {
                PMPI_Recv(in + m * elsize, bytes, MPI_BYTE, st.MPI_SOURCE, tag, wcomm, MPI_STATUS_IGNORE);
                m += k;
            } else {
                /* No room: received and dropped (waitprof's communicator
                 * returns errors, so a truncation does not abort). */
                char one[256];
                PMPI_Recv(one, (int)sizeof one, MPI_BYTE, st.MPI_SOURCE, tag, wcomm, MPI_STATUS_IGNORE);
                *failed = 1;
            }
        }
        if (!barrier) {
            /* One test per send (MPI_Test, not MPI_Testall: GCC takes
             * MPICH's MPI_STATUSES_IGNORE for an empty array). */
            while (sent < np) {
                int f = 0;
                if (PMPI_Test(&reqs[sent], &f, MPI_STATUS_IGNORE) == MPI_SUCCESS && !f)
                    break;
                sent++;
            }
            if (sent == np && PMPI_Ibarrier(wcomm, &bar) == MPI_SUCCESS)
                barrier = 1;
        } else {
            PMPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        }
    }
    free(reqs);
    if (in == NULL)
        return NULL;
    *nin = m;
    return in;
}

/* Every record to its partner, as the partner needs it. */
static struct wp_mwire *wp_exchange(MPI_Comm wcomm, struct wp_mrec **byp, size_t nrec, size_t *nin)
{
    struct wp_mwire *out = malloc((nrec ? nrec : 1) * sizeof *out);
    int *peer = calloc(nrec ? nrec : 1, sizeof *peer);
    int failed = out == NULL || peer == NULL;
    size_t n = failed ? 0 : nrec;
    for (size_t j = 0; j < n; j++) {
        const struct wp_mrec *r = byp[j];
        out[j] = (struct wp_mwire){r->chan,
                                   r->k,
                                   wp_match_ref_ns(r->side ? r->post : r->t0),
                                   wp_match_ref_ns(r->t0),
                                   wp_match_ref_ns(r->t1),
                                   r->cause,
                                   r->side,
                                   r->lr};
        peer[j] = r->peer;
    }
    struct wp_mwire *in = wp_nbx(wcomm, WP_TAG_MATCH, out, peer, n, sizeof *out, nin, &failed);
    free(out);
    free(peer);
    if (failed) {
        free(in);
        *nin = 0;
        return NULL;
    }
    return in;
}

/* --- propagation ------------------------------------------------------------------------ */

#define WP_TERMS 4
#define WP_TAG_PROP 7708
#define WP_PROP_ROUNDS 4096

/* A terminal delay: a rank and what it computed, and the part of a wait
 * (ns) it caused. */
struct wp_term {
    int32_t rank;
    uint32_t pad;
    uint64_t cause;
    double ns;
};

/* A Late Sender wait of this rank, until its terminal delays are known. */
struct wp_winst {
    uint64_t chan, k; /* the record that decided its wait */
    size_t first, last; /* its records in wp_match_recs */
    struct wp_mcat cat;
    double wait;      /* ns */
    int32_t delayer;
    int resolved, nt;
    uint64_t cause;
    struct wp_term t[WP_TERMS];
};

/* What a send tells its receiver: its predecessor's wait and terminal
 * delays (their shares of it). */
struct wp_pwire {
    uint64_t chan, k;
    double wait;
    uint32_t nt, pad;
    struct wp_term t[WP_TERMS];
};

/* A matched send of this rank whose receiver waited. */
struct wp_psend {
    uint64_t chan, k;
    int32_t peer;
    int sent;
    long pred; /* its predecessor's wp_winst, -1: none that waited */
};

/* (channel, number) of this rank's receive records -> wp_winst index. */
struct wp_itab {
    uint64_t *chan, *k;
    long *inst;
    size_t mask;
};

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

static int wp_term_cmp(const void *a, const void *b)
{
    const struct wp_term *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Resolve a wait: its direct part (wait - propagated) to its delayer, its
 * propagated part over the predecessor's terminal delays p (shares of
 * pwait); counted as causes, and kept (the largest WP_TERMS, scaled back
 * to the whole wait) for the waits it propagates to. */
static void wp_resolve(struct wp_winst *w, double pwait, const struct wp_term *p, uint32_t np)
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
    for (uint32_t i = 0; prop > 0 && psum > 0 && i < np && i < WP_TERMS; i++) {
        double part = prop * p[i].ns / psum;
        wp_cause_add(&w->cat, WP_PAT_LATE_SENDER, p[i].rank, p[i].cause, (uint64_t)(part + 0.5), 1);
        int j = 0;
        while (j < n && !(all[j].rank == p[i].rank && all[j].cause == p[i].cause))
            j++;
        if (j == n)
            all[n++] = (struct wp_term){p[i].rank, 0, p[i].cause, 0};
        all[j].ns += part;
    }
    if (w->wait - prop > 0)
        wp_cause_add(&w->cat, WP_PAT_LATE_SENDER, w->delayer, w->cause, (uint64_t)(w->wait - prop + 0.5), 0);
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

static int wp_psend_by_peer(const void *a, const void *b)
{
    const struct wp_psend *x = a, *y = b;
    return (x->peer > y->peer) - (x->peer < y->peer);
}

/* The rounds (see the header): every rank calls this together, whatever it
 * holds, and leaves after the same round as the others. */
static void wp_propagate(MPI_Comm wcomm, struct wp_winst *wi, size_t nw, const struct wp_itab *it,
                         struct wp_psend *ps, size_t nps, uint64_t *rounds)
{
    qsort(ps, nps, sizeof *ps, wp_psend_by_peer);
    struct wp_pwire *out = malloc((nps ? nps : 1) * sizeof *out);
    int *peer = calloc(nps ? nps : 1, sizeof *peer);
    int force = out == NULL || peer == NULL;
    for (int round = 0;; round++) {
        size_t n = 0;
        for (size_t i = 0; out && peer && i < nps; i++) {
            struct wp_psend *s = &ps[i];
            if (s->sent || (s->pred >= 0 && !wi[s->pred].resolved))
                continue;
            struct wp_pwire *x = &out[n];
            memset(x, 0, sizeof *x);
            x->chan = s->chan, x->k = s->k;
            if (s->pred >= 0) {
                const struct wp_winst *p = &wi[s->pred];
                x->wait = p->wait;
                x->nt = (uint32_t)p->nt;
                memcpy(x->t, p->t, sizeof x->t);
            }
            peer[n++] = s->peer;
            s->sent = 1;
        }
        int failed = 0;
        size_t nin = 0;
        struct wp_pwire *in = wp_nbx(wcomm, WP_TAG_PROP, out, peer, n, sizeof *out, &nin, &failed);
        for (size_t i = 0; i < nin; i++) {
            long j = wp_itab_get(it, in[i].chan, in[i].k);
            if (j >= 0 && !wi[j].resolved && wi[j].chan == in[i].chan && wi[j].k == in[i].k)
                wp_resolve(&wi[j], in[i].wait, in[i].t, in[i].nt < WP_TERMS ? in[i].nt : WP_TERMS);
        }
        free(in);
        /* How many sends went out this round anywhere, and how much is
         * still open. */
        long long loc[2] = {(long long)n, 0}, glob[2] = {0, 0};
        for (size_t i = 0; i < nps; i++)
            loc[1] += !ps[i].sent;
        for (size_t i = 0; i < nw; i++)
            loc[1] += !wi[i].resolved;
        if (PMPI_Allreduce(loc, glob, 2, MPI_LONG_LONG, MPI_SUM, wcomm) != MPI_SUCCESS)
            glob[0] = glob[1] = 0;
        *rounds = (uint64_t)round + 1;
        if (glob[1] == 0 || round >= WP_PROP_ROUNDS)
            break;
        if (glob[0] == 0 || force) {
            /* Nothing moved: the waits still open wait for senders that
             * will never tell (dropped records): direct. */
            for (size_t i = 0; i < nw; i++)
                if (!wi[i].resolved)
                    wp_resolve(&wi[i], 0, NULL, 0);
            if (force)
                for (size_t i = 0; i < nps; i++)
                    ps[i].sent = 1;
        }
    }
    for (size_t i = 0; i < nw; i++)
        if (!wi[i].resolved)
            wp_resolve(&wi[i], 0, NULL, 0);
    free(out);
    free(peer);
}

int wp_match_finalize(MPI_Comm wcomm, int rank, int size)
{
    static int done;
    (void)size;
    if (!wp_match_on || done)
        return 0;
    done = 1;
    /* The clocks' second offsets, so that drift is interpolated. */
    wp_match_clock_sync(wcomm, rank);
    /* 1. The collective batches still open, communicator by communicator
     *    in one order on every rank (blocking collectives in a common
     *    order cannot deadlock). */
    int nc = 0;
    struct wp_mcomm **cv = wp_match_comms(&nc);
    for (int i = 0; cv && i < nc; i++)
        wp_match_flush(cv[i]);
    free(cv);

    /* 2. Point-to-point: every record to its partner. */
    size_t nrec = wp_match_nrec;
    struct wp_mrec **byp = malloc((nrec ? nrec : 1) * sizeof *byp);
    if (byp == NULL)
        nrec = 0;
    for (size_t i = 0; i < nrec; i++)
        byp[i] = &wp_match_recs[i];
    qsort(byp, nrec, sizeof *byp, wp_by_peer);
    size_t nin = 0;
    struct wp_mwire *in = wp_exchange(wcomm, byp, nrec, &nin);
    free(byp);
    if (in == NULL && nrec)
        wp_log_always("waitprof: rank %d: no memory to match its messages; their waits are estimated", rank);

    /* 3. Match. */
    struct wp_wtab tab = {in, NULL, 0};
    size_t slots = 16;
    while (slots < 2 * nin)
        slots <<= 1;
    if (in && nin && (tab.slot = calloc(slots, sizeof *tab.slot)) != NULL) {
        tab.mask = slots - 1;
        for (size_t i = 0; i < nin; i++) {
            size_t s = wp_wkey(in[i].chan, in[i].k, in[i].side) & tab.mask;
            while (tab.slot[s])
                s = (s + 1) & tab.mask;
            tab.slot[s] = (uint32_t)(i + 1);
        }
    }
    uint64_t inconsistent = 0;
    /* The Late Sender waits, resolved below; the sends whose receivers
     * waited, which tell them how late their predecessor made them. */
    size_t nw = 0, nps = 0;
    struct wp_winst *wi = malloc((wp_match_nrec ? wp_match_nrec : 1) * sizeof *wi);
    struct wp_psend *ps = malloc((wp_match_nrec ? wp_match_nrec : 1) * sizeof *ps);
    if (wi == NULL || ps == NULL) {
        wp_log_always("waitprof: rank %d: no memory to follow waits through waiting ranks; all counted as direct",
                      rank);
    }
    /* pred (channel, number) of each psend, resolved to a wp_winst once
     * all are known. */
    struct wp_mprev *pk = malloc((wp_match_nrec ? wp_match_nrec : 1) * sizeof *pk);
    for (size_t i = 0; i < wp_match_nrec;) {
        const struct wp_mrec *r = &wp_match_recs[i];
        /* A run of records of one completion call is one instance. */
        size_t j = i + 1;
        if (r->call)
            while (j < wp_match_nrec && wp_match_recs[j].call == r->call)
                j++;
        int matched = 0, cause_peer = -1;
        uint64_t wait = 0, dur_all = 0, cause = 0, wchan = 0, wk = 0;
        for (size_t q = i; q < j; q++) {
            const struct wp_mrec *x = &wp_match_recs[q];
            const struct wp_mwire *w = wp_wfind(&tab, x->chan, x->k, x->side ? 0 : 1);
            if (w == NULL)
                continue;
            /* The wait this rank's call made the partner take: its own
             * computation before the call is then a cause. */
            double p0 = w->t0, p1 = w->t1, mine = wp_match_ref_ns(x->side ? x->post : x->t0);
            if (x->side == 0 ? mine > p0 : (w->lr && p1 >= mine && mine > p0))
                wp_cause_used(x->cause);
            if (x->side == 0 && mine > p0 && ps && pk && wi) {
                ps[nps] = (struct wp_psend){x->chan, x->k, x->peer, 0, -1};
                pk[nps++] = (struct wp_mprev){x->pchan, x->pk};
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
                    inconsistent++;
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
        wp_measured_add(&r->cat, r->first, matched, wait, dur_all);
        if (wait > 0 && cause_peer >= 0) {
            if (r->side && wi && ps)
                wi[nw++] = (struct wp_winst){.chan = wchan, .k = wk, .cat = r->cat, .wait = (double)wait,
                                             .delayer = cause_peer, .cause = cause, .first = i, .last = j};
            else
                wp_cause_add(&r->cat, r->side ? WP_PAT_LATE_SENDER : WP_PAT_LATE_RECEIVER, cause_peer, cause,
                             wait, 0);
        }
        i = j;
    }
    free(tab.slot);
    free(in);

    /* 4. Propagation: every receive record of a wait stands for it. */
    struct wp_itab it = {0};
    size_t islots = 16;
    while (islots < 2 * wp_match_nrec)
        islots <<= 1;
    it.chan = calloc(islots, sizeof *it.chan);
    it.k = malloc(islots * sizeof *it.k);
    it.inst = malloc(islots * sizeof *it.inst);
    if (it.chan && it.k && it.inst) {
        it.mask = islots - 1;
        for (size_t i = 0; i < nw; i++)
            for (size_t q = wi[i].first; q < wi[i].last; q++)
                wp_itab_put(&it, wp_match_recs[q].chan, wp_match_recs[q].k, (long)i);
    } else {
        free(it.chan);
        it.chan = NULL;
    }
    for (size_t i = 0; i < nps; i++)
        ps[i].pred = wp_itab_get(&it, pk[i].chan, pk[i].k);
    uint64_t rounds = 0;
    wp_propagate(wcomm, wi, nw, &it, ps, nps, &rounds);
    free(it.chan);
    free(it.k);
    free(it.inst);
    free(wi);
    free(ps);
    free(pk);
    pthread_mutex_lock(&wp_match_mu);
    wp_match_cnt.rounds = rounds;
    pthread_mutex_unlock(&wp_match_mu);
    wp_match_clock_end();
    if (inconsistent) {
        pthread_mutex_lock(&wp_match_mu);
        wp_match_cnt.unnumbered += inconsistent;
        pthread_mutex_unlock(&wp_match_mu);
    }
    return 0;
}
