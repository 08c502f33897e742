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
 * - wp_sampler_stop() stops every timer and waits until no handler runs;
 *   after it the stores are quiescent and may be read.
 * - Samples that land while any thread may hold the dynamic loader's lock
 *   (dlopen, dlclose, dl_iterate_phdr, waitprof's own dlsym) are dropped and
 *   counted, because the unwinder may call dl_iterate_phdr.
 */
#ifndef WP_SAMPLER_SAMPLER_H
#define WP_SAMPLER_SAMPLER_H

#include <stdint.h>

#include "state/thread.h"

#define WP_MAX_FRAMES 128

struct wp_sampler_config {
    int hz;              /* samples per second per thread */
    int cpu_clock;       /* 1: thread CPU time, 0: wall clock */
    int runtime_threads; /* 1: sample threads the MPI runtime creates */
    int max_frames;      /* frames kept per sample, <= WP_MAX_FRAMES */
};

/* Returns 0, or -1 after printing why sampling is off (the program runs on). */
int wp_sampler_start(const struct wp_sampler_config *cfg);
void wp_sampler_stop(void);
int wp_sampler_running(void);

/* Bracket code that may hold the loader lock. */
void wp_dl_begin(void);
void wp_dl_end(void);

/* Address range of the generated wrappers: a frame in it is an MPI call. */
int wp_is_wrapper_ip(uintptr_t ip);

#endif
