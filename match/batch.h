/* match/batch.h — the collective instances (match/batch.c): per
 * communicator a batch of the chosen ones, reduced over it when full, at
 * MPI_Comm_free and at MPI_Finalize; and the nonblocking ones followed
 * from their I-call to their completion. */
#ifndef WP_MATCH_BATCH_H
#define WP_MATCH_BATCH_H

#include <mpi.h>
#include <stdint.h>

#include "match/types.h"

/* Keep a chosen collective instance k of mc: entered at enter (ticks),
 * is_root for rooted collectives, cause as for point-to-point records. */
void wp_match_coll_record(const struct wp_mcat *c, struct wp_mcomm *mc, uint64_t k, int is_root, uint64_t enter,
                          uint64_t cause);
/* Reduce mc's batch over mc (collective: every member has the same chosen
 * instances) and add the waits to the measured table; at_finalize: from
 * wp_match_finalize, whose reductions wait with sched_yield. */
void wp_match_flush(struct wp_mcomm *mc, int at_finalize);

/* Keep a chosen nonblocking collective instance k of mc, whose I-call
 * entered at enter: cls is its wait class (WP_CLASS_NXN, _BARRIER, _ONE2N,
 * _N2ONE), root its root's rank in mc (-1: none), kind the role byte of the
 * category that a completion call waiting for it alone is recorded under
 * (the estimator's request kind, fallback/stats.h; opaque here).  Returns
 * its slot in the table of followed instances plus one, for the completion
 * call (wp_match_nbc_done), or 0 when it is not followed (the table is
 * full, or the batch is: see match/batch.c). */
uint32_t wp_match_icoll_record(struct wp_mcomm *mc, uint64_t k, int cls, int root, int kind, uint64_t enter,
                               uint64_t cause);
/* The followed instances slots[0..n) (as wp_match_icoll_record returned
 * them) completed in one completion call of category c, which waited from
 * c0 to c1 (ticks); c->site 0: a test, which waited for nothing.  Takes
 * wp_match_mu: call it without. */
void wp_match_nbc_done(const uint32_t *slots, int n, const struct wp_mcat *c, uint64_t c0, uint64_t c1);
/* With wp_match_mu held: a followed instance whose request the program
 * freed, or whose handle came back for another request, is not followed
 * any more (its wait keeps the estimate). */
void wp_match_nbc_forget_locked(uint32_t slot);

#endif
