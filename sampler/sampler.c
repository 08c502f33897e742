/* sampler/sampler.c — starting and stopping the sampler, and the threads
 * it samples.  See sampler/sampler.h for the contract, sampler/internal.h
 * for how the sampler's files divide the work. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sampler/counters.h"
#include "sampler/ctr_split.h"
#include "sampler/internal.h"
#include "sampler/timeline.h"
#include "state/log.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define WP_EXPORT __attribute__((visibility("default")))

struct wp_sampler_config wp_smp_cfg;
int wp_smp_started;
int wp_smp_running;
int wp_smp_paused;
int wp_smp_has_tsel;
uint64_t wp_smp_period_ns;
uint64_t wp_smp_tick_ns;

__thread struct wp_cfi_cache *wp_cfi_mine __attribute__((tls_model("initial-exec")));
__thread uintptr_t wp_stack_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t wp_stack_hi __attribute__((tls_model("initial-exec")));

/* The pool all stores are carved from (see sampler.h), and what it could
 * not serve. */
static char *wp_pool;
static size_t wp_pool_size, wp_pool_used;
static uint64_t wp_unsampled;

typedef int (*wp_pthread_create_t)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static wp_pthread_create_t real_pthread_create;

/* Resolve the interposed functions before anything can need them (and long
 * before a timer exists), so no handler ever runs while dlsym does. */
__attribute__((constructor)) static void wp_sampler_resolve(void)
{
    real_pthread_create = (wp_pthread_create_t)dlsym(RTLD_NEXT, "pthread_create");
}

int wp_sampler_running(void)
{
    return __atomic_load_n(&wp_smp_running, __ATOMIC_ACQUIRE);
}

/* Register the calling thread and start its timer.  Normal context. */
static int wp_thread_begin(void)
{
    struct wp_slot *slot = wp_registry_claim();
    if (slot == NULL) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
            wp_log_always("waitprof: more than %d threads; later threads are not sampled",
                          WP_MAX_THREADS);
        return -1;
    }
    /* A quarter of the pool for the first thread, a sixteenth for each
     * later one: most MPI programs sample one thread, and a threaded one
     * still gets a dozen threads sampled.  One atomic add reserves it. */
    size_t want = slot->index == 0 ? wp_pool_size / 4 : wp_pool_size / 16;
    want &= ~(size_t)63;
    size_t at = __atomic_fetch_add(&wp_pool_used, want, __ATOMIC_ACQ_REL);
    /* The slice starts with the thread's unwinding rules (8 KiB). */
    size_t rules = (sizeof(struct wp_cfi_cache) + 63) & ~(size_t)63;
    slot->store = (wp_pool && at + want <= wp_pool_size && want > rules)
                      ? wp_store_create_in(wp_pool + at + rules, want - rules, wp_ctr_count())
                      : NULL;
    if (slot->store == NULL) {
        if (__atomic_fetch_add(&wp_unsampled, 1, __ATOMIC_ACQ_REL) == 0)
            wp_log_always("waitprof: rank %d: the sample memory (WAITPROF_MEMORY, %zu bytes) is all given out; "
                          "thread %d and any later thread are not sampled (counted in threads_unsampled); "
                          "raise WAITPROF_MEMORY to sample them",
                          wp_log_rank, wp_pool_size, slot->index);
        return -1;
    }
    slot->store->stride = 1;
    /* The thread's timeline (sampler/timeline.h): its own mapping, outside
     * WAITPROF_MEMORY, so that a fixed 48 KiB (and a header) per thread
     * neither shrinks the store's budget nor depends on it.  Bins of a few
     * sampling periods from the run's start; without the mapping the
     * thread has none and its samples are only missing from the timeline. */
    void *tl = mmap(NULL, sizeof(struct wp_timeline), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tl != MAP_FAILED) {
        wp_tl_init(tl, wp_smp_cfg.t0_ns, wp_smp_period_ns * WP_TL_FIRST_PERIODS);
        slot->store->tl = tl;
    }
    wp_cfi_mine = (struct wp_cfi_cache *)(wp_pool + at);
    /* The thread's counter group, before its timer exists: the handler
     * finds it ready or absent, never half made.  Without one the
     * thread's samples carry zero counts; one line says so, once. */
    if (wp_ctr_count() > 0 && wp_ctr_thread_open(slot->index) != 0) {
        static int said_ctr;
        if (!__atomic_exchange_n(&said_ctr, 1, __ATOMIC_ACQ_REL))
            wp_log_always("waitprof: rank %d: thread %d cannot open its counters (%s); its samples count no events",
                          wp_log_rank, slot->index, strerror(errno));
    }
    /* This thread's stack bounds what the unwinder reads.  Without it
     * (pthread_getattr_np failed), both ends are 0 and waitprof's unwinder
     * declines every sample: libunwind unwinds them. */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
            wp_stack_lo = (uintptr_t)lo;
            wp_stack_hi = (uintptr_t)lo + size;
        }
        pthread_attr_destroy(&attr);
    }
    /* Warm libunwind's per-thread trace cache here, in normal context, so the
     * handler never creates it. */
    void *warm[4];
    unw_backtrace(warm, 4);

    slot->ntimers = 0;
    if (wp_smp_ovf) {
        /* The overflow trigger instead of timers (sampler/overflow.c),
         * opened stopped; wp_arm_sig below starts it as it would a timer.
         * It worked on the thread that started the sampler, so a refusal
         * here is this thread's (descriptors exhausted, say): one line,
         * and the thread is not sampled, as when a timer cannot be made;
         * falling back to a timer would mix wall time into its counts. */
        if (wp_ovf_thread_open(slot) != 0) {
            static int said_ovf;
            if (!__atomic_exchange_n(&said_ovf, 1, __ATOMIC_ACQ_REL))
                wp_log_always("waitprof: rank %d: thread %d cannot open its overflow trigger (perf_event_open: %s); "
                              "it is not sampled",
                              wp_log_rank, slot->index, strerror(errno));
            wp_ctr_thread_close(slot->index);
            return -1;
        }
    } else {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGPROF;
        sev.sigev_notify_thread_id = slot->tid;
        clockid_t clk = wp_smp_cfg.cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
        /* As many timers as the configured period needs to stay on the tick
         * (wp_timers_for); a longer stride needs no more. */
        int ntm = wp_timers_for(wp_smp_period_ns);
        for (slot->ntimers = 0; slot->ntimers < ntm; slot->ntimers++)
            if (timer_create(clk, &sev, &slot->timer[slot->ntimers]) != 0) {
                wp_log_always("waitprof: timer_create failed (%s); thread %d is not sampled",
                              strerror(errno), slot->index);
                wp_timers_delete(slot);
                wp_ctr_thread_close(slot->index);
                return -1;
            }
    }
    wp_self.slot = slot;
    __atomic_store_n(&slot->armed, 1, __ATOMIC_RELEASE);
    /* Started even during MPI_Pcontrol(0): its first signal stops it. */
    if (wp_arm_sig(slot, 1) != 0) {
        wp_log_always("waitprof: %s failed (%s); thread %d is not sampled",
                      wp_smp_ovf ? "starting the overflow trigger" : "timer_settime", strerror(errno), slot->index);
        wp_self.slot = NULL;
        /* As at the thread's end (wp_thread_end). */
        if (__atomic_exchange_n(&slot->armed, 0, __ATOMIC_ACQ_REL)) {
            wp_timers_delete(slot);
            wp_ovf_close(slot);
        }
        wp_ctr_thread_close(slot->index);
        return -1;
    }
    return 0;
}

/* Stop the calling thread's timers; its store stays for the output. */
static void wp_thread_end(void *unused)
{
    (void)unused;
    struct wp_slot *slot = wp_self.slot;
    if (slot == NULL)
        return;
    wp_self.slot = NULL; /* a signal still in flight is now ignored */
    /* The overflow trigger is closed by whoever wins the exchange: here,
     * where only this thread's handler reads it and, with wp_self.slot
     * cleared, returns before touching it; or by the stopper, after no
     * handler runs.  So the stopper never stops a descriptor this thread
     * has closed and the kernel has given to something else. */
    if (__atomic_exchange_n(&slot->armed, 0, __ATOMIC_ACQ_REL)) {
        wp_timers_delete(slot);
        wp_ovf_close(slot);
    }
    wp_ctr_thread_close(slot->index);
}

struct wp_start {
    void *(*fn)(void *);
    void *arg;
};

static void *wp_thread_start(void *p)
{
    struct wp_start st = *(struct wp_start *)p;
    free(p);
    void *ret;
    if (wp_sampler_running())
        wp_thread_begin();
    /* The cleanup handler also runs on pthread_exit and cancellation. */
    pthread_cleanup_push(wp_thread_end, NULL);
    ret = st.fn(st.arg);
    pthread_cleanup_pop(1);
    return ret;
}

WP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (real_pthread_create == NULL)
        wp_sampler_resolve();
    /* Before sampling starts, and for threads the MPI runtime makes from
     * inside an MPI call, this is the plain pthread_create. */
    if (!wp_sampler_running() || (wp_self.depth > 0 && !wp_smp_cfg.runtime_threads))
        return real_pthread_create(th, attr, fn, arg);
    struct wp_start *st = malloc(sizeof *st);
    if (st == NULL)
        return real_pthread_create(th, attr, fn, arg);
    st->fn = fn;
    st->arg = arg;
    int rc = real_pthread_create(th, attr, wp_thread_start, st);
    if (rc != 0)
        free(st);
    return rc;
}

uint64_t wp_sampler_tick_ns(void)
{
    return wp_smp_tick_ns;
}

/* A counter that cannot be counted, or an overflow trigger that cannot
 * be opened, is the same on every rank: one line for the job. */
static void wp_ctr_said(const char *line)
{
    wp_log("%s", line);
}

int wp_sampler_start(const struct wp_sampler_config *cfg)
{
    wp_smp_cfg = *cfg;
    wp_smp_has_tsel = wp_smp_cfg.tsel.start_ns || wp_smp_cfg.tsel.stop_ns || wp_smp_cfg.tsel.every_ns;
    wp_smp_period_ns = 1000000000ull / (uint64_t)(wp_smp_cfg.hz > 0 ? wp_smp_cfg.hz : 1);
    /* The overflow trigger, probed on this thread first: where the event
     * is unknown or refused, one line for the job (the same on every
     * rank), and the default timer samples. */
    if (wp_smp_cfg.overflow_event && wp_smp_cfg.overflow_event[0])
        wp_ovf_setup(wp_smp_cfg.overflow_event, wp_smp_cfg.overflow_period, wp_ctr_said);
    /* The tick, for expirations on it (see wp_timers_for).  A value outside
     * 0.1-100 ms is not a tick this code knows, and a rate that would need
     * more than WP_TICK_TIMERS timers is not worth them: free-running
     * timers then.  A CPU clock's timers already fire on the tick. */
    struct timespec res;
    wp_smp_tick_ns = 0;
    if (!wp_smp_ovf && !wp_smp_cfg.cpu_clock && !wp_smp_cfg.free_timer && clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0) {
        uint64_t t = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
        if (t >= 100000 && t <= 100000000)
            wp_smp_tick_ns = t;
        if (wp_timers_for(wp_smp_period_ns) > WP_TICK_TIMERS)
            wp_smp_tick_ns = 0;
    }
    if (wp_smp_cfg.max_frames <= 0 || wp_smp_cfg.max_frames > WP_MAX_FRAMES)
        wp_smp_cfg.max_frames = WP_MAX_FRAMES;
    struct sigaction old;
    if (sigaction(SIGPROF, NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO ? old.sa_sigaction != NULL
                                                : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
        wp_log("waitprof: SIGPROF already has a handler (another profiler?); sampling is off, "
               "remove the other profiler to sample");
        return -1;
    }
    /* The whole budget, reserved now; pages are touched as stores fill, so
     * the resident size grows with use but never beyond the budget. */
    wp_pool_size = wp_smp_cfg.memory ? (size_t)wp_smp_cfg.memory : (size_t)16 << 20;
    void *pool = mmap(NULL, wp_pool_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pool == MAP_FAILED) {
        wp_log("waitprof: cannot reserve %zu bytes for samples (%s); sampling is off; lower WAITPROF_MEMORY",
               wp_pool_size, strerror(errno));
        return -1;
    }
    wp_pool = pool;
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wp_on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0) {
        wp_log("waitprof: cannot install the SIGPROF handler (%s); sampling is off", strerror(errno));
        return -1;
    }
    wp_cfi_refresh();
    /* The counters, probed on this thread before any store is laid out:
     * the stores make room for as many as are kept. */
    if (wp_smp_cfg.ncounters > 0)
        wp_ctr_setup(wp_smp_cfg.counters, wp_smp_cfg.ncounters, wp_ctr_said);
    /* Before the first thread is registered, so that every group's first
     * read after its opening lands in the split. */
    if (wp_smp_cfg.counters_split && wp_ctr_count() > 0)
        __atomic_store_n(&wp_ctr_split, 1, __ATOMIC_SEQ_CST);
    wp_smp_started = 1;
    __atomic_store_n(&wp_smp_running, 1, __ATOMIC_SEQ_CST);
    if (wp_thread_begin() != 0)
        return -1;
    return 0;
}

void wp_sampler_stop_sig(void)
{
    if (!wp_smp_started)
        return;
    __atomic_store_n(&wp_smp_running, 0, __ATOMIC_SEQ_CST);
    int n = wp_slots_used();
    /* Which threads' triggers this call stopped, and so closes below
     * (wp_thread_end closes the others').  Static: a signal handler may
     * run this; cleared at each call. */
    static unsigned char won[WP_MAX_THREADS];
    for (int i = 0; i < n; i++) {
        won[i] = (unsigned char)__atomic_exchange_n(&wp_slots[i].armed, 0, __ATOMIC_ACQ_REL);
        if (won[i])
            wp_timers_delete(&wp_slots[i]);
    }
    /* A handler that began before the store above finishes in microseconds;
     * wait for it, but never forever (a thread stopped by a debugger). */
    /* Nor does a wrapper start a read of the counters now
     * (sampler/ctr_split.h); one that began before finishes in
     * microseconds too. */
    __atomic_store_n(&wp_ctr_split, 0, __ATOMIC_SEQ_CST);
    for (int i = 0; i < n; i++)
        for (int spin = 0; spin < 100000 && (__atomic_load_n(&wp_slots[i].in_handler, __ATOMIC_SEQ_CST) ||
                                             __atomic_load_n(&wp_slots[i].ctr_busy, __ATOMIC_SEQ_CST));
             spin++)
            sched_yield();
    /* No handler reads a counter group or an overflow trigger any more:
     * close them (close() is async-signal-safe, as the termination handler
     * needs). */
    wp_ctr_close_all();
    for (int i = 0; i < n && wp_smp_ovf; i++)
        if (won[i])
            wp_ovf_close(&wp_slots[i]);
    /* No sample will need the table of loaded objects again. */
    wp_cfi_retire_sig();
}

uint64_t wp_sampler_unsampled_threads(void)
{
    return __atomic_load_n(&wp_unsampled, __ATOMIC_ACQUIRE);
}

uint64_t wp_sampler_pool_bytes(void)
{
    return wp_pool_size;
}
