/* match/batch.c — the collective instances: per communicator, a batch of
 * the chosen ones, reduced over the communicator when it is full, at
 * MPI_Comm_free and at MPI_Finalize.  See match/match.h and doc/design.md,
 * "Matched instances".
 *
 * Nonblocking collectives take their number at the I-call, like blocking
 * ones (MPI orders all collectives of a communicator alike on every
 * member), and go into the same batch with their I-call's entry: the
 * reduction needs entries only.  Their wait is in the completion call,
 * which may come before or after the batch is reduced, on any thread; a
 * slot of a fixed table (below) keeps what the later of the two needs.
 *
 * A batch is reduced by a blocking MPI_Allreduce, which every member must
 * reach at the same instance.  After a blocking collective that is safe:
 * the program must not deadlock if that collective synchronizes, so it may
 * as well synchronize a little longer.  After an I-call it is not: the
 * I-call synchronizes nothing, and a member may be waiting, before its own
 * I-call, for a message this one sends after it.  So a batch that fills at
 * a nonblocking instance is not reduced then: it waits, full, for the next
 * chosen blocking instance (reduced before that one is kept), for
 * MPI_Comm_free or for MPI_Finalize, and the chosen nonblocking instances
 * until then are not kept (counted as dropped; their calls keep the
 * estimate).  Whether an instance is blocking is the same on every member
 * (a nonblocking collective matches only its nonblocking form), so all
 * members skip the same ones. */
#include <float.h>
#include <pthread.h>
#include <string.h>

#include "format/format.h"
#include "state/mpiwait.h"
#include "match/batch.h"
#include "match/clock.h"
#include "match/internal.h"
#include "match/measured.h"
#include "state/clock.h"
#include "state/functions.h"

/* --- nonblocking instances followed to their completion ---------------------------------
 * A slot per chosen nonblocking instance in flight, under wp_match_mu.  The
 * completion call and the batch's reduction each fill in their part; the
 * later of the two works out the wait.  A completion call that completed
 * several followed instances waited for the last of them: they form a
 * group, led by the slot of the first, whose figure is the longest of their
 * waits once all are reduced.  The leader's slot lives until then. */
#define WP_NBC_SLOTS 1024
enum { WP_NBC_USED = 1, WP_NBC_REDUCED = 2, WP_NBC_COMPLETED = 4, WP_NBC_FORGOTTEN = 8, WP_NBC_RESOLVED = 16 };
struct wp_nbc {
    uint32_t state;    /* WP_NBC_* bits; 0: free */
    uint32_t lead;     /* completed: the group leader's slot plus one */
    int kind;          /* the role byte of the completion categories its pattern applies to */
    uint8_t first;     /* in the always-chosen stratum */
    uint64_t blk;      /* its block of numbers (WP_MATCH_BLOCK_LOG2) */
    /* The reduction's part. */
    uint8_t ok;        /* the reduction succeeded */
    int pattern;
    int delayer;       /* rank in MPI_COMM_WORLD; -1: this rank, or none */
    double ref;        /* the entry it waits for, ns in the common base; -DBL_MAX: none */
    uint64_t dcause;   /* what the delayer computed before its I-call */
    /* The completion's part, in the group leader. */
    struct wp_mcat cat;
    uint64_t c0, c1;   /* the completion call's wait, ticks */
    uint32_t left;     /* members not yet resolved */
    uint8_t measure;   /* the category's pattern is every member's */
    uint8_t matched;   /* every member's reduction succeeded */
    uint8_t first_all; /* every member is in the always-chosen stratum */
    uint64_t wait;
    int gpattern, gdelayer;
    uint64_t gcause;
};
static struct wp_nbc nbcs[WP_NBC_SLOTS];
static uint32_t nbc_hint;

/* A group whose wait is known, added once wp_match_mu is released
 * (wp_measured_add and wp_cause_add take it). */
struct wp_nbc_out {
    struct wp_mcat cat;
    uint64_t wait, dur, cause, blk;
    int first, matched, pattern, delayer;
};

/* With the mutex held: slot i is reduced and completed.  Fold it into its
 * group; when it was the group's last, put the group's figure in *out,
 * free the leader and return 1. */
static int wp_nbc_resolve(uint32_t i, struct wp_nbc_out *out)
{
    struct wp_nbc *e = &nbcs[i];
    uint32_t li = e->lead - 1;
    struct wp_nbc *l = &nbcs[li];
    e->state |= WP_NBC_RESOLVED;
    l->matched &= e->ok;
    l->first_all &= e->first;
    if (e->kind != l->cat.role)
        l->measure = 0;
    if (e->ok && e->ref > -DBL_MAX) {
        uint64_t dur = wp_ticks_duration_ns(l->c1 > l->c0 ? l->c1 - l->c0 : 0);
        uint64_t w = wp_match_clip(e->ref - wp_match_ref_ns(l->c0), dur);
        if (w >= l->wait) {
            l->wait = w;
            l->gpattern = e->pattern;
            l->gdelayer = e->delayer;
            l->gcause = e->dcause;
        }
    }
    if (i != li)
        nbcs[i].state = 0;
    if (--l->left)
        return 0;
    *out = (struct wp_nbc_out){.cat = l->cat, .wait = l->wait, .cause = l->gcause, .blk = l->blk,
                               .first = l->first_all,
                               .matched = l->matched, .pattern = l->gpattern, .delayer = l->gdelayer,
                               .dur = wp_ticks_duration_ns(l->c1 > l->c0 ? l->c1 - l->c0 : 0)};
    /* A test waited for nothing; a call that also completed requests of
     * another pattern is recorded under a category whose wait is not this
     * one (a receive's: Late Sender; several patterns: none). */
    if (!l->measure)
        out->cat.site = 0;
    l->state = 0;
    return 1;
}

static void wp_nbc_emit(const struct wp_nbc_out *o, int n)
{
    for (int i = 0; i < n; i++) {
        if (o[i].cat.site == 0)
            continue;
        wp_measured_add(&o[i].cat, o[i].first, o[i].blk, o[i].matched, o[i].matched ? o[i].wait : 0, o[i].dur);
        if (o[i].matched && o[i].wait > 0 && o[i].delayer >= 0)
            wp_cause_add(&o[i].cat, o[i].pattern, o[i].delayer, o[i].cause,
                         o[i].wait * wp_match_weight(o[i].blk << WP_MATCH_BLOCK_LOG2, wp_match_dense_log2), 0);
    }
}

uint32_t wp_match_icoll_record(struct wp_mcomm *mc, uint64_t k, int cls, int root, int kind, uint64_t enter,
                               uint64_t cause)
{
    struct wp_cbatch *b = mc->batch;
    if (b == NULL)
        return 0;
    /* Full: it waits for a blocking instance to be reduced (above). */
    if (b->n == WP_CBATCH) {
        __atomic_fetch_add(&wp_match_cnt.dropped, 1, __ATOMIC_RELAXED);
        return 0;
    }
    uint32_t slot = 0;
    pthread_mutex_lock(&wp_match_mu);
    for (uint32_t p = 0; p < WP_NBC_SLOTS; p++) {
        uint32_t i = (nbc_hint + p) % WP_NBC_SLOTS;
        if (nbcs[i].state == 0) {
            nbcs[i] = (struct wp_nbc){.state = WP_NBC_USED, .kind = kind, .first = (uint8_t)wp_match_first(k),
                                        .blk = k >> WP_MATCH_BLOCK_LOG2};
            nbc_hint = i + 1;
            slot = i + 1;
            break;
        }
    }
    pthread_mutex_unlock(&wp_match_mu);
    /* Kept in the batch even when not followed: every member's batch holds
     * the same instances. */
    int is_root = root >= 0 && root == mc->rank;
    b->e[b->n++] = (struct wp_centry){.k = k, .t0 = enter, .t1 = enter, .is_root = is_root, .cause = cause,
                                      .cls = (uint8_t)cls, .nb = 1, .nbc = slot};
    __atomic_fetch_add(&wp_match_cnt.coll_records, 1, __ATOMIC_RELAXED);
    return slot;
}

void wp_match_nbc_forget_locked(uint32_t slot)
{
    if (slot == 0 || slot > WP_NBC_SLOTS)
        return;
    struct wp_nbc *e = &nbcs[slot - 1];
    if (!(e->state & WP_NBC_USED) || (e->state & (WP_NBC_COMPLETED | WP_NBC_FORGOTTEN)))
        return;
    /* Reduced already: nothing else refers to it.  Else its batch entry
     * does, and the reduction frees it. */
    if (e->state & WP_NBC_REDUCED)
        e->state = 0;
    else
        e->state |= WP_NBC_FORGOTTEN;
}

void wp_match_nbc_done(const uint32_t *slots, int n, const struct wp_mcat *c, uint64_t c0, uint64_t c1)
{
    struct wp_nbc_out out;
    int nout = 0;
    uint32_t lead = 0;
    pthread_mutex_lock(&wp_match_mu);
    for (int j = 0; j < n; j++) {
        if (slots[j] == 0 || slots[j] > WP_NBC_SLOTS)
            continue;
        struct wp_nbc *e = &nbcs[slots[j] - 1];
        if (!(e->state & WP_NBC_USED) || (e->state & (WP_NBC_COMPLETED | WP_NBC_FORGOTTEN)))
            continue;
        if (lead == 0) {
            lead = slots[j];
            e->cat = *c;
            e->c0 = c0;
            e->c1 = c1;
            e->left = 0;
            e->measure = c->site != 0;
            e->matched = e->first_all = 1;
            e->wait = 0;
            e->gpattern = WP_PAT_NONE;
            e->gdelayer = -1;
            e->gcause = 0;
        }
        e->state |= WP_NBC_COMPLETED;
        e->lead = lead;
        nbcs[lead - 1].left++;
    }
    /* The members reduced already resolve now, the others at their
     * batch's reduction. */
    for (int j = 0; j < n && lead; j++) {
        if (slots[j] == 0 || slots[j] > WP_NBC_SLOTS)
            continue;
        const struct wp_nbc *e = &nbcs[slots[j] - 1];
        uint32_t need = WP_NBC_USED | WP_NBC_COMPLETED | WP_NBC_REDUCED;
        if (e->lead == lead && (e->state & need) == need && !(e->state & WP_NBC_RESOLVED))
            nout += wp_nbc_resolve(slots[j] - 1, &out);
    }
    pthread_mutex_unlock(&wp_match_mu);
    wp_nbc_emit(&out, nout);
}

/* --- blocking instances and the batches' reduction ------------------------------------- */

void wp_match_coll_record(const struct wp_mcat *c, struct wp_mcomm *mc, uint64_t k, int is_root, uint64_t enter,
                          uint64_t cause)
{
    struct wp_cbatch *b = mc->batch;
    if (b == NULL)
        return;
    /* A batch that filled at a nonblocking instance is reduced here, after
     * the blocking one returned (see the top of this file). */
    if (b->n == WP_CBATCH)
        wp_match_flush(mc, 0);
    /* Only the thread calling a collective on mc touches its batch: MPI
     * requires the program to order collective calls on a communicator. */
    b->e[b->n++] = (struct wp_centry){.k = k, .t0 = enter, .t1 = wp_ticks(), .cat = *c, .is_root = is_root,
                                      .cause = cause, .cls = (uint8_t)wp_fn_table[c->fn].wclass};
    __atomic_fetch_add(&wp_match_cnt.coll_records, 1, __ATOMIC_RELAXED);
    if (b->n == WP_CBATCH)
        wp_match_flush(mc, 0);
}

/* With the mutex held: the reduction's part of the followed instance of
 * batch entry e; resolves it when its completion came first. */
static int wp_nbc_reduced(const struct wp_centry *e, int ok, double ref, int pattern, int delayer, uint64_t cause,
                          struct wp_nbc_out *out)
{
    struct wp_nbc *x = &nbcs[e->nbc - 1];
    if (x->state & WP_NBC_FORGOTTEN) {
        x->state = 0;
        return 0;
    }
    x->ok = (uint8_t)ok;
    x->ref = ref;
    x->pattern = pattern;
    x->delayer = delayer;
    x->dcause = cause;
    x->state |= WP_NBC_REDUCED;
    return (x->state & WP_NBC_COMPLETED) ? wp_nbc_resolve(e->nbc - 1, out) : 0;
}

/* One of the batch's reductions.  During the run a blocking MPI_Allreduce,
 * inside the program's own collective call; at MPI_Finalize the same
 * reduction started nonblocking and waited for with sched_yield
 * (state/mpiwait.h), since there the ranks arrive at different times and
 * may outnumber the cores. */
static int wp_batch_allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                              int at_finalize)
{
    if (!at_finalize)
        return PMPI_Allreduce(in, out, n, t, op, comm);
    MPI_Request req;
    int rc = PMPI_Iallreduce(in, out, n, t, op, comm, &req);
    return rc == MPI_SUCCESS ? wp_wait_yield(&req) : rc;
}

void wp_match_flush(struct wp_mcomm *mc, int at_finalize)
{
    struct wp_cbatch *b = mc->batch;
    if (b == NULL || b->n == 0)
        return;
    uint32_t n = b->n;
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        double t = wp_match_ref_ns(e->t0);
        b->in[3 * i] = (struct wp_di){t, mc->rank};
        b->in[3 * i + 1] = (struct wp_di){e->is_root ? -DBL_MAX : t, mc->rank};
        b->in[3 * i + 2] = (struct wp_di){e->is_root ? t : -DBL_MAX, mc->rank};
    }
    b->n = 0;
    /* Up to a batch of followed nonblocking instances resolve here. */
    static struct wp_nbc_out out[WP_CBATCH];
    static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
    int nout = 0;
    if (wp_batch_allreduce(b->in, b->out, (int)(3 * n), MPI_DOUBLE_INT, MPI_MAXLOC, mc->handle, at_finalize) !=
        MPI_SUCCESS) {
        pthread_mutex_lock(&out_mu);
        pthread_mutex_lock(&wp_match_mu);
        for (uint32_t i = 0; i < n; i++)
            if (b->e[i].nbc)
                nout += wp_nbc_reduced(&b->e[i], 0, -DBL_MAX, WP_PAT_NONE, -1, 0, &out[nout]);
        pthread_mutex_unlock(&wp_match_mu);
        wp_nbc_emit(out, nout);
        pthread_mutex_unlock(&out_mu);
        for (uint32_t i = 0; i < n; i++)
            if (!b->e[i].nb)
                wp_measured_add(&b->e[i].cat, wp_match_first(b->e[i].k), b->e[i].k >> WP_MATCH_BLOCK_LOG2, 0, 0, 0);
        return;
    }
    /* Who delayed each instance: the last to enter (NxN, barrier), the
     * root (broadcast), the last non-root (reduce).  A second reduction
     * tells every member what the delaying one computed before it came.
     * ref: the entry this member waited for; -DBL_MAX where the pattern
     * does not apply to it (a broadcast's root, a reduction's non-roots, a
     * reduction's root alone in its communicator). */
    int delayer[WP_CBATCH], pattern[WP_CBATCH];
    double ref[WP_CBATCH];
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        switch (e->cls) {
        case WP_CLASS_ONE2N:
            delayer[i] = b->out[3 * i + 2].r, pattern[i] = WP_PAT_LATE_BCAST;
            ref[i] = e->is_root ? -DBL_MAX : b->out[3 * i + 2].v;
            break;
        case WP_CLASS_N2ONE:
            delayer[i] = b->out[3 * i + 1].r, pattern[i] = WP_PAT_EARLY_REDUCE;
            ref[i] = e->is_root ? b->out[3 * i + 1].v : -DBL_MAX;
            break;
        case WP_CLASS_BARRIER:
            delayer[i] = b->out[3 * i].r, pattern[i] = WP_PAT_BARRIER;
            ref[i] = b->out[3 * i].v;
            break;
        default:
            delayer[i] = b->out[3 * i].r, pattern[i] = WP_PAT_NXN;
            ref[i] = b->out[3 * i].v;
            break;
        }
        b->cin[i] = delayer[i] == mc->rank ? e->cause : 0;
        if (delayer[i] == mc->rank)
            wp_cause_used(e->cause);
    }
    if (wp_batch_allreduce(b->cin, b->cout, (int)n, MPI_UINT64_T, MPI_BOR, mc->handle, at_finalize) != MPI_SUCCESS)
        memset(b->cout, 0, n * sizeof *b->cout);
    /* Nonblocking instances: their wait is their completion call's. */
    pthread_mutex_lock(&out_mu);
    pthread_mutex_lock(&wp_match_mu);
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        if (e->nbc)
            nout += wp_nbc_reduced(e, 1, ref[i], pattern[i],
                                   delayer[i] == mc->rank ? -1 : wp_match_world_rank(mc, delayer[i]), b->cout[i],
                                   &out[nout]);
    }
    pthread_mutex_unlock(&wp_match_mu);
    wp_nbc_emit(out, nout);
    pthread_mutex_unlock(&out_mu);
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        if (e->nb)
            continue;
        double own = b->in[3 * i].v;
        uint64_t dur = wp_ticks_duration_ns(e->t1 - e->t0);
        uint64_t wait = ref[i] > -DBL_MAX ? wp_match_clip(ref[i] - own, dur) : 0;
        wp_measured_add(&e->cat, wp_match_first(e->k), e->k >> WP_MATCH_BLOCK_LOG2, 1, wait, dur);
        if (wait > 0 && delayer[i] != mc->rank)
            wp_cause_add(&e->cat, pattern[i], wp_match_world_rank(mc, delayer[i]), b->cout[i],
                         wait * wp_match_weight(e->k, wp_match_dense_log2), 0);
    }
}
