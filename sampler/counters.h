/* sampler/counters.h — event counters read at every sample (WAITPROF_COUNTERS).
 *
 * Contract:
 * - wp_ctr_setup() (normal context, once, before the first thread opens its
 *   group) resolves the configured names against the two backends
 *   (sampler/ctr_backend.h) and keeps those it can count on the calling
 *   thread.  perf(1) names (task-clock, cycles...) go to Linux perf_event;
 *   PAPI names (PAPI_* presets, native names with "::" such as
 *   perf::TASK-CLOCK) go to PAPI, loaded with dlopen, and when PAPI is not
 *   built, not loadable or does not offer the event, to the perf_event
 *   event that counts exactly the same where there is one, with one line
 *   saying what PAPI lacked and what counted instead.  Every name it
 *   drops is reported once, by one line that names it and says why; the
 *   run goes on without it.  The kept counters keep the names the user
 *   gave, in the user's order, the same on every thread of the rank, so a
 *   counter is identified by its index 0..wp_ctr_count()-1 everywhere.
 * - wp_ctr_thread_open() (normal context, the thread being registered for
 *   sampling) opens the calling thread's perf_event group and PAPI
 *   EventSet, both or neither; wp_ctr_thread_close() (normal context, the
 *   thread itself: PAPI tears a set down on its owning thread only) takes
 *   them out of reach and closes them.  A thread whose counters cannot be
 *   opened counts nothing: its samples carry zero deltas.
 * - wp_ctr_read_sig() runs in the SIGPROF handler: one read() of the
 *   thread's group and one PAPI_read() of its EventSet (each only when it
 *   has events), and the counts since the thread's previous read into
 *   delta[0..wp_ctr_count()).  It allocates nothing and takes no lock;
 *   everything it touches was set up by wp_ctr_thread_open().  It may also
 *   be called in normal context, for the calling thread's own index, when
 *   the caller keeps the thread's handler from reading meanwhile (a busy
 *   flag): the previous counts are per thread and not atomic.
 */
#ifndef WP_SAMPLER_COUNTERS_H
#define WP_SAMPLER_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define WP_CTR_MAX 8
#define WP_CTR_NAME_MAX 64

/* Resolve and probe names[0..n); report(line) for each one dropped.
 * Returns how many are kept. */
int wp_ctr_setup(const char (*names)[WP_CTR_NAME_MAX], int n, void (*report)(const char *line));
/* How many counters are kept (0: counting is off), their names as the user
 * gave them, units ("ns" for the clocks, "events" for the rest) and the
 * backend that counts them ("perf_event" or "papi"). */
int wp_ctr_count(void);
const char *wp_ctr_name(int i);
const char *wp_ctr_unit(int i);
const char *wp_ctr_backend(int i);
/* The name as it appears in file names (rank.R.<file>.folded): '.' and
 * '/' become '_', everything else is kept (':' included). */
void wp_ctr_file_name(const char *name, char *out, size_t cap);

/* The calling thread's group, by its registry slot index. */
int wp_ctr_thread_open(int index);
void wp_ctr_thread_close(int index);
/* Close every thread's group (the end of sampling, after no handler runs).
 * Async-signal-safe: perf_event groups are closed, PAPI EventSets only
 * taken out of reach (their threads, or the exit, free them). */
void wp_ctr_close_all(void);

/* Counts since the previous read of thread index into delta[]; all zero
 * when the thread has no group.  Async-signal-safe. */
void wp_ctr_read_sig(int index, uint64_t *delta);
/* The same in steps, for a reader that keeps a baseline of its own
 * (sampler/ctr_split.h): the thread's counts as they stand (0, or -1 when
 * it has no group); the deltas of abs against the samples' baseline,
 * which moves to abs; and the deltas of abs against any baseline last[],
 * which moves to abs.  Async-signal-safe. */
#define WP_CTR_UNREAD UINT64_MAX /* in abs[]: that counter's backend could not be read */
int wp_ctr_read_abs_sig(int index, uint64_t *abs);
/* The perf_event groups' time enabled and time counting, summed over the
 * threads as of their last reads (ns): running < enabled means the kernel
 * multiplexed them, and their counts cover only that share of the time
 * (waitprof does not scale them).  Async-signal-safe. */
void wp_ctr_times_sig(uint64_t *enabled, uint64_t *running);
void wp_ctr_delta_sig(int index, const uint64_t *abs, uint64_t *delta);
void wp_ctr_since_sig(uint64_t *last, const uint64_t *abs, uint64_t *delta);

#endif
