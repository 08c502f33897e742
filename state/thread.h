/* state/thread.h — the per-thread MPI state record and the thread registry.
 *
 * Contract:
 * - wp_self is the calling thread's record.  It lives in initial-exec TLS:
 *   libwaitprof is loaded at start-up (LD_PRELOAD), so its TLS block is part of
 *   the static TLS area and reading it is one load at a fixed offset from the
 *   thread pointer — no lazy allocation, no lock, safe in a signal handler.
 * - Only the owning thread writes state, fn, enter_ticks, depth and the
 *   call's frame (the signal handler, which runs on that thread, dates a
 *   lean-mode call); a signal handler on the same thread reads them.  Compiler signal fences order the
 *   writes as the handler must see them.
 * - The registry is a fixed array of slots claimed with one atomic add.  A
 *   slot outlives its thread so that the samples it holds are written at the
 *   end; slots are never reused.
 */
#ifndef WP_STATE_THREAD_H
#define WP_STATE_THREAD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "waitprof.h"

struct wp_store;

/* Per-thread tables: the layers that keep per-call figures without atomics
 * (the estimator's statistics, call paths and request kinds, the
 * wrappers' traffic counts) hang one table each off the thread's record.
 * wp_table_mine() returns it, mapping it on the thread's first use. */
enum wp_table_kind { WP_TABLE_STATS, WP_TABLE_PATHS, WP_TABLE_REQS, WP_TABLE_TRAFFIC, WP_TABLE_KINDS };

typedef struct wp_thread {
    volatile sig_atomic_t state;   /* WAITPROF_STATE_* */
    volatile int fn;               /* enum wp_fn of the outermost MPI call */
    volatile uint64_t enter_ticks; /* entry time of that call, wp_ticks() (state/clock.h);
                                    * in lean mode (wrap/wrap.h) 0 until the call's
                                    * first sample, which sets it (same thread) */
    int depth;                     /* MPI calls nested on this thread (wrappers only) */
    volatile uintptr_t call_cfa;   /* the outermost wrapper's frame: its canonical frame */
    volatile uintptr_t call_pc;    /* address and a PC inside it, written before depth
                                    * becomes 1 (wrap/wrap.h); the handler unwinds
                                    * from there while depth > 0 */
    struct wp_slot *slot;          /* registry slot when sampled, else NULL */
    /* What a call's leaving may have to do, in one word, so that the
     * common leaving tests both with one load (wrap/wrap.h, wp_leave_at).
     * Reading a union member other than the one last stored reads the
     * same bytes (C11 6.5.2.3); the word is aligned, and only this
     * thread, or its own signal handler, stores to it. */
    union {
        struct {
            volatile int has_pending; /* the handler holds samples of the current call */
            volatile int src_seen;    /* a runtime stall source classifies the current
                                       * call (mpit/source.h); set by this thread only */
        };
        volatile uint64_t leave_work;
    };
    volatile int unwinding;        /* a wrapper is inside unw_backtrace (fallback/stats.c,
                                    * call paths): the handler must not use libunwind's
                                    * per-thread trace cache meanwhile */
    volatile unsigned sigprof;     /* SIGPROF deliveries to this thread, counted by the
                                    * handler: a call that returned EINTR while it
                                    * grew may have been cut short by a sample
                                    * (sampler/sleeps.c) */
    volatile uint64_t last_compute; /* the store entry (its hash) of this thread's last
                                    * Not-in-MPI sample: what it computed before an MPI
                                    * call, the cause of a wait it makes another rank
                                    * take (match/match.h); 0 before the first */
    int src_long;                  /* lean wrappers: recent receives and waits on this
                                    * thread lasted long enough for the polling stall
                                    * source to classify them (mpit/source.h,
                                    * WP_SRC_LONG_KEEP); this thread only */
    void *table[WP_TABLE_KINDS];   /* this thread's tables, NULL until first used */
    unsigned char table_failed[WP_TABLE_KINDS]; /* no table of that kind: never retried */
} wp_thread_t;

extern __thread wp_thread_t wp_self __attribute__((tls_model("initial-exec")));

/* Lean wrappers (wrap/wrap.h): no clock read, no per-call bookkeeping.  Set
 * once by the MPI_Init hook, before sampling starts. */
extern int wp_lean;
/* The program runs on another MPI than the build's (runtime/abi.h): its
 * handles have another width (Open MPI's are pointers, MPICH's ints), so
 * the wrappers pass every call straight to the PMPI name as a tail call
 * with the registers as they came, before any code of theirs could
 * narrow a handle to the build's type.  Set with wp_lean, once, at
 * MPI_Init. */
extern int wp_foreign;

/* Set for good when the program sets an error handler on anything
 * (wp_hook_errhandler in wrap/wrap.c, from the table's *_set_errhandler
 * rows).  Then no layer may make an extra MPI call that progresses or
 * completes a request before the program's own call: with an error
 * handler that returns, that can change which errors a wait reports
 * (wrap/wrap.h, wp_req_kinds; the MPI_T source's polling waits). */
extern int wp_errors_may_return;

/* The most timers a thread uses to sample on the kernel's tick. */
#define WP_TICK_TIMERS 4

/* One registered (sampled) thread. */
struct wp_slot {
    int index;                     /* 0 = the thread that called MPI_Init */
    pid_t tid;
    timer_t timer[WP_TICK_TIMERS]; /* its sampling timers, ntimers of them; more
                                    * than one to stay on the tick (sampler/timers.c) */
    int ntimers;
    volatile int armed;            /* timer exists (running unless disarmed) */
    volatile int disarmed;         /* stopped for MPI_Pcontrol(0), by its own thread */
    uint64_t grid_ns;              /* CLOCK_MONOTONIC time of a point of the thread's
                                    * sampling grid at its current period
                                    * (sampler/timers.c, wp_arm_in_sig) */
    volatile sig_atomic_t in_handler;
    volatile sig_atomic_t ctr_busy; /* a wrapper reads the counters (WAITPROF_COUNTERS_SPLIT,
                                    * sampler/ctr_split.h): the handler leaves them be */
    struct wp_store *store;        /* preallocated; survives the thread */
    /* WAITPROF_TIMER=overflow (sampler/overflow.c): the thread's sampling
     * event instead of timers.  ovf_fd is its perf_event descriptor, -1
     * when there is none or it is closed (read and swapped with atomics);
     * ovf_last the part of its count that samples have been charged with,
     * written by the thread's own handler only. */
    int ovf_fd;
    uint64_t ovf_last;
};

#define WP_MAX_THREADS 1024

extern struct wp_slot wp_slots[WP_MAX_THREADS];
extern volatile int wp_nslots;     /* slots claimed so far (may exceed the array) */

/* The slots to walk: those claimed so far that exist (claims past the
 * array fail but are counted).  One atomic load, so the termination
 * writers may call it from a signal handler. */
static inline int wp_slots_used(void)
{
    int n = __atomic_load_n(&wp_nslots, __ATOMIC_ACQUIRE);
    return n > WP_MAX_THREADS ? WP_MAX_THREADS : n;
}

/* Claim a slot for the calling thread; NULL when all are taken. */
struct wp_slot *wp_registry_claim(void);

/* Every thread's table of one kind, in the order they were made, for the
 * writers at the end.  n may exceed the array: the later tables were not
 * made (their threads' figures are lost, which the writers' callers
 * count). */
#define WP_MAX_TABLES WP_MAX_THREADS
struct wp_table_list {
    void *all[WP_MAX_TABLES];
    int n;
};

/* The first use of a thread's table of a kind: bytes of zeroed memory,
 * mapped (mmap, not malloc: tables are written from wrappers that may run
 * inside the allocator's callbacks and are read at an abnormal exit), set
 * up by init when not NULL, listed in list when not NULL.  Returns NULL,
 * for good on this thread, when the mapping fails or the list is full.
 * Normal context. */
__attribute__((cold)) void *wp_table_claim(enum wp_table_kind kind, size_t bytes, struct wp_table_list *list,
                                            void (*init)(void *));

/* The calling thread's table of a kind: one TLS load once it exists. */
static inline void *wp_table_mine(enum wp_table_kind kind, size_t bytes, struct wp_table_list *list,
                                  void (*init)(void *))
{
    void *t = wp_self.table[kind];
    return __builtin_expect(t != NULL, 1) ? t : wp_table_claim(kind, bytes, list, init);
}

/* The number of tables in a list and the i-th of them (acquire loads: a
 * table is listed after it was set up). */
static inline int wp_table_count(struct wp_table_list *list)
{
    int n = __atomic_load_n(&list->n, __ATOMIC_ACQUIRE);
    return n < WP_MAX_TABLES ? n : WP_MAX_TABLES;
}

static inline void *wp_table_at(struct wp_table_list *list, int i)
{
    return __atomic_load_n(&list->all[i], __ATOMIC_ACQUIRE);
}

/* The loader-lock guard.  Code that may hold the dynamic loader's lock
 * (dlopen, dlclose, dl_iterate_phdr, waitprof's own dlsym) runs between
 * wp_dl_begin() and wp_dl_end(); the SIGPROF handler drops a sample while
 * wp_dl_held() (an atomic load, async-signal-safe), because the unwinder
 * may call dl_iterate_phdr, which takes that lock.  It lives here, with the
 * record, so that every layer can bracket its loader calls without
 * depending on the sampler. */
extern int wp_dl_busy;
void wp_dl_begin(void);
void wp_dl_end(void);
static inline int wp_dl_held(void)
{
    return __atomic_load_n(&wp_dl_busy, __ATOMIC_ACQUIRE) != 0;
}

/* Address range of the generated wrappers (the section wp_wrap_text,
 * wrap/wrap.h): a frame in it is an MPI call.  Two compares;
 * async-signal-safe.  Inline: the handler tests every frame it unwinds.
 * The linker defines the bounds around the section; weak, so that a
 * program without the wrappers (a unit test) has no wrapper address. */
extern const char __start_wp_wrap_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_wp_wrap_text[] __attribute__((weak, visibility("hidden")));
static inline int wp_is_wrapper_ip(uintptr_t ip)
{
    return ip >= (uintptr_t)__start_wp_wrap_text && ip < (uintptr_t)__stop_wp_wrap_text;
}

/* Monotonic nanoseconds.  clock_gettime is async-signal-safe (POSIX). */
static inline uint64_t wp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
