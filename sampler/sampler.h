/* sampler/sampler.h — per-thread timers and the SIGPROF handler.
 *
 * Contract:
 * - wp_sampler_start() (called once, from the MPI_Init wrapper, after the
 *   configuration is known) installs the handler and starts sampling the
 *   calling thread.  Application threads created afterwards are sampled from
 *   their first instruction (pthread_create is interposed); threads created
 *   while their creator is inside an MPI call belong to the MPI runtime and
 *   are not sampled unless WAITPROF_RUNTIME_THREADS=1.
 * - The handler reads the thread's MPI state and unwinds the interrupted
 *   stack into the thread's preallocated store (sampler/store.h).  It does
 *   not allocate, lock, or call MPI or dlsym.
 * - With the wall clock the expirations fall on the kernel's tick
 *   (WAITPROF_TIMER=tick, the default; sampler/timers.c says why and how), so all
 *   threads sample at the same instants; WAITPROF_TIMER=free gives each
 *   thread one periodic timer started with it.
 * - WAITPROF_TIMER=overflow:EVENT@PERIOD replaces the timers by one
 *   perf_event per thread that signals the thread at every PERIOD counts
 *   of its own EVENT (sampler/overflow.c): with task-clock, a sample per
 *   PERIOD ns of the thread's CPU time.  Where the event cannot be opened,
 *   one line says so and the timers sample.
 * - wp_sampler_stop_sig() stops every timer and waits until no handler runs;
 *   after it the stores are quiescent and may be read, and the loader's
 *   calls no longer rebuild the table of objects (sampler/unwind.h,
 *   wp_cfi_retire_sig).  The termination
 *   handler calls it too: atomics, timer_delete, sched_yield and close only.
 * - Samples that land while any thread may hold the dynamic loader's lock
 *   (state/thread.h, wp_dl_held) are dropped and counted, because the
 *   unwinder may call dl_iterate_phdr.
 */
#ifndef WP_SAMPLER_SAMPLER_H
#define WP_SAMPLER_SAMPLER_H

#include <stdint.h>

#include "format/select.h"
#include "state/thread.h"

#define WP_MAX_FRAMES 128

struct wp_sampler_config {
    int hz;              /* samples per second per thread */
    int cpu_clock;       /* 1: thread CPU time, 0: wall clock */
    int free_timer;      /* 1: free-running timers, 0: on the kernel's tick (wall clock) */
    int runtime_threads; /* 1: sample threads the MPI runtime creates */
    int max_frames;      /* frames kept per sample, <= WP_MAX_FRAMES */
    uint64_t memory;     /* bytes for all of the rank's sample stores */
    struct wp_timesel tsel; /* when to sample, relative to t0_ns */
    uint64_t t0_ns;      /* MPI_Init, wp_now_ns() */
    /* WAITPROF_COUNTERS as parsed (state/config.h): the events each sample
     * reads (sampler/counters.h); ncounters 0: none. */
    const char (*counters)[64];
    int ncounters;
    /* WAITPROF_COUNTERS_SPLIT=1 with full wrappers: read the counters at
     * MPI entry and exit too (sampler/ctr_split.h). */
    int counters_split;
    /* WAITPROF_TIMER=overflow:EVENT@PERIOD (sampler/overflow.c): a sample
     * every period counts of the event on each thread, instead of timers;
     * NULL or "": timers.  hz then sets no rate: only the timeline's
     * bins and the floor of the rate halving still follow it. */
    const char *overflow_event;
    uint64_t overflow_period;
};

/* Memory budget: one pool of cfg->memory bytes is mapped at start-up; the
 * thread that starts the sampler gets a quarter of it, each later thread a
 * sixteenth while there is room.  A thread that finds no room is not
 * sampled: it is counted (wp_sampler_unsampled_threads) and one line says
 * so.  When a thread's store fills up, its timer period is doubled (the
 * rate halved) and later samples weigh twice as much, so the weighted
 * counts stay in units of the configured period. */
uint64_t wp_sampler_unsampled_threads(void);
uint64_t wp_sampler_pool_bytes(void);

/* MPI_Pcontrol: 0 pauses sampling on this rank, anything else resumes it.
 * Normal context.  A pause stops the timers too, so a paused stretch costs
 * no signals: each thread's next signal (within one period) stops its own
 * timer; resuming restarts them.  The toggles are kept (up to
 * WP_TOGGLES_MAX) so that the sampled intervals can be reported. */
#define WP_TOGGLES_MAX 1024
void wp_sampler_pause(int paused, uint64_t now_ns);
/* Sampled intervals of [t0, end): the time selection intersected with the
 * time not paused; fn is called for each, in order.  Returns the selected
 * nanoseconds; *lost_toggles says how many toggles did not fit the log. */
uint64_t wp_sampler_intervals(uint64_t end_ns, void (*fn)(uint64_t a, uint64_t b, void *arg), void *arg,
                              uint64_t *lost_toggles);

/* Returns 0, or -1 after printing why sampling is off (the program runs on). */
int wp_sampler_start(const struct wp_sampler_config *cfg);
/* The tick the expirations are put on (WAITPROF_TIMER=tick with a wall
 * clock), in ns; 0 when the timers run free. */
uint64_t wp_sampler_tick_ns(void);
/* The overflow trigger's event (its perf name) and *period when it is the
 * trigger; NULL when timers are (none asked for, or it could not be
 * opened and the sampler fell back to them). */
const char *wp_sampler_overflow(uint64_t *period);
void wp_sampler_stop_sig(void);
int wp_sampler_running(void);

/* Move the samples the handler held for the calling thread's current call
 * into its store, Stall below threshold ticks from the call's entry.
 * Normal context (a wrapper, as the call returns). */
void wp_sampler_settle(wp_thread_t *t, uint64_t threshold);
/* A recorded call's samples: held until its category's share of time
 * waited is known, at MPI_Finalize (sampler/store.h,
 * wp_pending_flush_held). */
void wp_sampler_settle_held(wp_thread_t *t, uint64_t duration, int sclass, int role);

#endif
