/* match/numbering.h — numbering in the wrappers: communicators and their
 * ids, channel counters, the point-to-point records and the nonblocking
 * receives followed to their completion (match/match.h has the contract;
 * match/numbering.c). */
#ifndef WP_MATCH_NUMBERING_H
#define WP_MATCH_NUMBERING_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "match/measured.h"
#include "match/types.h"
#include "state/clock.h"

/* 1 when the wrappers number instances (set at MPI_Init: WAITPROF_MATCH
 * not 0, estimate on, not lean). */
extern int wp_match_on;
/* The sampling exponent: one instance in 2^wp_match_bits beyond the first
 * ones.  Raised by one each time the point-to-point buffer fills. */
extern unsigned wp_match_bits;
/* The same for collective instances, fixed for the run: every member of a
 * communicator must choose the same instances, or their batches would
 * differ (point-to-point records may differ between the sides: an instance
 * only one side chose stays unmatched). */
extern unsigned wp_match_cbits;
/* Nonblocking receives awaiting their completion call (numbering.c): the
 * completion wrappers look requests up only while this is nonzero. */
extern int wp_match_tracked;
/* How many of them are wildcard receives, whose completion needs a status
 * (written under the mutex, read without it). */
extern int wp_match_wild;
/* How many of them a test must see complete: wildcard receives, numbered
 * from the status of the call that completes them, and nonblocking
 * collectives, whose completion call ends their wait (match/batch.c).  A
 * test that completes a followed receive of a known source records nothing
 * (it waited for nothing: numbering.c, wp_done) and would only remove its
 * entry, which the handle's next request removes as well (every wrapper
 * that makes a request drops a stale entry of its handle: wp_match_forget,
 * and MPI recycles handles).  So the tests (MPI_Test, MPI_Testany,
 * MPI_Testsome, MPI_Testall, C and Fortran) take their handles only while
 * this is nonzero: with only such receives followed, MPI_Testany over 64
 * requests no longer copies its 512 bytes of handles on every poll.
 * Written under the mutex, read without it. */
extern int wp_match_test_seen;

/* --- set-up ------------------------------------------------------------------------ */

/* At MPI_Init (normal context), collective over wcomm (a duplicate of
 * MPI_COMM_WORLD): rate is WAITPROF_MATCH (0 off, else one in rate,
 * rounded down to a power of two), dense WAITPROF_MATCH_DENSE (thinning
 * beyond it, match/types.h; 0 none, and none at rate 1, which asks for
 * every instance), bytes the memory for point-to-point records.  On for
 * all ranks or for none.  Then, while on, the clocks' offsets are
 * measured (match/clock.c). */
void wp_match_init(MPI_Comm wcomm, int on, unsigned rate, unsigned dense, size_t bytes);

/* A new communicator from a parent (the table's newcomm= rows); fn is the
 * creating function. */
void wp_match_comm_new(MPI_Comm parent, MPI_Comm comm);
/* Before MPI_Comm_free (collective): reduce the communicator's batch. */
void wp_match_comm_free(MPI_Comm comm);

/* The descriptor of a communicator, NULL when it is not numbered. */
struct wp_mcomm *wp_match_comm_slow(MPI_Comm comm);
extern struct wp_mcomm wp_match_world;
static inline __attribute__((always_inline)) struct wp_mcomm *wp_match_comm(MPI_Comm comm)
{
    if (__builtin_expect(comm == MPI_COMM_WORLD, 1))
        return &wp_match_world;
    return wp_match_comm_slow(comm);
}

/* The counter of a channel in direction dir (0 sent, 1 received): NULL
 * when the channel table is full (the channel is not numbered). */
atomic_uint_fast64_t *wp_match_counter(uint64_t chan, int dir);
/* The next number on a channel; UINT64_MAX when it is not numbered. */
uint64_t wp_match_next(uint64_t chan, int dir);

/* 1 when at most one thread calls MPI at a time (the thread level provided
 * is below MPI_THREAD_MULTIPLE): counters are then incremented without an
 * atomic read-modify-write, which costs more than the rest of numbering. */
extern int wp_match_serial;

/* The calling thread's recent channels per direction, a small table
 * indexed by a hash of the partner and the tag: a ping-pong, a halo
 * exchange or a task loop numbers the same few channels over and over, and
 * a hit skips the channel's hash and the shared table.  A communicator's
 * descriptor is never freed (a freed communicator's is only marked dead),
 * so a cached pointer cannot come to stand for another communicator.
 * next: the channel's numbers below it are not chosen (wp_match_after), so
 * that a call that is not a chosen instance costs one comparison. */
#define WP_MCACHE_LOG2 3
struct wp_mcache {
    const struct wp_mcomm *mc;
    MPI_Comm comm; /* mc's handle, for the receive's fast form (wp_match_recv_unchosen) */
    int peer, tag;
    uint64_t chan;
    atomic_uint_fast64_t *count;
    uint64_t next;
};
extern __thread struct wp_mcache wp_mcache[2][1u << WP_MCACHE_LOG2] __attribute__((tls_model("initial-exec")));

/* The channel of (mc, src, dst, tag) in direction dir into cache slot c
 * (cold): NULL when the channel table is full (not numbered). */
struct wp_mcache *wp_match_cache_fill(struct wp_mcache *c, struct wp_mcomm *mc, int src, int dst, int tag, int dir);
/* c's number k reached c->next: whether k is chosen now; moves c->next on
 * (cold). */
int wp_match_due(struct wp_mcache *c, uint64_t k);

/* The same for collective number k of mc, against mc->cnext. */
int wp_match_coll_due(struct wp_mcomm *mc, uint64_t k);

/* The wrappers' numbering is inlined into them whole: the wrappers have
 * their frames already, and an outlined call saved six registers on every
 * call for the sake of its rare recording path. */
#define WP_MATCH_HOT static inline __attribute__((always_inline))

/* The calling thread's last receive that waited and was recorded (its
 * channel and number; chan 0: none, or a later receive, completion or
 * collective call was not recorded).  A send records it as its
 * predecessor: when that receive waited, the send was late by as much,
 * and a wait the send causes is partly propagated (match/exchange.c).  A
 * call that waited unrecorded in between breaks the link, since its wait,
 * unknown, would have absorbed the earlier one. */
struct wp_mprev {
    uint64_t chan, k;
};
extern __thread struct wp_mprev wp_mprev __attribute__((tls_model("initial-exec")));

/* The thread's cache slot for (peer, tag) in direction dir, whichever
 * channel it holds. */
WP_MATCH_HOT struct wp_mcache *wp_mcache_of(int peer, int tag, int dir)
{
    return &wp_mcache[dir][((uint32_t)peer * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca6bu) >> (32 - WP_MCACHE_LOG2)];
}
/* The thread's cache slot of the channel of comm between src and dst
 * (ranks in mc) with tag, in direction dir, filled if it held another;
 * NULL when the channel is not numbered. */
WP_MATCH_HOT struct wp_mcache *wp_match_slot(struct wp_mcomm *mc, int src, int dst, int tag, int dir)
{
    int peer = dir ? src : dst;
    struct wp_mcache *c = wp_mcache_of(peer, tag, dir);
    if (__builtin_expect(c->mc != mc || c->peer != peer || c->tag != tag, 0))
        c = wp_match_cache_fill(c, mc, src, dst, tag, dir);
    return c;
}
/* Number a message of comm between src and dst with tag, in direction
 * dir: its number in *k.  Returns its channel's cache slot, NULL when it
 * is not numbered. */
WP_MATCH_HOT struct wp_mcache *wp_match_number(struct wp_mcomm *mc, int src, int dst, int tag, int dir, uint64_t *k)
{
    struct wp_mcache *c = wp_match_slot(mc, src, dst, tag, dir);
    if (c == NULL)
        return NULL;
    if (wp_match_serial) {
        uint64_t n = atomic_load_explicit(c->count, memory_order_relaxed);
        atomic_store_explicit(c->count, n + 1, memory_order_relaxed);
        *k = n;
    } else {
        *k = atomic_fetch_add_explicit(c->count, 1, memory_order_relaxed);
    }
    return c;
}

/* A call's entry time where it has one, else now: the full wrappers of
 * calls that never wait (wrap/gen_wrappers.py, UNTIMED) read no clock on
 * entry, and the few chosen instances among them take the time here, in
 * their cold paths (such a call returns at once, so now stands for its
 * entry). */
static inline uint64_t wp_match_when(uint64_t enter)
{
    return enter ? enter : wp_ticks();
}

/* --- what the wrappers call ------------------------------------------------------ */

/* Record a chosen point-to-point instance (cold).  side 0: a send entered
 * at t0 (ticks); 1: a receive posted at post and waited for from t0 to t1;
 * lr: a blocking send, whose own wait (Late Receiver) is measured. */
void wp_match_p2p_record(const struct wp_mcat *c, uint64_t chan, uint64_t k, int side, int peer_rank,
                         struct wp_mcomm *mc, uint64_t post, uint64_t t0, uint64_t t1, int lr, uint64_t cause);

/* Point-to-point number k of channel slot ch reached ch->next (cold): if k
 * is chosen, record it (wp_match_p2p_record: side, peer, lr, cause as
 * there; a send's exit is now when lr, a receive waited from enter to
 * now). */
void wp_match_p2p_due(const struct wp_mcat *c, struct wp_mcache *ch, uint64_t k, int side, int peer,
                      struct wp_mcomm *mc, uint64_t enter, int lr, uint64_t cause);

/* Blocking sends and receives with a known partner are numbered before
 * their PMPI call (the k-th posted receive of a channel takes its k-th
 * message, so the number is the same either way), so that the wrapper
 * knows whether the call is a chosen instance before it reads the clock:
 * a call that is not chosen is not timed at all (wrap/wrap.h, wp_count).
 * pre describes the number taken; numbered 0: none was (matching off, a
 * nested call, a communicator or channel not numbered), and the call is
 * numbered after it returns as before. */
struct wp_mpre {
    struct wp_mcomm *mc;
    struct wp_mcache *ch;
    uint64_t chan, k;
    /* numbered 1: numbered here (mc, ch, chan, k); 2: a send on the
     * thread's last channel (wp_mlast), numbered after its call with the
     * choice predicted here; 0: neither. */
    int numbered, chosen;
    /* Chosen beyond the first numbers of its channel: the exponent of the
     * rate it was chosen at (one in 2^tw), which the estimator weighs the
     * call's duration by (fallback/stats.h, wp_stats_weigh); else 0. */
    unsigned tw;
};
/* Whether number k of the thread's channel slot ch is chosen: a number
 * below the slot's next one worth hashing costs one comparison. */
WP_MATCH_HOT int wp_match_slot_chosen(struct wp_mcache *ch, uint64_t k)
{
    return __builtin_expect(k >= ch->next, 0) && wp_match_due(ch, k);
}
/* Number a blocking call on channel (from, to) of comm before its call;
 * 1 when the call must be timed (chosen, or not numbered here).  from or
 * to is -1 for this rank. */
WP_MATCH_HOT int wp_match_pre(struct wp_mpre *p, int from, int to, int tag, MPI_Comm comm, int dir)
{
    struct wp_mcomm *mc = wp_match_comm(comm);
    uint64_t k;
    struct wp_mcache *ch = NULL;
    if (mc != NULL)
        ch = wp_match_number(mc, from < 0 ? mc->rank : from, to < 0 ? mc->rank : to, tag, dir, &k);
    if (ch == NULL)
        return 1;
    p->mc = mc, p->ch = ch, p->chan = ch->chan, p->k = k, p->numbered = 1;
    p->chosen = wp_match_slot_chosen(ch, k);
    if (__builtin_expect(p->chosen, 0) && k >= WP_MATCH_FIRST)
        p->tw = __atomic_load_n(&wp_match_bits, __ATOMIC_RELAXED) + wp_match_thin(k, wp_match_dense_log2);
    return p->chosen;
}
/* The thread's last blocking send, when at most one thread calls MPI at a
 * time (wp_match_serial): its channel (communicator handle, peer, tag;
 * peer -1: none, wp_mlast_end) and whether the number its next message
 * will take is chosen, with the rate's exponent (wp_mpre.tw).
 * A loop that sends on one channel, as a ping-pong does, then decides
 * before the call with three comparisons whether to time it, and numbers
 * it after the call (wp_match_sent), off the path of a reply that waits
 * for the send: the channel's hash, its cache slot and its counter cost a
 * ping-pong about 3.6 ns per one-way trip before the call (bench/pingpong.c,
 * Open MPI, numbering removed from the send by hand).  The number the call
 * takes after it decides what is recorded, so a wrong prediction only
 * leaves the call timed or untimed in vain.  It is wrong only where
 * something else numbered the channel in between (another thread under
 * MPI_THREAD_SERIALIZED; a nonblocking or persistent send of this thread
 * resets it) or the communicator handle now names another communicator;
 * a chosen instance that was then not timed is counted as unnumbered, its
 * partner's record left unmatched. */
struct wp_mlast {
    MPI_Comm comm;
    int peer, tag;
    int chosen_next;
    unsigned tw_next;
    /* The communicator's descriptor and the channel's cache slot when the
     * channel became the last one (wp_mlast_take). */
    const struct wp_mcomm *mc;
    struct wp_mcache *ch;
};
extern __thread struct wp_mlast wp_mlast __attribute__((tls_model("initial-exec")));
/* Whether (comm, dest, tag) is the thread's last channel. */
WP_MATCH_HOT int wp_mlast_is(int dest, int tag, MPI_Comm comm)
{
    return wp_mlast.peer == dest && wp_mlast.tag == tag && wp_mlast.comm == comm;
}

/* The thread has no last channel any more.  Its next number is then
 * "chosen", so that "not chosen" alone says that wp_mlast names a
 * channel: a send to peer -1 (MPICH's MPI_PROC_NULL) on the last
 * communicator and tag finds the fast form's test false without a test
 * of dest of its own (wp_match_send_unchosen). */
WP_MATCH_HOT void wp_mlast_end(void)
{
    wp_mlast.peer = -1;
    wp_mlast.chosen_next = 1;
}

/* Whether a blocking send to dest goes by the thread's last channel and
 * its number will not be chosen: then it is numbered after its call and
 * not timed for matching (wp_match_pre_send's fast case, which the
 * wrappers' fast form tests on its own; wrap/wrap.h, wp_send_fast).  This
 * test is on the path of the partner that waits for the message, so it
 * is the least that decides: "not chosen" holds only while wp_mlast names
 * a channel (wp_mlast_end), and it names one only after a send numbered
 * before its call, which needs matching on and dest >= 0
 * (wp_match_pre_send); matching, once on, stays on.  Neither is tested
 * again here.  Nor is the depth: a call nested in an MPI call records
 * nothing in either form (wp_enter). */
WP_MATCH_HOT int wp_match_send_unchosen(int dest, int tag, MPI_Comm comm)
{
    return wp_mlast_is(dest, tag, comm) && !wp_mlast.chosen_next;
}
/* A blocking send to dest. */
WP_MATCH_HOT int wp_match_pre_send(struct wp_mpre *p, int depth, int dest, int tag, MPI_Comm comm)
{
    if (!wp_match_on || depth != 0 || dest < 0)
        return 1;
    const struct wp_mlast *l = &wp_mlast;
    if (__builtin_expect(wp_mlast_is(dest, tag, comm), 1)) {
        p->numbered = 2;
        p->chosen = l->chosen_next;
        p->tw = l->tw_next;
        return p->chosen;
    }
    return wp_match_pre(p, -1, dest, tag, comm, 0);
}
/* Whether a blocking receive is not numbered before its call: matching
 * off, a nested call, or a wildcard source or tag (numbered at completion,
 * from the status). */
WP_MATCH_HOT int wp_match_recv_not_before(int depth, int source, int tag)
{
    return !wp_match_on || depth != 0 || source < 0 || tag == MPI_ANY_TAG;
}
/* A blocking receive. */
WP_MATCH_HOT int wp_match_pre_recv(struct wp_mpre *p, int depth, int source, int tag, MPI_Comm comm)
{
    if (wp_match_recv_not_before(depth, source, tag))
        return 1;
    return wp_match_pre(p, source, -1, tag, comm, 1);
}
/* Whether a blocking receive from a known source takes a number that is
 * not chosen: then it takes it here and is not timed for matching (the
 * wrappers' fast form of a receive, wrap/wrap.h, wp_recv_fast_number).
 * 0, with nothing numbered, where wp_match_pre_recv would time the call:
 * the channel's next number may be chosen (it reached the slot's next,
 * which is mostly the channel's next chosen number), or the receive is
 * not numbered before its call (matching off, a wildcard source or tag);
 * also where the thread's cache slot holds another channel, or the
 * communicator's handle now names another communicator (its descriptor
 * is dead), so that this makes no call: the fast form then keeps no
 * register across its work before the receive, and the full form
 * numbers the receive itself, filling the slot.  The caller is not
 * nested in an MPI call (wp_fast_thread).  Peeking at the counter first
 * is what lets a receive that must be timed go to the full form with no
 * number taken; with several threads calling MPI, the number is taken by
 * compare-and-swap, so that another thread's number in between is seen
 * before this one takes its own. */
WP_MATCH_HOT int wp_match_recv_unchosen(int source, int tag, MPI_Comm comm)
{
    if (!wp_match_on || source < 0 || tag == MPI_ANY_TAG)
        return 0;
    struct wp_mcache *ch = wp_mcache_of(source, tag, 1);
    if (__builtin_expect(ch->comm != comm || ch->peer != source || ch->tag != tag || ch->mc == NULL, 0))
        return 0;
    if (comm != MPI_COMM_WORLD && __atomic_load_n(&ch->mc->dead, __ATOMIC_RELAXED))
        return 0;
    uint64_t n = atomic_load_explicit(ch->count, memory_order_relaxed);
    if (__builtin_expect(n >= ch->next, 0))
        return 0;
    if (__builtin_expect(wp_match_serial, 1)) {
        atomic_store_explicit(ch->count, n + 1, memory_order_relaxed);
        return 1;
    }
    while (!atomic_compare_exchange_weak_explicit(ch->count, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
        if (n >= ch->next)
            return 0;
    return 1;
}
/* After a blocking send that was numbered before it (numbered 1) or is
 * numbered now (2, wp_mlast): record a chosen instance (lr: its own wait
 * is measured; a call that was not timed, enter 0, cannot be recorded and
 * is counted, wp_match_sent_check), then predict the choice of the
 * channel's next number for the thread's next send. */
void wp_match_sent_check(struct wp_mcache *ch, uint64_t k, int dest, struct wp_mcomm *mc, const struct wp_mcat *c,
                         uint64_t enter, int lr, uint64_t cause);
/* The choice of the number after k on the thread's last channel, whose
 * slot is ch. */
WP_MATCH_HOT void wp_mlast_next(const struct wp_mcache *ch, uint64_t k)
{
    uint64_t n = k + 1;
    unsigned bits = __atomic_load_n(&wp_match_bits, __ATOMIC_RELAXED);
    int cn = __builtin_expect(n >= ch->next, 0) && wp_match_chosen(n, bits, wp_match_dense_log2);
    wp_mlast.chosen_next = cn;
    wp_mlast.tw_next = cn && n >= WP_MATCH_FIRST ? bits + wp_match_thin(n, wp_match_dense_log2) : 0;
}
WP_MATCH_HOT void wp_mlast_set(MPI_Comm comm, int dest, int tag, struct wp_mcache *ch, uint64_t k)
{
    wp_mlast.comm = comm, wp_mlast.peer = dest, wp_mlast.tag = tag;
    wp_mlast.mc = ch->mc, wp_mlast.ch = ch;
    wp_mlast_next(ch, k);
}
/* After a blocking send whose fast form found it unchosen on the thread's
 * last channel (wp_match_send_unchosen): take its number when that is all
 * its numbering has to do, 1; else 0, with nothing taken, and the send is
 * numbered by wp_match_sent (numbered 2).  It is all when the channel is
 * still in the slot it had when it became the last one (a send on another
 * channel may have filled that slot since), its communicator was not
 * freed (its handle may now name another one, which wp_mlast_is cannot
 * tell), and neither the number taken nor the one after it reaches the
 * slot's next: then the number is not chosen and wp_mlast's next choice
 * stays "not chosen".  Only the thread's own slot and counter are read, no
 * hash: this is the whole numbering of a ping-pong's send, and a leaf, so
 * that the fast form's work after its call saves no register (wrap/wrap.c,
 * wp_sent_fast).  wp_mlast names a channel only while wp_match_serial
 * (wp_match_sent), so the counter is the thread's to increment. */
WP_MATCH_HOT int wp_mlast_take(void)
{
    const struct wp_mlast *l = &wp_mlast;
    struct wp_mcache *c = l->ch;
    if (__builtin_expect(c->mc != l->mc || c->peer != l->peer || c->tag != l->tag ||
                             __atomic_load_n(&l->mc->dead, __ATOMIC_RELAXED),
                         0))
        return 0;
    uint64_t n = atomic_load_explicit(c->count, memory_order_relaxed);
    if (__builtin_expect(n + 1 >= c->next, 0))
        return 0;
    atomic_store_explicit(c->count, n + 1, memory_order_relaxed);
    return 1;
}
WP_MATCH_HOT void wp_match_sent(const struct wp_mpre *p, const struct wp_mcat *c, int dest, int tag, MPI_Comm comm,
                                uint64_t enter, int lr, uint64_t cause)
{
    struct wp_mcomm *mc = p->mc;
    struct wp_mcache *ch = p->ch;
    uint64_t k = p->k;
    if (p->numbered == 2) {
        mc = wp_match_comm(comm);
        ch = mc ? wp_match_number(mc, mc->rank, dest, tag, 0, &k) : NULL;
        if (ch == NULL) {
            wp_mlast_end();
            return;
        }
        if (__builtin_expect(k >= ch->next, 0))
            wp_match_sent_check(ch, k, dest, mc, c, enter, lr, cause);
    } else if (__builtin_expect(p->chosen, 0)) {
        wp_match_p2p_record(c, p->chan, k, 0, dest, mc, enter, enter, lr ? wp_ticks() : enter, lr, cause);
    }
    /* Numbered as the thread's last channel (2), the channel is already
     * the one wp_mlast holds: only the next choice changes. */
    if (wp_match_serial) {
        if (p->numbered == 2)
            wp_mlast_next(ch, k);
        else
            wp_mlast_set(comm, dest, tag, ch, k);
    }
}

/* After a receive numbered before it: record it if chosen (waited from
 * enter to now); an unrecorded receive breaks the thread's link to its
 * last recorded one (wp_mprev). */
WP_MATCH_HOT void wp_match_post_recv(const struct wp_mpre *p, const struct wp_mcat *c, int source, uint64_t enter,
                                     uint64_t cause)
{
    wp_mprev.chan = 0;
    if (__builtin_expect(p->chosen, 0))
        wp_match_p2p_record(c, p->chan, p->k, 1, source, p->mc, enter, enter, wp_ticks(), 0, cause);
}

/* A message sent (blocking or not) on comm to dest with tag; enter is the
 * call's entry.  lr as above.  cause: what the thread computed before the
 * call (wp_thread_t.last_compute), named as the cause of its partner's
 * wait. */
WP_MATCH_HOT void wp_match_send(const struct wp_mcat *c, int dest, int tag, MPI_Comm comm, uint64_t enter, int lr,
                                 uint64_t cause)
{
    if (dest < 0) /* MPI_PROC_NULL */
        return;
    /* The thread's next blocking send on this channel must not take the
     * number this message takes (wp_mlast). */
    if (wp_mlast_is(dest, tag, comm))
        wp_mlast_end();
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t k;
    struct wp_mcache *ch = wp_match_number(mc, mc->rank, dest, tag, 0, &k);
    if (__builtin_expect(ch != NULL && k >= ch->next, 0))
        wp_match_p2p_due(c, ch, k, 0, dest, mc, enter, lr, cause);
}

/* A blocking receive that completed: source and tag from the status for
 * wildcards.  Waited from enter until now. */
WP_MATCH_HOT void wp_match_recv(const struct wp_mcat *c, int source, int tag, MPI_Comm comm,
                                 const MPI_Status *st, uint64_t enter, uint64_t cause)
{
    wp_mprev.chan = 0;
    if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) {
        if (st == MPI_STATUS_IGNORE)
            return;
        source = st->MPI_SOURCE;
        tag = st->MPI_TAG;
    }
    if (source < 0) /* MPI_PROC_NULL */
        return;
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t k;
    struct wp_mcache *ch = wp_match_number(mc, source, mc->rank, tag, 1, &k);
    if (__builtin_expect(ch != NULL && k >= ch->next, 0))
        wp_match_p2p_due(c, ch, k, 1, source, mc, enter, 0, cause);
}

/* A nonblocking receive posted at enter: numbered now when its source and
 * tag are known (the k-th posted receive of a channel takes its k-th
 * message), at completion otherwise; tracked until its completion call
 * when chosen or a wildcard. */
/* A request handle that a call made and that is not followed (another
 * call's request, or a receive not chosen): if a stale tracked receive had
 * the same handle value, it is forgotten. */
void wp_match_forget(MPI_Request req);

/* A wildcard receive: followed to its completion, numbered there. */
void wp_match_irecv_wild(MPI_Request req, int source, int tag, MPI_Comm comm, uint64_t enter, uint64_t cause);
/* A chosen receive with a known source: followed to its completion. */
void wp_match_irecv_chosen(MPI_Request req, struct wp_mcomm *mc, uint64_t chan, uint64_t k, int source, int tag,
                           uint64_t enter, uint64_t cause);
WP_MATCH_HOT void wp_match_irecv(MPI_Request req, int source, int tag, MPI_Comm comm, uint64_t enter,
                                 uint64_t cause)
{
    if (source == MPI_PROC_NULL)
        return;
    if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) {
        wp_match_irecv_wild(req, source, tag, comm, enter, cause);
        return;
    }
    /* Numbered as a blocking receive is, through the thread's channel
     * table: most receives are not chosen and cost a comparison. */
    struct wp_mcomm *mc = wp_match_comm(comm);
    uint64_t k;
    struct wp_mcache *ch = mc ? wp_match_number(mc, source, mc->rank, tag, 1, &k) : NULL;
    if (ch != NULL && wp_match_slot_chosen(ch, k)) {
        wp_match_irecv_chosen(req, mc, ch->chan, k, source, tag, enter, cause);
        return;
    }
    /* A stale followed request of the same handle value is forgotten. */
    if (__atomic_load_n(&wp_match_tracked, __ATOMIC_RELAXED))
        wp_match_forget(req);
}


/* A chosen nonblocking collective instance k of mc whose I-call returned
 * req (match/match.h, wp_match_icoll): kept in mc's batch and followed to
 * its completion call, which the completion wrappers find as they find
 * tracked receives. */
void wp_match_icoll_slow(MPI_Request req, struct wp_mcomm *mc, uint64_t k, int cls, int root, int kind,
                         uint64_t enter, uint64_t cause);

/* Persistent point-to-point requests.  MPI_Send_init and its kin (dir 0,
 * peer the destination) and MPI_Recv_init (dir 1, peer the source) leave
 * the request's channel for MPI_Start; each start of the request is one
 * instance on it, numbered at the start like MPI_Isend and MPI_Irecv
 * (a started receive is posted), and a receive is followed to its
 * completion call like MPI_Irecv's.  MPI_Request_free forgets the request
 * (any tracked receive or collective of that handle too). */
void wp_match_pinit(MPI_Request req, int dir, int peer, int tag, MPI_Comm comm);
void wp_match_request_free(MPI_Request req);
/* Persistent requests followed: MPI_Start looks its requests up only while
 * this is nonzero. */
extern int wp_match_npersist;
void wp_match_start_slow(const MPI_Request *reqs, int n, uint64_t enter, uint64_t cause);
static inline void wp_match_start(const MPI_Request *reqs, int n, uint64_t enter, uint64_t cause)
{
    if (__atomic_load_n(&wp_match_npersist, __ATOMIC_RELAXED))
        wp_match_start_slow(reqs, n, enter, cause);
}
/* The same for Fortran handles (count NULL: one). */
void wp_match_fstart(const void *freqs, const void *count, uint64_t enter, uint64_t cause);

/* A matched probe (MPI_Mprobe, or MPI_Improbe that found a message) took
 * the message that status describes off the queue: the k-th message of its
 * channel is matched here, whenever the program then receives it with
 * MPI_Mrecv or MPI_Imrecv (a receive of the same channel in between takes
 * the next message), so the instance is numbered and recorded now, with
 * the probe's call as its wait: a blocking probe is where a late sender is
 * waited for, and MPI_Mrecv only moves the data.  A status that cannot be
 * read (MPI_STATUS_IGNORE where waitprof cannot supply its own, mpi_f08)
 * leaves the channel's numbering short by one, counted. */
static inline void wp_match_mprobe(const struct wp_mcat *c, MPI_Comm comm, const MPI_Status *st, uint64_t enter,
                                   uint64_t cause)
{
    if (st == MPI_STATUS_IGNORE) {
        __atomic_fetch_add(&wp_match_cnt.unnumbered, 1, __ATOMIC_RELAXED);
        return;
    }
    wp_match_recv(c, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, st, enter, cause);
}

/* Completion calls.  Before the PMPI call, while receives are followed,
 * the handles are copied (up to WP_MATCH_PEND of them; n is then -1): the
 * handles of the requests that complete are gone after the call.  After
 * it, only if the call completed something, the completed ones whose
 * handle's filter bucket holds a followed receive are looked up under the
 * mutex and recorded with the call's category, waited from enter (the
 * call's entry, or now for a test, which read no clock; early: complete
 * on entry, no wait) until now.  So a poll that completes nothing costs
 * the copy, neither a lookup nor a lock.  Longer arrays are copied into a
 * buffer of the thread's (numbering.c, wp_long_room).  The Fortran
 * bindings copy their Fortran handles the same way while every followed
 * receive was posted through them (wp_match_firecv), and look the
 * completed ones up by their Fortran handles.  Other calls (arrays longer
 * than the buffer holds, Fortran calls while a followed request has no
 * Fortran handle) note their candidates before the call instead: n of
 * them, their positions in idx and their handles in key.  A followed wildcard
 * receive needs its status: the C takes return 1 while any wildcard
 * receive is followed (wp_match_wild), and the call is then given a
 * status array of its own when the program ignores them.  They return it
 * rather than store it in the struct, whose address the PMPI call might
 * have kept for all the compiler knows: in a register it costs the poll
 * no store and no reload. */
#define WP_MATCH_PEND 64
struct wp_mpend {
    int n;
    int idx[WP_MATCH_PEND];
    uintptr_t key[WP_MATCH_PEND];
    int ncopy;
    union {
        MPI_Request copy[WP_MATCH_PEND];
        MPI_Fint fcopy[WP_MATCH_PEND]; /* the Fortran bindings' (wp_match_ftake) */
    };
};
/* Callers test wp_match_tracked first (the generated wrappers do, before
 * the call; the tests wp_match_test_seen), so take does not test it
 * again.  The copy of up to WP_MATCH_PEND handles is inline, a poll loop's whole cost while receives
 * are followed (for one handle, MPI_Test's and MPI_Wait's, a single store:
 * out of line it cost MPI_Test 0.8 ns more on Open MPI and 1.4 on MPICH,
 * bench/poll_cost.c world); longer arrays are taken in
 * numbering.c. */
int wp_match_take_other(struct wp_mpend *p, const MPI_Request *reqs, int n);
/* The copy of n handles of size bytes each (n at most WP_MATCH_PEND) into
 * dst, p->copy or p->fcopy, for the lookup after the call: the C and the
 * Fortran takes' own. */
static inline __attribute__((always_inline)) void wp_take_copy(struct wp_mpend *p, void *dst, const void *src,
                                                              int n, size_t size)
{
    p->ncopy = n;
    p->n = -1;
    if (n <= 8) {
        /* A few handles by a loop: a call of the library's copy costs more
         * (bench/poll_cost's isendrecv, two handles).  The empty asm hides
         * the index from GCC, which otherwise turns the loop into "rep
         * movsq" for pointer handles (Open MPI's): 7.1 ns for two handles
         * against 2.2 by the loop on the AMD EPYC test machine (20
         * million copies each).  A count known when compiling (MPI_Test's
         * one) needs no asm: it becomes that many moves. */
        for (int i = 0; i < n; i++) {
            memcpy((char *)dst + (size_t)i * size, (const char *)src + (size_t)i * size, size);
            if (!__builtin_constant_p(n))
                __asm__("" : "+r"(i));
        }
        return;
    }
    /* Through an empty asm the compiler no longer knows the size is at
     * most 512 bytes, and calls the C library's copy instead of expanding
     * "rep movsq" in place: 64 handles took 3.3 ns that way and 13.5 ns
     * the other on this project's AMD EPYC test machine (a loop of 20
     * million copies). */
    size_t bytes = (size_t)n * size;
    __asm__("" : "+r"(bytes));
    memcpy(dst, src, bytes);
}
static inline int wp_match_take(struct wp_mpend *p, const MPI_Request *reqs, int n)
{
    if (n >= 0 && n <= WP_MATCH_PEND) {
        wp_take_copy(p, p->copy, reqs, n, sizeof *reqs);
        return __atomic_load_n(&wp_match_wild, __ATOMIC_RELAXED) != 0;
    }
    return wp_match_take_other(p, reqs, n);
}
/* done(i): whether request i completed: all (Wait, Waitall), one index
 * (Waitany), or a list (Waitsome).  c is the call's category for the
 * records; the tests, which record nothing themselves, pass
 * wp_mcat_none (all zero) rather than filling one on their path. */
extern const struct wp_mcat wp_mcat_none;
void wp_match_done(struct wp_mpend *p, const struct wp_mcat *c, const MPI_Status *sts, int all, int one,
                   const int *list, int nlist, uint64_t enter, int early);

/* The same for the Fortran bindings: requests, statuses, index and list
 * as Fortran passes them (integers; indices from 1), NULL where the call
 * has none; fstatuses NULL also where their layout is not the integer
 * array's (mpi_f08).  A receive posted through them is followed under its
 * Fortran handle too (wp_match_firecv: wp_match_irecv for the Fortran
 * handle at freq). */
void wp_match_firecv(const void *freq, int source, int tag, MPI_Comm comm, uint64_t enter, uint64_t cause);
/* A request the Fortran bindings just made (at freq) has a Fortran handle
 * a followed request had before, which may have left a twin behind (a
 * completion waitprof did not see, as a nested call's): the stale twin is
 * dropped, or a Fortran completion call of the new request would take it
 * for the old one.  The C wrappers do the same for C handles
 * (wp_match_forget). */
void wp_match_fforget(const void *freq);
/* Twins need a key bit no C handle has (numbering.c, wp_fkey). */
#if UINTPTR_MAX > 0xffffffffu
#define WP_FTWIN 1
#else
#define WP_FTWIN 0
#endif
/* Followed requests without a Fortran twin (numbering.c). */
extern unsigned long wp_match_untwinned;
void wp_match_ftake_other(struct wp_mpend *p, const void *freqs, const void *count);
/* While every followed request has a Fortran twin, the handles are
 * copied, inline as for C (wp_match_take), and only those the call
 * completed are looked up after it, by their Fortran handles: a completed
 * request's Fortran handle no longer converts to its C one.  Converting
 * each handle before the call took MPI_TESTANY over 64 receives from 246
 * to 420 ns on Open MPI (bench/fpoll_cost.F90).  The Fortran wrappers
 * pass the program's statuses as they are, and need none of waitprof's. */
static inline void wp_match_ftake(struct wp_mpend *p, const void *freqs, const void *count)
{
    int n = count ? *(const MPI_Fint *)count : 1;
    if (WP_FTWIN && n >= 0 && n <= WP_MATCH_PEND && __atomic_load_n(&wp_match_untwinned, __ATOMIC_RELAXED) == 0) {
        wp_take_copy(p, p->fcopy, freqs, n, sizeof(MPI_Fint));
        return;
    }
    wp_match_ftake_other(p, freqs, count);
}
void wp_match_fdone(struct wp_mpend *p, const struct wp_mcat *c, const void *fstatuses, int all, const void *findex,
                    const void *flist, const void *fcount, uint64_t enter, int early);

/* A Fortran status as a C one in *buf; MPI_STATUS_IGNORE when there is
 * none (NULL, MPI_F_STATUS_IGNORE). */
static inline const MPI_Status *wp_match_fstatus(const void *fst, MPI_Status *buf)
{
    if (fst == NULL || fst == MPI_F_STATUS_IGNORE || PMPI_Status_f2c(fst, buf) != MPI_SUCCESS)
        return MPI_STATUS_IGNORE;
    return buf;
}

#endif
