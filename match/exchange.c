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
 * (its record was dropped) counts as direct.  Where every rank's waits
 * and sends together are few (wp_prop_gather), they are gathered on every
 * rank in one collective instead, and each rank runs the same rounds for
 * all ranks (match/local.c, wp_prop_gathered): the same answers in the same
 * rounds, so the same terminal delays.  The direct part is the
 * delayer's short-term cost, the propagated parts the terminal delays'
 * long-term costs.  Late Receiver waits and collective waits are counted
 * as direct: their delayers' previous waits are not followed. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "match/figures.h"
#include "match/internal.h"
#include "match/local.h"
#include "match/match.h"
#include "format/format.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/config.h"
#include "state/log.h"
#include "state/mpiwait.h"
#include "state/prefault.h"

/* --- point-to-point -------------------------------------------------------------------- */

#define WP_TAG_MATCH 7707

static int wp_by_peer(const void *a, const void *b)
{
    const struct wp_mrec *x = *(const struct wp_mrec *const *)a, *y = *(const struct wp_mrec *const *)b;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

/* Send every element to its partner's rank (peer[i], sorted) and receive
 * the others': the nonblocking consensus of Hoefler et al. (synchronous
 * sends to the partners, receives of whatever arrives, and a nonblocking
 * collective entered once the own sends are matched), so that no rank
 * needs to know who will send to it and nothing is gathered on one rank.
 * All ranks call it together; a round's messages are all received before
 * its collective completes, so rounds cannot mix.  The collective is an
 * MPI_Iallreduce (MPI_MAX) of the nred values in red rather than a bare
 * MPI_Ibarrier: it completes only once every rank has entered it, as the
 * barrier does, and it carries what the caller must agree on next, so no
 * second collective is needed for that (glob: the maxima).  A pass that
 * finds nothing to receive and nothing completed yields the core
 * (state/mpiwait.h).  Returns the received elements (*nin set), or NULL
 * with *nin 0 (*failed set when some were lost). */
#define WP_NBX_RED 3
static void *wp_nbx(MPI_Comm wcomm, int tag, const void *out, const int *peer, size_t n, size_t elsize,
                    size_t *nin, int *failed, const long long *red, long long *glob, int nred)
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
    long long mine[WP_NBX_RED] = {0};
    if (nred > 0 && nred <= WP_NBX_RED)
        memcpy(mine, red, (size_t)nred * sizeof *mine);
    else
        nred = 0;
    int entered = 0, done = 0;
    size_t sent = 0;
    while (!done) {
        int flag = 0, moved = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, wcomm, &flag, &st) == MPI_SUCCESS && flag) {
            moved = 1;
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
        if (!entered) {
            /* One test per send (MPI_Test, not MPI_Testall: GCC takes
             * MPICH's MPI_STATUSES_IGNORE for an empty array). */
            while (sent < np) {
                int f = 0;
                if (PMPI_Test(&reqs[sent], &f, MPI_STATUS_IGNORE) == MPI_SUCCESS && !f)
                    break;
                sent++;
                moved = 1;
            }
            if (sent == np &&
                PMPI_Iallreduce(mine, glob, nred, MPI_LONG_LONG, MPI_MAX, wcomm, &bar) == MPI_SUCCESS)
                entered = moved = 1;
        } else if (PMPI_Test(&bar, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            /* The consensus failed: zeros, as for a failed reduction
             * (the propagation then ends). */
            if (nred > 0)
                memset(glob, 0, (size_t)nred * sizeof *glob);
            done = 1;
        }
        if (!moved && !done)
            wp_poll_yield();
    }
    free(reqs);
    if (in == NULL)
        return NULL;
    *nin = m;
    return in;
}

/* Every record to its partner, as the partner needs it. */
static struct wp_mwire *wp_exchange(MPI_Comm wcomm, struct wp_mrec **byp, size_t nrec, size_t *nin,
                                    const long long *red, long long *glob, int nred)
{
    struct wp_mwire *out = wp_malloc_ready((nrec ? nrec : 1) * sizeof *out);
    int *peer = wp_calloc_ready(nrec ? nrec : 1, sizeof *peer);
    int failed = out == NULL || peer == NULL;
    size_t n = failed ? 0 : nrec;
    for (size_t j = 0; j < n; j++) {
        out[j] = wp_mwire_of(byp[j]);
        peer[j] = byp[j]->peer;
    }
    struct wp_mwire *in = wp_nbx(wcomm, WP_TAG_MATCH, out, peer, n, sizeof *out, nin, &failed, red, glob, nred);
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

#define WP_TAG_PROP 7708
#define WP_PROP_ROUNDS 4096
/* The gather's bound, in elements (struct wp_gprop, 40 bytes): by
 * default WP_GATHER_DEFAULT, 16384 (640 KiB), or WAITPROF_TEST_GATHER.
 * With P ranks holding at most R records each, the gathered blocks take
 * P (R + 1) elements (a record makes at most one wait or send), so the
 * propagation is gathered where P (R + 1) is within the bound and runs in
 * rounds of messages elsewhere.  A rank then receives, holds and works
 * through at most the bound's elements (with the resolution's tables at
 * most about 4 MB, all of them waits), whatever P is, so a rank's work
 * stays independent of the number of ranks, as it is in the rounds.
 * Within the bound one collective replaces the rounds, one collective
 * each (16-20 for the ring of bench/init_cost.c at 4 ranks), which
 * matters where a collective costs milliseconds (ranks outnumbering
 * cores: doc/performance.md, "Start-up and finalize"). */
static size_t wp_prop_gather = WP_GATHER_DEFAULT;

void wp_match_gather_limit(size_t n)
{
    wp_prop_gather = n;
}

/* The rounds (see the header): every rank calls this together, whatever it
 * holds, and leaves after the same round as the others.  The consensus
 * collective of each round's exchange also carries the round's agreement
 * (wp_nbx): whether any send went out in this round, and whether anything
 * was open after the previous one, so one collective makes a round; the
 * end is known one round later than with a separate reduction, and that
 * last round sends nothing.  *rounds is the rounds that moved answers,
 * the same count as with a reduction per round. */
static void wp_prop_rounds(MPI_Comm wcomm, struct wp_mlocal *m, uint64_t *rounds)
{
    wp_prop_sort(m);
    size_t nps = m->nps;
    struct wp_pwire *out = wp_malloc_ready((nps ? nps : 1) * sizeof *out);
    int *peer = wp_calloc_ready(nps ? nps : 1, sizeof *peer);
    int force = out == NULL || peer == NULL;
    long long open = wp_prop_open(m);
    for (int round = 0;; round++) {
        size_t n = out && peer ? wp_prop_out(m, out, peer) : 0;
        int failed = 0;
        size_t nin = 0;
        /* How many sends go out this round, and how much was open after
         * the previous one (after matching, for the first): maxima over
         * the ranks. */
        long long loc[2] = {(long long)n, open}, glob[2] = {0, 0};
        struct wp_pwire *in = wp_nbx(wcomm, WP_TAG_PROP, out, peer, n, sizeof *out, &nin, &failed, loc, glob, 2);
        wp_prop_in(m, in, nin);
        free(in);
        open = wp_prop_open(m);
        if (glob[1] == 0 || round > WP_PROP_ROUNDS) {
            /* Nothing was open after round - 1: this round sent nothing. */
            *rounds = round > 0 ? (uint64_t)round : 1;
            break;
        }
        if (glob[0] == 0 || force) {
            /* Nothing moved (so what was open is still open): the waits
             * still open wait for senders that will never tell (dropped
             * records): direct. */
            wp_prop_direct(m);
            if (force)
                for (size_t i = 0; i < nps; i++)
                    m->ps[i].sent = 1;
        }
    }
    wp_prop_direct(m);
    free(out);
    free(peer);
}

/* The propagation (see the header): gathered where every rank's blocks of
 * blk elements fit in all (size blocks, reserved before the exchange),
 * otherwise in rounds.  Every rank takes the same branch: blk comes from
 * the exchange's consensus. */
static void wp_propagate(MPI_Comm wcomm, struct wp_mlocal *m, int rank, int size, struct wp_gprop *all, size_t blk,
                         uint64_t *rounds, int *gathered)
{
    *gathered = 0;
    if (all == NULL) {
        wp_prop_rounds(wcomm, m, rounds);
        return;
    }
    *gathered = 1;
    /* The block's unused tail is zeroed: it travels too. */
    size_t used = wp_prop_pack(m, all + (size_t)rank * blk, blk);
    memset(all + (size_t)rank * blk + used, 0, (blk - used) * sizeof *all);
    MPI_Request req;
    int ok = PMPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)(blk * sizeof *all), MPI_BYTE, wcomm,
                             &req) == MPI_SUCCESS &&
             wp_wait_yield(&req) == MPI_SUCCESS;
    if (!ok || wp_prop_gathered(m, rank, all, size, blk, WP_PROP_ROUNDS, rounds) != 0)
        wp_log_always("waitprof: rank %d: %s to follow waits through waiting ranks; the rest counted as direct",
                      rank, ok ? "no memory" : "could not gather what it needs");
    wp_prop_direct(m);
}

struct wp_match_fig wp_match_fig;

int wp_match_finalize(MPI_Comm wcomm, int rank, int size)
{
    static int done;
    if (!wp_match_on || done)
        return 0;
    done = 1;
    uint64_t start = wp_clock_ns();
    wp_match_clock_line();
    /* The clocks' second offsets, so that drift is interpolated. */
    wp_match_clock_sync(wcomm, rank);
    uint64_t synced = wp_clock_ns();
    /* 1. The collective batches still open, communicator by communicator
     *    in one order on every rank (collectives completed one after
     *    another in a common order cannot deadlock). */
    int nc = 0;
    struct wp_mcomm **cv = wp_match_comms(&nc);
    for (int i = 0; cv && i < nc; i++)
        wp_match_flush(cv[i], 1);
    free(cv);

    /* 2. Point-to-point: every record to its partner. */
    size_t nrec = wp_match_nrec;
    struct wp_mrec **byp = wp_malloc_ready((nrec ? nrec : 1) * sizeof *byp);
    if (byp == NULL)
        nrec = 0;
    for (size_t i = 0; i < nrec; i++)
        byp[i] = &wp_match_recs[i];
    qsort(byp, nrec, sizeof *byp, wp_by_peer);
    /* The propagation's gather (wp_propagate) needs the same memory on
     * every rank or none: reserved now, where this rank's own records
     * would allow it, and every rank's lack of it travels in the
     * exchange's consensus with the most records any rank holds. */
    struct wp_gprop *all = NULL;
    if (wp_match_nrec + 1 <= wp_prop_gather / (size_t)(size > 0 ? size : 1))
        all = malloc(wp_prop_gather * sizeof *all);
    long long red[2] = {(long long)wp_match_nrec, all == NULL}, glob[2] = {0, 1};
    size_t nin = 0;
    struct wp_mwire *in = wp_exchange(wcomm, byp, nrec, &nin, red, glob, 2);
    size_t blk = glob[0] >= 0 ? (size_t)glob[0] + 1 : SIZE_MAX;
    if (glob[1] != 0 || blk > wp_prop_gather / (size_t)(size > 0 ? size : 1)) {
        free(all);
        all = NULL;
    } else {
        /* The part the gather fills, present before it does. */
        wp_ready(all, (size_t)size * blk * sizeof *all);
    }
    free(byp);
    if (in == NULL && nrec)
        wp_log_always("waitprof: rank %d: no memory to match its messages; their waits are estimated", rank);

    /* 3. Match (match/local.c). */
    struct wp_wtab tab;
    wp_wtab_build(&tab, in, nin);
    struct wp_mlocal m;
    wp_match_local(wp_match_recs, wp_match_nrec, &tab, &m);
    if (m.nomem)
        wp_log_always("waitprof: rank %d: no memory to follow waits through waiting ranks; all counted as direct",
                      rank);
    wp_wtab_free(&tab);
    free(in);

    /* 4. Propagation. */
    uint64_t rounds = 0;
    int gathered = 0;
    wp_propagate(wcomm, &m, rank, size, all, blk, &rounds, &gathered);
    free(all);
    uint64_t inconsistent = m.inconsistent;
    wp_mlocal_free(&m);
    pthread_mutex_lock(&wp_match_mu);
    wp_match_cnt.rounds = rounds;
    pthread_mutex_unlock(&wp_match_mu);
    wp_match_clock_end();
    if (inconsistent) {
        pthread_mutex_lock(&wp_match_mu);
        wp_match_cnt.unnumbered += inconsistent;
        pthread_mutex_unlock(&wp_match_mu);
    }
    wp_match_fig = (struct wp_match_fig){.finalize_ns = wp_clock_ns() - start, .clock_ns = synced - start,
                                         .held = wp_match_nrec, .received = nin,
                                         .gathered = (uint64_t)gathered};
    return 0;
}
