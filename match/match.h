/* match/match.h — matched instances: exact wait states from both sides of a
 * message or a collective call (issue 16; doc/design.md "Matched instances").
 *
 * Contract:
 * - Every rank numbers its point-to-point messages per channel (the
 *   communicator's id, sender and receiver ranks in it, tag) and its
 *   collective calls per communicator.  MPI's ordering rules make the k-th
 *   message sent on a channel the k-th one received on it, and every member
 *   calls a communicator's collectives in the same order, so both sides
 *   number an instance alike without any message.
 * - A deterministic function of k chooses the instances both sides record
 *   (wp_match_chosen): the first WP_MATCH_FIRST of every channel, then one
 *   in 2^rate_log2, in blocks of consecutive numbers (so that a chain of
 *   waits through ranks is recorded whole: match/exchange.c), and beyond
 *   the first 2^dense_log2 numbers half as many per doubling of the number
 *   (wp_match_thin), each such instance weighed by what it stands for in
 *   the measured means (match/measured.c).  A record holds entry and exit
 *   times, the call site and the category the estimator records the call
 *   under (fallback/stats.h), so a measured wait replaces the estimate of
 *   exactly that category.
 * - Communicator ids agree across ranks without messages: MPI_COMM_WORLD
 *   has a fixed id; a new communicator's id is a hash of its parent's, of
 *   its members' ranks in MPI_COMM_WORLD and of how many communicators
 *   with that parent and those members this process created before (every
 *   member takes part in those creations, in the same order).
 *   Intercommunicators and communicators made by calls not in the table
 *   (MPI_Comm_idup, spawn, connect) are not numbered: their calls keep the
 *   estimate.
 * - Which calls are instances: point-to-point messages, whether sent or
 *   received blocking, nonblocking or by a started persistent request
 *   (numbered at the MPI_Start, as a nonblocking call is at its call), and
 *   the messages a matched probe takes (numbered at MPI_Mprobe or at the
 *   MPI_Improbe that found them, which take them off the queue; the wait
 *   is the probe's); collective calls, blocking or nonblocking (an
 *   I-collective numbered at its I-call, its wait measured in the Wait or
 *   Test call that completes it, match/batch.c).  A request freed with
 *   MPI_Request_free, or never completed, keeps the estimate.
 * - Point-to-point records stay on the rank until MPI_Finalize
 *   (match/exchange.c); when their buffer fills, the rate is halved and the
 *   records the lower rate would not have chosen are dropped (a subset on
 *   both sides: a rank's chosen set at a lower rate is contained in its set
 *   at a higher one).  Collective records are reduced over the
 *   communicator in batches (one MPI_Allreduce per batch: when a batch
 *   fills, at MPI_Comm_free and at MPI_Finalize), so their memory is fixed.
 *   A batch that fills at a nonblocking instance is reduced only at the
 *   next chosen blocking one (an I-call synchronizes nothing, so a
 *   reduction there could deadlock a correct program); the chosen
 *   nonblocking instances until then are not kept.
 * - A send's record names the thread's last recorded receive before it
 *   (wp_mprev); after matching, Late Sender waits are followed back
 *   through ranks that waited to the delays that started them, in rounds
 *   between the ranks that talked: each wait's cause is direct
 *   (short-term cost) or propagated (long-term cost).  Where all ranks'
 *   waits are few, every rank runs those rounds itself on the waits of all,
 *   gathered in one collective (match/exchange.c, wp_prop_gather).
 * - Numbering runs in the wrappers, in normal context, never in a signal
 *   handler.  It takes no lock: channel counters are claimed with a
 *   compare-and-swap and counted with an atomic add (a plain one when only
 *   one thread calls MPI at a time); records are appended under a mutex,
 *   for chosen instances only.
 */
#ifndef WP_MATCH_MATCH_H
#define WP_MATCH_MATCH_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "match/batch.h"
#include "match/clock.h"
#include "match/measured.h"
#include "match/numbering.h"
#include "match/types.h"

/* The next collective number of mc.  Counted without an atomic
 * read-modify-write when one thread calls MPI at a time, as channels are. */
WP_MATCH_HOT uint64_t wp_match_coll_number(struct wp_mcomm *mc)
{
    if (wp_match_serial) {
        uint64_t k = atomic_load_explicit(&mc->coll, memory_order_relaxed);
        atomic_store_explicit(&mc->coll, k + 1, memory_order_relaxed);
        return k;
    }
    return atomic_fetch_add_explicit(&mc->coll, 1, memory_order_relaxed);
}

/* Whether collective instance k of mc is chosen: one comparison below
 * mc->cnext (wp_match_after), the hash at it (wp_match_coll_due, cold). */
WP_MATCH_HOT int wp_match_coll_chosen(struct wp_mcomm *mc, uint64_t k)
{
    if (__builtin_expect(k < atomic_load_explicit(&mc->cnext, memory_order_relaxed), 1))
        return 0;
    return wp_match_coll_due(mc, k);
}

/* A collective call on comm that returned: entered at enter. */
WP_MATCH_HOT void wp_match_coll(const struct wp_mcat *c, MPI_Comm comm, int is_root, uint64_t enter, uint64_t cause)
{
    /* Propagation is followed through point-to-point calls only: a
     * collective ends the thread's link to its last receive. */
    wp_mprev.chan = 0;
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc == NULL)
        return;
    uint64_t k = wp_match_coll_number(mc);
    if (__builtin_expect(wp_match_coll_chosen(mc, k), 0))
        wp_match_coll_record(c, mc, k, is_root, enter, cause);
}

/* A nonblocking collective on comm whose I-call entered at enter and
 * returned req: it takes the communicator's next collective number now
 * (MPI orders blocking and nonblocking collectives of a communicator alike
 * on every member); its wait is its completion call's (match/batch.c).  cls
 * is its wait class, root its root (-1: none), kind_root and kind_other the
 * role byte of a completion category that waits for it alone, on its root
 * and elsewhere (the estimator's request kind, opaque here). */
static inline void wp_match_icoll(MPI_Request req, MPI_Comm comm, int cls, int root, int kind_root, int kind_other,
                                  uint64_t enter, uint64_t cause)
{
    struct wp_mcomm *mc = wp_match_comm(comm);
    if (mc != NULL) {
        uint64_t k = wp_match_coll_number(mc);
        if (__builtin_expect(wp_match_coll_chosen(mc, k), 0)) {
            wp_match_icoll_slow(req, mc, k, cls, root, root >= 0 && root == mc->rank ? kind_root : kind_other, enter,
                                cause);
            return;
        }
    }
    /* A stale followed request of the same handle value is forgotten. */
    wp_match_forget(req);
}

/* At MPI_Finalize, collective over wcomm (a duplicate of MPI_COMM_WORLD),
 * before the profile is built and the estimator writes its rows: reduce
 * the collective batches still open, send every point-to-point record to
 * its partner's rank and match.  Runs once; returns 0. */
int wp_match_finalize(MPI_Comm wcomm, int rank, int size);

/* At MPI_Init, the same on every rank: the most elements the propagation
 * of wp_match_finalize gathers on every rank instead of running in rounds
 * of messages (WAITPROF_TEST_GATHER; match/exchange.c). */
void wp_match_gather_limit(size_t n);

#endif
