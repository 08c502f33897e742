/* sampler/counters.h — event counters read at every sample (WAITPROF_COUNTERS).
 *
 * Contract:
 * - wp_ctr_setup() (normal context, once, before the first thread opens its
 *   group) resolves the configured names against the backends it knows
 *   (today: Linux perf_event) and keeps those it can open on the calling
 *   thread.  Every name it drops is reported once, by one line that names
 *   it and says what to do; the run goes on without it.  The kept events
 *   are the same, in the same order, on every thread of the rank, so a
 *   counter is identified by its index 0..wp_ctr_count()-1 everywhere.
 * - wp_ctr_thread_open() (normal context, the thread being registered for
 *   sampling) opens the calling thread's group; wp_ctr_thread_close() closes
 *   it (thread exit, or the end of sampling).  A thread whose group cannot
 *   be opened counts nothing: its samples carry zero deltas.
 * - wp_ctr_read_sig() runs in the SIGPROF handler: one read() of the
 *   thread's group, and the counts since the thread's previous read into
 *   delta[0..wp_ctr_count()).  It allocates nothing and takes no lock;
 *   everything it touches was set up by wp_ctr_thread_open().
 * The backend contract is this small on purpose: a PAPI backend (dlopen'ed,
 *   PAPI_read on a per-thread EventSet) would fill the same three calls.
 */
#ifndef WP_SAMPLER_COUNTERS_H
#define WP_SAMPLER_COUNTERS_H

#include <stdint.h>

#define WP_CTR_MAX 8
#define WP_CTR_NAME_MAX 64

/* Resolve and probe names[0..n); report(line) for each one dropped.
 * Returns how many are kept. */
int wp_ctr_setup(const char (*names)[WP_CTR_NAME_MAX], int n, void (*report)(const char *line));
/* How many counters are kept (0: counting is off), their names and units
 * ("ns" for the clocks, "events" for the rest). */
int wp_ctr_count(void);
const char *wp_ctr_name(int i);
const char *wp_ctr_unit(int i);

/* The calling thread's group, by its registry slot index. */
int wp_ctr_thread_open(int index);
void wp_ctr_thread_close(int index);
/* Close every thread's group (the end of sampling, after no handler runs). */
void wp_ctr_close_all(void);

/* Counts since the previous read of thread index into delta[]; all zero
 * when the thread has no group.  Async-signal-safe. */
void wp_ctr_read_sig(int index, uint64_t *delta);
/* The same in steps, for a reader that keeps a baseline of its own
 * (sampler/ctr_split.h): the thread's counts as they stand (0, or -1 when
 * it has no group); the deltas of abs against the samples' baseline,
 * which moves to abs; and the deltas of abs against any baseline last[],
 * which moves to abs.  Async-signal-safe. */
int wp_ctr_read_abs_sig(int index, uint64_t *abs);
void wp_ctr_delta_sig(int index, const uint64_t *abs, uint64_t *delta);
void wp_ctr_since_sig(uint64_t *last, const uint64_t *abs, uint64_t *delta);

#endif
