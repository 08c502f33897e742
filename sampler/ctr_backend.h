/* sampler/ctr_backend.h — what the counters' dispatch (sampler/counters.c)
 * asks of its two backends, and the name rules it decides by.  Internal to
 * the sampler; sampler/counters.h is the contract the rest of waitprof
 * sees.
 *
 * Contract of a backend (ctr_perf.c: Linux perf_event; ctr_papi.c: PAPI,
 * loaded with dlopen at run time):
 * - setup (normal context, the thread calling wp_ctr_setup, once): *_reset
 *   forgets every event, *_add tries one more event on a trial group or
 *   EventSet of the calling thread and keeps it when it can be counted
 *   together with those kept before it (its slot is the order of the
 *   successful adds), *_trial_end closes the trial.
 * - *_thread_open (normal context, the thread itself): the thread's own
 *   group or EventSet with every kept event, all or nothing, published to
 *   *_read_sig only once it counts.  *_thread_close (normal context, the
 *   thread itself) takes it out of reach, then tears it down.
 *   *_close_all (any context, async-signal-safe) takes every thread's out
 *   of reach and frees what can be freed there.
 * - *_read_sig writes the counts since the thread's open (not deltas: the
 *   dispatch keeps the previous values) into val[slot]; -1 when the thread
 *   has nothing published.  Async-signal-safe, and callable from normal
 *   context too, on the calling thread's own index.
 */
#ifndef WP_SAMPLER_CTR_BACKEND_H
#define WP_SAMPLER_CTR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

enum wp_ctr_be { WP_CTR_BE_NONE = -1, WP_CTR_BE_PERF = 0, WP_CTR_BE_PAPI = 1 };

/* --- names (counters.c) ------------------------------------------------------ */

/* Which backend a name is asked of: PAPI for presets ("PAPI_" and more)
 * and for native names (they contain "::", e.g. perf::TASK-CLOCK), Linux
 * perf_event for the perf(1) names it knows, none for anything else. */
enum wp_ctr_be wp_ctr_backend_of(const char *name);
/* The perf(1) name of the perf_event event that counts exactly what the
 * PAPI name counts (PAPI_TOT_CYC: cycles; perf::TASK-CLOCK: task-clock),
 * or NULL when there is none. */
const char *wp_ctr_perf_equivalent(const char *name);
/* An event's unit by its name: "ns" for the clocks (task-clock,
 * cpu-clock and their perf:: names), "events" for the rest. */
const char *wp_ctr_unit_of(const char *name);
/* (wp_ctr_file_name: sampler/counters.h.) */
/* "perf_event" or "papi", as rank.R.meta's counters= entries say. */
const char *wp_ctr_backend_name(enum wp_ctr_be be);

/* --- Linux perf_event (ctr_perf.c) ------------------------------------------ */

/* The index of a perf(1) name (or alias, or the perf:: native form when
 * native is set: case-insensitive, PERF_COUNT_SW_TASK_CLOCK too) in the
 * backend's table; -1 when unknown. */
int wp_perf_lookup(const char *name, int native);
const char *wp_perf_event_name(int ev);
int wp_perf_event_is_clock(int ev);
int wp_perf_event_is_hw(int ev);
/* The known names, comma-separated, for a message. */
const char *wp_perf_known(void);
void wp_perf_reset(void);
/* 0 and the event kept, or -1 with errno from perf_event_open. */
int wp_perf_add(int ev);
void wp_perf_trial_end(void);
int wp_perf_count(void);
int wp_perf_thread_open(int index);
void wp_perf_thread_close(int index);
void wp_perf_close_all(void);
int wp_perf_read_sig(int index, uint64_t *val);
/* The groups' time enabled and time on the PMU, summed over the threads
 * as of their last reads (ns).  Async-signal-safe. */
void wp_perf_times_sum(uint64_t *enabled, uint64_t *running);

/* --- PAPI (ctr_papi.c) ---------------------------------------------------------- */

/* Load and start PAPI once (dlopen, PAPI_library_init, PAPI_thread_init);
 * 0 when it can be asked for events, else -1 and why[] says why in words
 * that fit "NAME is a PAPI name, and <why>; counted X with Linux
 * perf_event instead" (built without PAPI, libpapi not found, PAPI failed
 * to start). */
int wp_papi_start(char *why, size_t cap);
/* "7.0.0", once started. */
const char *wp_papi_version(void);
void wp_papi_reset(void);
/* 0 and the event kept, or -1 and why[] names the event and what PAPI
 * lacked ("PAPI 7.0.0 offers no event X here (0 events available: no
 * hardware PMU?)"). */
int wp_papi_add(const char *name, char *why, size_t cap);
void wp_papi_trial_end(void);
int wp_papi_count(void);
int wp_papi_thread_open(int index);
void wp_papi_thread_close(int index);
void wp_papi_close_all(void);
int wp_papi_read_sig(int index, uint64_t *val);

#endif
