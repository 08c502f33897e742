/* sampler/internal.h — what the sampler's files share; nothing outside
 * sampler/ includes it.
 *
 * The sampler's files have one job each (store.c, the sample store,
 * timeline.c, the time bins of samples per state, counters.c, the
 * counters each sample reads, with its backends ctr_perf.c and ctr_papi.c,
 * and ctr_split.c, the same read at MPI entry and exit, have their own
 * headers):
 * - sampler.c starts and stops sampling and registers threads (the
 *   pthread_create hook, the memory pool the stores are carved from);
 * - timers.c arms a thread's timers on its sampling grid;
 * - overflow.c gives a thread a counter's overflow as its trigger instead
 *   (WAITPROF_TIMER=overflow:EVENT@PERIOD); timers.c hands it the arming;
 * - pause.c pauses and resumes sampling (MPI_Pcontrol) and reports the
 *   sampled intervals;
 * - handler.c is the SIGPROF handler (which also slows a thread's timers
 *   down when its store fills), and the settling of the samples it held for
 *   a call that may wait;
 * - objects.c keeps the unwinder's table of loaded objects current across
 *   dlopen and dlclose and guards the loader's calls;
 * - unwind.c unwinds a stack from the objects' DWARF rules;
 * - sleeps.c keeps the sampling signal from cutting the program's sleeps
 *   and timed waits short (it needs none of the above).
 * A function whose name ends in _sig is called from the SIGPROF handler
 * (some also from normal context) and is async-signal-safe; its comment
 * says why.
 */
#ifndef WP_SAMPLER_INTERNAL_H
#define WP_SAMPLER_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "sampler/sampler.h"
#include "sampler/store.h"
#include "sampler/unwind.h"
#include "state/thread.h"

/* The largest stride: the rate never drops below 1/1024 of the configured
 * one, nor below 1 Hz. */
#define WP_STRIDE_MAX 1024

extern struct wp_sampler_config wp_smp_cfg;
extern int wp_smp_started;        /* wp_sampler_start ran; never reset */
extern int wp_smp_running;        /* handlers store samples; read with atomics */
extern int wp_smp_paused;         /* MPI_Pcontrol(0) is in force; read with atomics */
extern int wp_smp_has_tsel;       /* START, STOP or WINDOW is set */
extern uint64_t wp_smp_period_ns; /* the configured sampling period */
extern uint64_t wp_smp_tick_ns;   /* the kernel's tick when expirations are put on it, else 0 */
extern int wp_smp_ovf;            /* 1: counter overflow is the trigger (overflow.c), not timers */

/* The calling thread's rules for sampler/unwind.c (carved from the pool
 * with its store) and the top of its stack.  Initial-exec TLS, like
 * wp_self: the handler reads them without the lazy allocation that could
 * deadlock (doc/design.md, "Sampling"). */
extern __thread struct wp_cfi_cache *wp_cfi_mine __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t wp_stack_lo __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t wp_stack_hi __attribute__((tls_model("initial-exec")));

/* timers.c */
int wp_timers_for(uint64_t p);
uint64_t wp_mono_ns_sig(void);
int wp_disarm_sig(struct wp_slot *slot);
void wp_timers_delete(struct wp_slot *slot);
int wp_arm_in_sig(struct wp_slot *slot, uint32_t stride, uint64_t first_ns);
int wp_arm_sig(struct wp_slot *slot, uint32_t stride);
void wp_skip_unselected_sig(struct wp_slot *slot, struct wp_store *s, uint64_t rel, uint64_t period);

/* overflow.c: setup (normal context, once) says why it cannot in one
 * line through say() and returns -1, and the sampler then uses timers;
 * thread_open is the registering thread's, before its slot is published. */
int wp_ovf_setup(const char *name, uint64_t period, void (*say)(const char *line));
int wp_ovf_thread_open(struct wp_slot *slot);
int wp_ovf_arm_sig(struct wp_slot *slot, uint32_t stride);
int wp_ovf_disarm_sig(struct wp_slot *slot);
void wp_ovf_close(struct wp_slot *slot);
int wp_ovf_is_mine_sig(struct wp_slot *slot, const siginfo_t *si);
uint64_t wp_ovf_weight_sig(struct wp_slot *slot, uint32_t stride);
void wp_ovf_forget_sig(struct wp_slot *slot);

/* pause.c */
void wp_resume_own_sig(struct wp_slot *slot, struct wp_store *s);
void wp_pause_own_sig(struct wp_slot *slot, struct wp_store *s);

/* handler.c */
void wp_on_sigprof(int sig, siginfo_t *si, void *ucv);

#endif
