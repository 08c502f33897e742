/* profile/partial.h — the per-rank files, written safely even from a signal.
 *
 * Contract:
 * - wp_meta_write_sig() writes rank.R.meta: one "key=value" a line, the run's
 *   settings and this rank's counters, and "status=" saying whether the
 *   profile is complete or partial and why (format/format.h, wp_end).  It formats with its own code and
 *   writes with open/write/close only, so it is async-signal-safe.
 * - wp_partial_write_folded_sig() writes rank.R.folded from the stores without
 *   symbol tables: frames are "module+0xOFFSET" (from the unwinder's table of
 *   loaded objects, sampler/unwind.h, rebuilt in normal context at start-up
 *   and after each dlopen and dlclose) and the MPI call frame is named from
 *   the state record.  Beside it, first, rank.R.modules: the table of
 *   loaded objects (name, load address, file path, size, modification
 *   time, build-id; format/format.h) that `waitprof report` names those
 *   frames with afterwards (symbols/offline.h).  With WAITPROF_COUNTERS,
 *   after it one rank.R.<event>.folded per counter, the same lines weighted
 *   by the counter's deltas.  Also async-signal-safe.  It is what a rank
 *   killed by a signal leaves behind.
 * - wp_timeline_write_sig() writes rank.R.timeline (format/format.h): the
 *   threads' timelines (sampler/timeline.h) summed at the widest bin
 *   width, held samples split into Work and Stall in the proportions their
 *   store entries are classified in now (per class of time to the call's
 *   end), a call still in progress as the folded writers classify it, and
 *   per bin the call path its Stall samples' vote names.  name (may be
 *   NULL) gives a store entry's path symbolized ("main;solve;MPI_Recv"),
 *   or NULL; without one the frames are "module+0xOFFSET".  With a NULL
 *   name async-signal-safe.
 * All read the stores only after sampling was stopped (wp_sampler_stop_sig()).
 */
#ifndef WP_PROFILE_PARTIAL_H
#define WP_PROFILE_PARTIAL_H

#include <stdint.h>

#include "format/format.h"

struct wp_totals {
    uint64_t samples, dropped_full, dropped_dl, unwind_fail, truncated, lib_unwinds, slow_unwinds, by_source, by_estimate,
        paused_signals, unselected_signals;
    uint64_t handler_calls, handler_ns, handler_median_ns;
    uint64_t merged;     /* weight kept under shortened stacks (memory budget) */
    uint32_t stride_max; /* largest timer period in configured periods */
    int threads;
};

/* Sum the counters of every registered thread. */
void wp_totals_collect_sig(struct wp_totals *t);

/* Reserve the memory the signal-time writer sorts in (normal context). */
void wp_partial_reserve(void);
int wp_meta_write_sig(const char *dir, int rank, enum wp_end end);
int wp_partial_write_folded_sig(const char *dir, int rank);

struct wp_store;
struct wp_stack_entry;
typedef const char *(*wp_tl_namer)(void *arg, const struct wp_store *s, const struct wp_stack_entry *e);
int wp_timeline_write_sig(const char *dir, int rank, wp_tl_namer name, void *arg);

#endif
