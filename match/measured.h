/* match/measured.h — the results (match/measured.c): the measured waits
 * per category, who caused them, the held samples' threshold, and the
 * counters. */
#ifndef WP_MATCH_MEASURED_H
#define WP_MATCH_MEASURED_H

#include <stddef.h>
#include <stdint.h>

#include "match/types.h"

/* The run's thinning of matched instances (match/types.h, wp_match_thin;
 * WAITPROF_MATCH_DENSE as a power of two, 0 for none), the same on every
 * rank: set by wp_match_init, read by the numbering and by the measured
 * means, which weigh each instance by wp_match_weight. */
extern unsigned wp_match_dense_log2;

/* The measured wait of a category that had calls calls, in ns, with the
 * half-width of its 95 % confidence interval in *ci_ns and the matched
 * instances in *matched; -1 when nothing was matched there (the estimate
 * stays). */
int64_t wp_match_wait(const struct wp_mcat *c, uint64_t calls, uint64_t *ci_ns, uint64_t *matched);

/* Who caused the waits of a category (match/measured.c): per partner rank
 * (in MPI_COMM_WORLD) and what it computed before its call (a hash of a
 * store entry on that rank; 0: it had no sample yet), the matched waits it
 * caused and their number: wp_match_cause_count() rows, i from 0, in the
 * order they were first added; scale a row by wp_match_scale() of its
 * category (set by wp_match_wait) for the figure of all calls. */
const struct wp_cause *wp_match_cause_at(size_t i);
size_t wp_match_cause_count(void);
double wp_match_scale(const struct wp_mcat *c);
/* Whether this rank's computation (a store entry's hash) caused a wait on
 * another rank: its call path goes into rank.R.paths.  Reads memory only. */
int wp_match_cause_is_used(uint64_t cause);

/* The share of its time a category spent waiting, from its matched calls
 * (each wait at most its call): the waits over the durations, each
 * stratum's means times the calls it stands for, as wp_match_wait weighs
 * them; in [0, 1], keyed without the site, as held samples are
 * (sampler/store.h).  Negative when no call of the category was matched.
 * Reads memory only. */
double wp_match_wait_share(int fn, int sclass, int role);

/* Counters for the meta file and the log: records kept, instances matched
 * and unmatched (their partner left no record), records dropped when the
 * buffer was full, and receives that could not be numbered (a wildcard
 * whose status was ignored where waitprof cannot supply one, too many
 * receives in flight, a full channel table) or matched inconsistently,
 * and chosen blocking sends that went untimed on a wrong prediction
 * (match/numbering.h, wp_mlast).
 * Written under the module's mutex; the meta writer, in a signal handler
 * too, reads them with plain loads (a torn value is only a count). */
extern struct wp_match_counts wp_match_cnt;

#endif
