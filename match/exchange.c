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
 * last of them: its wait is the longest of theirs. */
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

/* Send every record to its partner's rank and receive theirs: the
 * nonblocking consensus of Hoefler et al. (synchronous sends to the
 * partners, receives of whatever arrives, and a nonblocking barrier entered
 * once the own sends are matched), so that no rank needs to know who will
 * send to it and nothing is gathered on one rank.  Returns the received
 * records (*n set), or NULL with *n 0. */
static struct wp_mwire *wp_exchange(MPI_Comm wcomm, struct wp_mrec **byp, size_t nrec, size_t *nin)
{
    *nin = 0;
    size_t npeers = 0;
    for (size_t i = 0; i < nrec; i++)
        if (i == 0 || byp[i]->peer != byp[i - 1]->peer)
            npeers++;
    struct wp_mwire *out = malloc((nrec ? nrec : 1) * sizeof *out);
    MPI_Request *reqs = malloc((npeers ? npeers : 1) * sizeof *reqs);
    int failed = out == NULL || reqs == NULL;
    size_t np = 0;
    for (size_t i = 0; !failed && i < nrec;) {
        size_t j = i;
        for (; j < nrec && byp[j]->peer == byp[i]->peer; j++) {
            const struct wp_mrec *r = byp[j];
            out[j] = (struct wp_mwire){r->chan,
                                       r->k,
                                       wp_match_ref_ns(r->side ? r->post : r->t0),
                                       wp_match_ref_ns(r->t0),
                                       wp_match_ref_ns(r->t1),
                                       r->cause,
                                       r->side,
                                       r->lr};
        }
        if (PMPI_Issend(&out[i], (int)((j - i) * sizeof *out), MPI_BYTE, byp[i]->peer, WP_TAG_MATCH, wcomm,
                        &reqs[np]) == MPI_SUCCESS)
            np++;
        i = j;
    }
    /* Whatever happened above, this rank takes part in the consensus, so
     * no other rank waits for it forever. */
    size_t cap = 1024, n = 0;
    struct wp_mwire *in = malloc(cap * sizeof *in);
    MPI_Request bar = MPI_REQUEST_NULL;
    int barrier = 0, done = 0;
    size_t sent = 0;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, WP_TAG_MATCH, wcomm, &flag, &st) == MPI_SUCCESS && flag) {
            int bytes = 0;
            PMPI_Get_count(&st, MPI_BYTE, &bytes);
            size_t m = (size_t)bytes / sizeof *in;
            if (in && n + m > cap) {
                while (n + m > cap)
                    cap *= 2;
                struct wp_mwire *g = realloc(in, cap * sizeof *in);
                if (g == NULL)
                    free(in);
                in = g;
            }
            if (in) {
                PMPI_Recv(&in[n], bytes, MPI_BYTE, st.MPI_SOURCE, WP_TAG_MATCH, wcomm, MPI_STATUS_IGNORE);
                n += m;
            } else {
                /* No room: received and dropped (waitprof's communicator
                 * returns errors, so a truncation does not abort). */
                struct wp_mwire one;
                PMPI_Recv(&one, (int)sizeof one, MPI_BYTE, st.MPI_SOURCE, WP_TAG_MATCH, wcomm, MPI_STATUS_IGNORE);
                failed = 1;
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
    free(out);
    free(reqs);
    if (failed || in == NULL) {
        free(in);
        return NULL;
    }
    *nin = n;
    return in;
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
    for (size_t i = 0; i < wp_match_nrec;) {
        const struct wp_mrec *r = &wp_match_recs[i];
        /* A run of records of one completion call is one instance. */
        size_t j = i + 1;
        if (r->call)
            while (j < wp_match_nrec && wp_match_recs[j].call == r->call)
                j++;
        int matched = 0, cause_peer = -1;
        uint64_t wait = 0, dur_all = 0, cause = 0;
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
            }
            if (dur > dur_all)
                dur_all = dur;
        }
        if (r->side == 0 && !r->lr) {
            i = j;
            continue;
        }
        wp_measured_add(&r->cat, r->first, matched, wait, dur_all);
        if (wait > 0 && cause_peer >= 0)
            wp_cause_add(&r->cat, r->side ? WP_PAT_LATE_SENDER : WP_PAT_LATE_RECEIVER, cause_peer, cause, wait);
        i = j;
    }
    free(tab.slot);
    free(in);
    wp_match_clock_end();
    if (inconsistent) {
        pthread_mutex_lock(&wp_match_mu);
        wp_match_cnt.unnumbered += inconsistent;
        pthread_mutex_unlock(&wp_match_mu);
    }
    return 0;
}
