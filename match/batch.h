/* match/batch.h — the collective instances (match/batch.c): per
 * communicator a batch of the chosen ones, reduced over it when full, at
 * MPI_Comm_free and at MPI_Finalize. */
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
 * instances) and add the waits to the measured table. */
void wp_match_flush(struct wp_mcomm *mc);

#endif
