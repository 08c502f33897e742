/* sampler/sampler.c — per-thread timers and the SIGPROF handler.
 * See sampler/sampler.h for the contract. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mpit/source.h"
#include "runtime/log.h"
#include "report/partial.h"
#include "sampler/sampler.h"
#include "sampler/store.h"
#include "sampler/unwind.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/wrap.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define WP_EXPORT __attribute__((visibility("default")))

/* The largest stride: the rate never drops below 1/1024 of the configured
 * one, nor below 1 Hz. */
#define WP_STRIDE_MAX 1024

/* The linker defines these around the section that holds every generated
 * wrapper (WP_API in state/wrap.h). */
extern const char __start_wp_wrap_text[] __attribute__((visibility("hidden")));
extern const char __stop_wp_wrap_text[] __attribute__((visibility("hidden")));

static struct wp_sampler_config wp_cfg;
static int wp_started;       /* sampler_start ran; never reset */
static int wp_running;       /* handlers store samples; read with atomics */
static int wp_dl_busy;       /* threads inside code that may hold the loader lock */
static int wp_paused;        /* MPI_Pcontrol(0) is in force; read with atomics */
static int wp_has_tsel;      /* START, STOP or WINDOW is set */
static uint64_t wp_period_ns; /* the configured sampling period */
static uint64_t wp_tick_ns;   /* the kernel's tick when expirations are put on it, else 0 */

/* The calling thread's rules for sampler/unwind.c (carved from the pool
 * with its store) and the top of its stack.  Initial-exec TLS, like
 * wp_self: the handler reads them without the lazy allocation that could
 * deadlock (DESIGN.md). */
static __thread struct wp_cfi_cache *wp_cfi_mine __attribute__((tls_model("initial-exec")));
static __thread uintptr_t wp_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t wp_stack_hi __attribute__((tls_model("initial-exec")));

/* The pool all stores are carved from (see sampler.h), and what it could
 * not serve. */
static char *wp_pool;
static size_t wp_pool_size, wp_pool_used;
static uint64_t wp_unsampled;

/* MPI_Pcontrol toggles: times since t0 at which the state changed; entry i
 * starts a paused stretch when i is even.  Normal context only. */
static uint64_t wp_toggles[WP_TOGGLES_MAX];
static int wp_ntoggles;
static uint64_t wp_toggles_lost;

typedef int (*wp_pthread_create_t)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef void *(*wp_dlopen_t)(const char *, int);
typedef int (*wp_dlclose_t)(void *);
typedef int (*wp_dl_iterate_phdr_t)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
static wp_pthread_create_t real_pthread_create;
static wp_dl_iterate_phdr_t real_dl_iterate_phdr;
static wp_dlopen_t real_dlopen;
static wp_dlclose_t real_dlclose;

/* Resolve the interposed functions before anything can need them (and long
 * before a timer exists), so no handler ever runs while dlsym does. */
__attribute__((constructor)) static void wp_sampler_resolve(void)
{
    real_pthread_create = (wp_pthread_create_t)dlsym(RTLD_NEXT, "pthread_create");
    real_dlopen = (wp_dlopen_t)dlsym(RTLD_NEXT, "dlopen");
    real_dlclose = (wp_dlclose_t)dlsym(RTLD_NEXT, "dlclose");
    real_dl_iterate_phdr = (wp_dl_iterate_phdr_t)dlsym(RTLD_NEXT, "dl_iterate_phdr");
}

int wp_is_wrapper_ip(uintptr_t ip)
{
    return ip >= (uintptr_t)__start_wp_wrap_text && ip < (uintptr_t)__stop_wp_wrap_text;
}

int wp_sampler_running(void)
{
    return __atomic_load_n(&wp_running, __ATOMIC_ACQUIRE);
}

void wp_dl_begin(void)
{
    __atomic_fetch_add(&wp_dl_busy, 1, __ATOMIC_ACQ_REL);
}

void wp_dl_end(void)
{
    __atomic_fetch_sub(&wp_dl_busy, 1, __ATOMIC_ACQ_REL);
}

/* libunwind's two ways (see wp_unwind). */
static int wp_unwind_lib(ucontext_t *uc, uintptr_t *out, int max, int *trunc, int *slow)
{
    int k = 0, start = -1;
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    void *buf[WP_MAX_FRAMES + 16];
    /* A wrapper interrupted inside its own unw_backtrace (call paths,
     * fallback/stats.c) is using the per-thread trace cache: take the slow
     * path, which does not touch it. */
    int n = wp_self.unwinding ? 0 : unw_backtrace(buf, max + 16);
    for (int i = 0; i < n && i < 16; i++)
        if ((uintptr_t)buf[i] == pc) {
            start = i;
            break;
        }
    if (start >= 0) {
        for (int i = start; i < n && k < max; i++)
            out[k++] = (uintptr_t)buf[i] - (i > start);
        *trunc = (n - start > max) || n == max + 16;
    }
#endif
    if (start < 0) {
        *slow = 1;
        unw_cursor_t c;
        if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
            return 0;
        do {
            unw_word_t ip;
            if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
                break;
            out[k] = (uintptr_t)ip - (k > 0);
            k++;
        } while (k < max && unw_step(&c) > 0);
        *trunc = (k == max && unw_step(&c) > 0);
    }
    return k;
}

/* Unwind the interrupted stack into out[] (leaf first); returns the frame
 * count.  Return addresses are stored minus one so that they point into the
 * call instruction (what symbolization and line lookup want); the leaf is the
 * exact interrupted PC.  Frames inside the MPI library, below the outermost
 * wrapper, are cut: the wrapper frame stands for the whole MPI call.
 * *in_wrapper tells whether the stack holds a wrapper frame at all.
 *
 * First waitprof's own unwinder (sampler/unwind.c): inside a wrapped call
 * from the wrapper's frame, else from the signal context.  It touches
 * little memory, which is what a handler that runs once per 10 ms pays
 * for.  When it declines (*lib set):
 * unw_backtrace() from the handler's own context, which uses libunwind's
 * per-thread trace cache; the interrupted PC is then found in its result
 * by value, so no fixed number of handler frames is skipped.  When the PC
 * is not found (*slow set): unw_init_local2 on the signal context and
 * unw_step, which libunwind documents as signal-safe for local unwinding.
 * noinline keeps this frame (and so the search) the same in every build. */
static __attribute__((noinline)) int wp_unwind(void *ucv, uintptr_t *out, int max, int *trunc, int *lib,
                                                int *slow, int *in_wrapper)
{
    ucontext_t *uc = ucv;
    int k = -1;
    if (wp_cfi_mine) {
        /* Inside a wrapped call, from the outermost wrapper's frame
         * (state/wrap.h): its PC is checked to be a wrapper's, so a frame
         * recorded by anything else is never trusted. */
        if (wp_self.depth > 0 && wp_is_wrapper_ip(wp_self.call_pc))
            k = wp_cfi_unwind_from(uc, wp_cfi_mine, wp_stack_lo, wp_stack_hi, wp_self.call_pc, wp_self.call_cfa,
                                   out, max, trunc);
        if (k < 0)
            k = wp_cfi_unwind(uc, wp_cfi_mine, wp_stack_lo, wp_stack_hi, out, max, trunc);
    }
    if (k < 0) {
        *lib = 1;
        k = wp_unwind_lib(uc, out, max, trunc, slow);
    }
    int cut = -1;
    for (int i = 0; i < k; i++)
        if (wp_is_wrapper_ip(out[i]))
            cut = i;
    if (cut > 0) {
        memmove(out, out + cut, (size_t)(k - cut) * sizeof *out);
        k -= cut;
    }
    *in_wrapper = cut >= 0;
    return k;
}

/* Expirations on the kernel's tick (WAITPROF_TIMER=tick, the default with
 * a wall clock).  Why: on a busy CPU the kernel takes its tick anyway
 * (CONFIG_HZ times a second, at multiples of the tick in CLOCK_MONOTONIC),
 * and a timer that expires at the same instant is served by the same
 * interrupt.  A timer between two ticks costs an interrupt of its own:
 * on this project's virtual machine 25-40 us of the interrupted thread's
 * time per signal with an empty handler, where on the tick no cost could
 * be told from zero (doc/performance.md).  So every thread samples on one
 * grid, the multiples of its period p, each moved to the next tick where p
 * is not a multiple of the tick T: 100 Hz on a 250 Hz kernel samples after
 * 12 ms and 8 ms in turn, 10 ms on average.  That pattern repeats every
 * lcm(p, T), so m = T / gcd(p, T) periodic timers with period m*p, one per
 * phase, give it without re-arming a timer at each signal (a timer_settime
 * in the handler took 4 us here, as long as the rest of the handler).
 * Where more than WP_TICK_TIMERS would be needed, the timers run free.
 * The tick is the resolution of CLOCK_MONOTONIC_COARSE, the kernel's tick
 * length. */
static uint64_t wp_gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* How many timers put period p on the tick (1 with free-running timers, or
 * when p is at most a tick: then the multiples of p hold the ticks). */
static int wp_timers_for(uint64_t p)
{
    return (!wp_tick_ns || p <= wp_tick_ns) ? 1 : (int)(wp_tick_ns / wp_gcd(p, wp_tick_ns));
}

static uint64_t wp_ceil_to(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

static uint64_t wp_mono_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static int wp_settime(timer_t t, int flags, uint64_t first, uint64_t every)
{
    struct itimerspec its = {{(time_t)(every / 1000000000ull), (long)(every % 1000000000ull)},
                             {(time_t)(first / 1000000000ull), (long)(first % 1000000000ull)}};
    return timer_settime(t, flags, &its, NULL);
}

/* Stop a thread's timers (its own, from its handler or with SIGPROF
 * blocked).  timer_settime is async-signal-safe. */
static int wp_disarm(struct wp_slot *slot)
{
    int rc = 0;
    for (int i = 0; i < slot->ntimers; i++)
        rc |= wp_settime(slot->timer[i], 0, 0, 0);
    return rc;
}

/* Delete a thread's timers: by the owner that wins the exchange on
 * slot->armed.  wp_sampler_stop runs from the termination handler too:
 * glibc's timer_delete for a SIGEV_THREAD_ID timer is a plain system
 * call. */
static void wp_timers_delete(struct wp_slot *slot)
{
    for (int i = 0; i < slot->ntimers; i++)
        timer_delete(slot->timer[i]);
}

/* Start (or restart) a thread's timers with stride configured periods p.
 * Free-running (WAITPROF_TIMER=free, or a CPU clock): one timer, its first
 * expiration first_ns from now (0: one period), noted as the thread's
 * grid.  On the tick: the grid points from the first one after
 * now + first_ns - p (or after now, if that is earlier), so one period from
 * now means the next one; the timers a longer stride does not need are
 * stopped.  Async-signal-safe: timer_settime and clock_gettime are on
 * POSIX's list, the rest is arithmetic on values fixed at start. */
static int wp_arm_in(struct wp_slot *slot, uint32_t stride, uint64_t first_ns)
{
    uint64_t p = wp_period_ns * (stride ? stride : 1), f = first_ns ? first_ns : p;
    uint64_t now = wp_mono_ns();
    if (!wp_tick_ns) {
        slot->grid_ns = now + f;
        return wp_settime(slot->timer[0], 0, f, p);
    }
    int m = wp_timers_for(p), rc = 0;
    uint64_t t = f > p ? now + f - p : now, k = t / p + 1;
    /* The grid point before may still be ahead once moved to its tick. */
    if (m > 1 && wp_ceil_to((k - 1) * p, wp_tick_ns) > t)
        k--;
    slot->grid_ns = k * p;
    for (int i = 0; i < slot->ntimers; i++)
        rc |= i < m ? wp_settime(slot->timer[i], TIMER_ABSTIME,
                                 m > 1 ? wp_ceil_to((k + (uint64_t)i) * p, wp_tick_ns) : k * p, (uint64_t)m * p)
                    : wp_settime(slot->timer[i], 0, 0, 0);
    return rc;
}

static int wp_arm(struct wp_slot *slot, uint32_t stride)
{
    return wp_arm_in(slot, stride, 0);
}

/* A signal that found no selected time (WAITPROF_START, STOP, WINDOW):
 * rather than take a signal every period through the unselected stretch,
 * the handler moves its own timer's next expiration to one period after
 * the first selected instant (wp_window_next), or stops it when STOP has
 * passed, so the stretch costs one signal.  The first signal after it
 * then stands for a period of selected time, so the weights stay right.
 * Own timer only, like wp_slow_down; wp_arm_in and timer_settime are
 * async-signal-safe.  Not with a CPU clock: the selection is in wall
 * time, which a thread's CPU time cannot be set to. */
static void wp_skip_unselected(struct wp_slot *slot, struct wp_store *s, uint64_t rel, uint64_t period)
{
    uint64_t next = wp_window_next(&wp_cfg.tsel, rel);
    if (wp_cfg.cpu_clock || (next != UINT64_MAX && next <= rel + period) ||
        !__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE))
        return;
    if (next == UINT64_MAX)
        wp_disarm(slot);
    else
        wp_arm_in(slot, s->stride, next - rel + period);
}

/* MPI_Pcontrol: only a thread's own handler stops or restarts its timer,
 * so these never race with wp_slow_down's re-arm, and a timer always runs
 * at its thread's stride.  A signal that finds the pause in force stops
 * the timer, so the paused stretch costs no more signals; the resume
 * (wp_sampler_pause) sends each stopped thread a SIGPROF of its own, on
 * which wp_resume_own restarts it.  Both sides write their flag and then
 * read the other's (sequentially consistent, a Dekker pair): a resume
 * that comes while a handler is stopping the timer is seen by one of them,
 * and the exchange on the flag lets exactly one restart it.  Both call
 * timer_settime and clock_gettime, async-signal-safe by POSIX.
 *
 * The restart keeps the thread's grid: the first expiration is the next
 * one the timer would have had, had it run on.  Then every grid point in
 * the sampled stretches is sampled, however short they are: a restart one
 * whole period later would never sample a stretch shorter than a period. */
static void wp_resume_own(struct wp_slot *slot, struct wp_store *s)
{
    if (__atomic_load_n(&wp_paused, __ATOMIC_SEQ_CST) || !__atomic_exchange_n(&slot->disarmed, 0, __ATOMIC_SEQ_CST))
        return;
    uint64_t p = wp_period_ns * (s->stride ? s->stride : 1), g = slot->grid_ns, now = wp_mono_ns();
    uint64_t first = now < g ? (g - now) % p : p - (now - g) % p;
    wp_arm_in(slot, s->stride, first ? first : p);
}

/* Drop a SIGPROF pending for the calling thread, which has SIGPROF blocked
 * (in its handler, or by wp_sampler_pause) and its timers just stopped.
 * Such a signal is an expiration from before the stop.  Left pending, it
 * would swallow the resume's wake-up, since a standard signal that is
 * already pending is not queued again; and Linux 6.x then drops the stale
 * expiration when it would deliver it (measured on this project's 6.18
 * kernel: expiration pending, timer stopped, tgkill sent, no handler call
 * at all), so the thread would never restart.  Once the timers are
 * stopped no new expiration can come, so one zero-timeout wait empties
 * it.  rt_sigtimedwait is a plain system call; sigemptyset and sigaddset
 * are async-signal-safe by POSIX. */
static void wp_drop_pending_prof(void)
{
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    struct timespec zero = {0, 0};
    syscall(SYS_rt_sigtimedwait, &prof, NULL, &zero, (size_t)(_NSIG / 8));
}

static void wp_pause_own(struct wp_slot *slot, struct wp_store *s)
{
    if (!__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE) || wp_disarm(slot) != 0)
        return;
    /* Before publishing the stop.  Should this drop a wake-up, it is not
     * lost: a resume after the store below sees the thread stopped and
     * wakes it again, one before it is seen by wp_resume_own. */
    wp_drop_pending_prof();
    __atomic_store_n(&slot->disarmed, 1, __ATOMIC_SEQ_CST);
    wp_resume_own(slot, s);
}

/* Halve this thread's rate when its store passed another step towards
 * full (wp_store_pressure).  Design: the handler re-arms its own thread's
 * timer with twice the period rather than skipping every other tick.
 * wp_arm is async-signal-safe (see there), touches only this thread's
 * timer (no other thread re-arms it, see wp_resume_own; the stopper may
 * delete it concurrently, and then the call just fails with EINVAL), and
 * a longer period also halves the cost of the signals, which dominates
 * waitprof's overhead (doc/performance.md), where skipping ticks would
 * keep paying it.  The weights stay exact: every expiration after the
 * re-arm weighs the new stride, in units of the configured period. */
static void wp_slow_down(struct wp_slot *slot, struct wp_store *s)
{
    uint32_t stride = s->stride ? s->stride : 1;
    int level = wp_store_pressure(s);
    int halvings = 0;
    while ((1u << halvings) < stride)
        halvings++;
    if (level <= halvings || stride >= WP_STRIDE_MAX || (int)(stride * 2) > wp_cfg.hz)
        return;
    stride *= 2;
    if (__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE) && wp_arm(slot, stride) == 0)
        s->stride = stride;
}

/* The SIGPROF handler.  What it calls, and why each is safe here:
 * - wp_self (TLS): initial-exec, see state/thread.h.
 * - wp_ticks / wp_ticks_duration_ns: an rdtsc and arithmetic on globals
 *   (state/clock.h); clock_gettime, async-signal-safe by POSIX, only with
 *   a time selection or without a usable TSC.
 * - wp_unwind: waitprof's unwinder (sampler/unwind.h: reads the objects'
 *   unwind tables, this thread's cache and its stack), else libunwind local
 *   unwinding (see above), no malloc; the loader lock case is excluded by
 *   wp_dl_busy.
 * - wp_store_add_bounded / wp_store_handler_time: own code on preallocated
 *   memory.
 * - wp_src_stalled: reads this thread's TLS and a static counter array.
 * - wp_slow_down, wp_pause_own, wp_resume_own, wp_skip_unselected:
 *   timer_settime, async-signal-safe by POSIX (see wp_arm_in); the
 *   window arithmetic of runtime/select.h.
 * errno is saved and restored because unwinding may set it. */
static void wp_on_sigprof(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    int saved_errno = errno;
    struct wp_slot *slot = wp_self.slot;
    if (slot == NULL)
        goto out;
    /* Publish that a handler runs, then check that sampling is on: with
     * wp_sampler_stop()'s store-then-check this is a Dekker pair, so the
     * stopper either sees us here or we see it stopped. */
    __atomic_store_n(&slot->in_handler, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&wp_running, __ATOMIC_SEQ_CST))
        goto done;
    struct wp_store *s = slot->store;
    /* The handler's own time, in ticks: a TSC read touches no memory, where
     * the vDSO clock reads its data page, cold at 100 Hz. */
    uint64_t c0 = wp_ticks();
    /* Not a timer's expiration: the wake-up of MPI_Pcontrol(1), or a
     * SIGPROF someone else sent, which is no sample. */
    if (si->si_code != SI_TIMER) {
        wp_resume_own(slot, s);
        goto done;
    }
    if (__atomic_load_n(&wp_paused, __ATOMIC_SEQ_CST)) {
        s->paused_signals++;
        wp_pause_own(slot, s);
        goto done;
    }
    uint64_t w = si->si_overrun > 0 ? (uint64_t)si->si_overrun + 1 : 1;
    uint32_t stride = s->stride ? s->stride : 1;
    /* Time selection (START/STOP/WINDOW): the w expirations this signal
     * stands for happened over the last w periods, not all now (a thread
     * that was not scheduled gets them late, in one signal).  Count only
     * those that fall into the selected time: the selected part of that
     * span, in periods, rounded.  wp_window_pieces is arithmetic only. */
    if (wp_has_tsel) {
        uint64_t t0 = wp_now_ns();
        uint64_t period = wp_period_ns * stride, rel = t0 - wp_cfg.t0_ns, span = w * period;
        uint64_t in = wp_window_pieces(&wp_cfg.tsel, rel > span ? rel - span : 0, rel, NULL, NULL);
        w = (in + period / 2) / period;
        if (w == 0) {
            s->unselected_signals++;
            wp_skip_unselected(slot, s, rel, period);
            goto done;
        }
    }
    /* Each expiration stands for stride configured periods. */
    w *= stride;
    if (__atomic_load_n(&wp_dl_busy, __ATOMIC_ACQUIRE)) {
        s->dropped_dl += w;
        goto done;
    }
    int state = wp_self.state, fn = wp_self.fn;
    /* A lean-mode wrapper read no clock (state/wrap.h): the call's first
     * sample dates it.  Same thread, so no other writer; wp_ticks is a TSC
     * or vDSO clock read. */
    if (state == WAITPROF_STATE_WORK && wp_self.enter_ticks == 0)
        wp_self.enter_ticks = wp_ticks();
    uintptr_t ips[WP_MAX_FRAMES];
    int trunc = 0, lib = 0, slow = 0, in_wrapper = 0;
    int n = wp_unwind(ucv, ips, wp_cfg.max_frames, &trunc, &lib, &slow, &in_wrapper);
    s->lib_unwinds += lib;
    s->slow_unwinds += slow;
    /* A sample in a wrapper's own instructions, before wp_enter() or after
     * wp_leave() changed the state, is still time in the MPI call. */
    if (in_wrapper && state == WAITPROF_STATE_NOT_IN_MPI)
        state = WAITPROF_STATE_WORK;
    if (n <= 0) {
        s->unwind_fail += w;
        n = 0;
    }
    if (trunc)
        s->truncated += w;
    /* A runtime stall source that follows this call says now whether the
     * thread waits (wp_src_stalled: TLS and static memory only). */
    int told = state == WAITPROF_STATE_WORK && in_wrapper ? wp_src_stalled() : -1;
    if (told >= 0) {
        state = told ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK;
        s->by_source += w;
    }
    /* Inside a call that may wait, Work and Stall are told apart when the
     * call returns (wp_sampler_settle): hold the sample until then.  Lean
     * wrappers record nothing to tell them apart by: Work at once. */
    else if (state == WAITPROF_STATE_WORK && in_wrapper && !wp_lean && fn > 0 && fn < WP_FN_COUNT &&
             wp_fn_table[fn].waits) {
        struct wp_pending *p = s->pending;
        if (p->n < WP_PENDING_MAX) {
            if (p->n == 0) {
                memcpy(p->ips, ips, (size_t)n * sizeof *ips);
                p->depth = (uint16_t)n;
                p->fn = (uint16_t)fn;
                p->enter = wp_self.enter_ticks;
            }
            p->off[p->n] = wp_ticks() - wp_self.enter_ticks;
            p->weight[p->n] = (uint32_t)w;
            p->n++;
            wp_self.has_pending = 1;
            wp_store_handler_time(s, wp_ticks_duration_ns(wp_ticks() - c0));
            goto done;
        }
        /* A call that outlasted WP_PENDING_MAX samples is waiting: only
         * its last (minimum duration) can be work. */
        state = WAITPROF_STATE_STALL;
    }
    wp_store_add_bounded(s, state, fn, ips, n, w);
    wp_slow_down(slot, s);
    wp_store_handler_time(s, wp_ticks_duration_ns(wp_ticks() - c0));
done:
    __atomic_store_n(&slot->in_handler, 0, __ATOMIC_RELEASE);
out:
    errno = saved_errno;
}

/* Move the calling thread's pending samples into its store: against a
 * threshold (held 0, value the threshold), or held for the global minimum
 * (held 1, value the call's duration).  The handler writes the pending
 * samples and the store: keep it out while they move.  Two system calls,
 * at most once per sample period. */
static void wp_settle(wp_thread_t *t, int held, uint64_t value, int sclass, int role)
{
    struct wp_slot *slot = t->slot;
    if (slot == NULL) {
        t->has_pending = 0;
        return;
    }
    sigset_t prof, old;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, &old);
    if (held)
        wp_pending_flush_held(slot->store, slot->store->pending, value, sclass, role);
    else
        wp_pending_flush(slot->store, slot->store->pending, value);
    /* Cleared while SIGPROF is blocked, so no sample comes in between. */
    t->has_pending = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void wp_sampler_settle_held(wp_thread_t *t, uint64_t duration, int sclass, int role)
{
    wp_settle(t, 1, duration, sclass, role);
}

void wp_sampler_settle(wp_thread_t *t, uint64_t threshold)
{
    wp_settle(t, 0, threshold, 0, 0);
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
                      ? wp_store_create_in(wp_pool + at + rules, want - rules)
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
    wp_cfi_mine = (struct wp_cfi_cache *)(wp_pool + at);
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

    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = slot->tid;
    clockid_t clk = wp_cfg.cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    /* As many timers as the configured period needs to stay on the tick
     * (wp_timers_for); a longer stride needs no more. */
    int ntm = wp_timers_for(wp_period_ns);
    for (slot->ntimers = 0; slot->ntimers < ntm; slot->ntimers++)
        if (timer_create(clk, &sev, &slot->timer[slot->ntimers]) != 0) {
            wp_log_always("waitprof: timer_create failed (%s); thread %d is not sampled",
                          strerror(errno), slot->index);
            wp_timers_delete(slot);
            return -1;
        }
    wp_self.slot = slot;
    __atomic_store_n(&slot->armed, 1, __ATOMIC_RELEASE);
    /* Started even during MPI_Pcontrol(0): its first signal stops it. */
    if (wp_arm(slot, 1) != 0) {
        wp_log_always("waitprof: timer_settime failed (%s); thread %d is not sampled",
                      strerror(errno), slot->index);
        wp_self.slot = NULL;
        if (__atomic_exchange_n(&slot->armed, 0, __ATOMIC_ACQ_REL))
            wp_timers_delete(slot);
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
    if (__atomic_exchange_n(&slot->armed, 0, __ATOMIC_ACQ_REL))
        wp_timers_delete(slot);
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
    if (!wp_sampler_running() || (wp_self.depth > 0 && !wp_cfg.runtime_threads))
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

WP_EXPORT void *dlopen(const char *file, int mode)
{
    if (real_dlopen == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    void *h = real_dlopen(file, mode);
    /* New objects are unwound by waitprof's unwinder (and named by the
     * partial writer) only once its table lists them; rebuilt before
     * samples are let in again. */
    if (h && wp_started)
        wp_cfi_refresh();
    wp_dl_end();
    return h;
}

/* dl_iterate_phdr holds the loader's write lock while it runs its callback.
 * libunwind calls it from the handler when an address is not yet cached,
 * while holding a lock of its own; if the handler ran on a thread that holds
 * the loader lock, the two would wait for each other.  So a thread in
 * dl_iterate_phdr (the program's, libgcc's, or waitprof's own) counts as
 * busy and its samples are dropped.  The handler's own nested calls pass
 * through here too, harmlessly. */
WP_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    if (real_dl_iterate_phdr == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    int rc = real_dl_iterate_phdr(cb, data);
    wp_dl_end();
    return rc;
}

WP_EXPORT int dlclose(void *handle)
{
    if (real_dlclose == NULL)
        wp_sampler_resolve();
    wp_dl_begin();
    int rc = real_dlclose(handle);
    /* An unloaded object's address range may be reused: the table and
     * every thread's rules are renewed before samples come in again. */
    if (wp_started)
        wp_cfi_refresh();
    wp_dl_end();
    return rc;
}

uint64_t wp_sampler_tick_ns(void)
{
    return wp_tick_ns;
}

int wp_sampler_start(const struct wp_sampler_config *cfg)
{
    wp_cfg = *cfg;
    wp_has_tsel = wp_cfg.tsel.start_ns || wp_cfg.tsel.stop_ns || wp_cfg.tsel.every_ns;
    wp_period_ns = 1000000000ull / (uint64_t)(wp_cfg.hz > 0 ? wp_cfg.hz : 1);
    /* The tick, for expirations on it (see wp_timers_for).  A value outside
     * 0.1-100 ms is not a tick this code knows, and a rate that would need
     * more than WP_TICK_TIMERS timers is not worth them: free-running
     * timers then.  A CPU clock's timers already fire on the tick. */
    struct timespec res;
    wp_tick_ns = 0;
    if (!wp_cfg.cpu_clock && !wp_cfg.free_timer && clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0) {
        uint64_t t = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
        if (t >= 100000 && t <= 100000000)
            wp_tick_ns = t;
        if (wp_timers_for(wp_period_ns) > WP_TICK_TIMERS)
            wp_tick_ns = 0;
    }
    if (wp_cfg.max_frames <= 0 || wp_cfg.max_frames > WP_MAX_FRAMES)
        wp_cfg.max_frames = WP_MAX_FRAMES;
    struct sigaction old;
    if (sigaction(SIGPROF, NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO ? old.sa_sigaction != NULL
                                                : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
        wp_log("waitprof: SIGPROF already has a handler (another profiler?); sampling is off, "
               "remove the other profiler to sample");
        return -1;
    }
    /* The whole budget, reserved now; pages are touched as stores fill, so
     * the resident size grows with use but never beyond the budget. */
    wp_pool_size = wp_cfg.memory ? (size_t)wp_cfg.memory : (size_t)16 << 20;
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
    wp_partial_reserve();
    wp_started = 1;
    __atomic_store_n(&wp_running, 1, __ATOMIC_SEQ_CST);
    if (wp_thread_begin() != 0)
        return -1;
    return 0;
}

void wp_sampler_stop(void)
{
    if (!wp_started)
        return;
    __atomic_store_n(&wp_running, 0, __ATOMIC_SEQ_CST);
    int n = __atomic_load_n(&wp_nslots, __ATOMIC_ACQUIRE);
    if (n > WP_MAX_THREADS)
        n = WP_MAX_THREADS;
    for (int i = 0; i < n; i++)
        if (__atomic_exchange_n(&wp_slots[i].armed, 0, __ATOMIC_ACQ_REL))
            wp_timers_delete(&wp_slots[i]);
    /* A handler that began before the store above finishes in microseconds;
     * wait for it, but never forever (a thread stopped by a debugger). */
    for (int i = 0; i < n; i++)
        for (int spin = 0; spin < 100000 && __atomic_load_n(&wp_slots[i].in_handler, __ATOMIC_SEQ_CST);
             spin++)
            sched_yield();
}

uint64_t wp_sampler_unsampled_threads(void)
{
    return __atomic_load_n(&wp_unsampled, __ATOMIC_ACQUIRE);
}

uint64_t wp_sampler_pool_bytes(void)
{
    return wp_pool_size;
}

void wp_sampler_pause(int paused, uint64_t now_ns)
{
    paused = paused != 0;
    if (__atomic_load_n(&wp_paused, __ATOMIC_ACQUIRE) == paused)
        return;
    __atomic_store_n(&wp_paused, paused, __ATOMIC_SEQ_CST);
    if (wp_ntoggles < WP_TOGGLES_MAX)
        wp_toggles[wp_ntoggles++] = now_ns > wp_cfg.t0_ns ? now_ns - wp_cfg.t0_ns : 0;
    else
        wp_toggles_lost++;
    /* The calling thread stops its own timer now (its own, in normal
     * context, with SIGPROF blocked so its handler cannot come in
     * between), so its pause costs no signal; every other thread's
     * handler stops its own at its next signal (wp_pause_own).  A resume
     * wakes the threads whose timers are stopped, and each restarts its
     * own on its grid (wp_resume_own).  A thread that ended meanwhile gets
     * nothing (ESRCH); should its id already belong to another thread of
     * the process, that thread's handler takes the signal for what it is,
     * a wake-up, and restarts nothing of its own unless stopped. */
    if (paused && wp_started && wp_self.slot && wp_self.slot->store) {
        sigset_t prof, old;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &prof, &old);
        wp_pause_own(wp_self.slot, wp_self.slot->store);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (paused || !wp_started)
        return;
    int n = __atomic_load_n(&wp_nslots, __ATOMIC_ACQUIRE);
    if (n > WP_MAX_THREADS)
        n = WP_MAX_THREADS;
    pid_t pid = getpid();
    for (int i = 0; i < n; i++)
        if (__atomic_load_n(&wp_slots[i].armed, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&wp_slots[i].disarmed, __ATOMIC_SEQ_CST))
            syscall(SYS_tgkill, pid, wp_slots[i].tid, SIGPROF);
}

/* Pieces less than a millisecond apart (a pause of no length) are reported
 * as one; the selected time is still summed exactly. */
struct wp_coalesce {
    void (*fn)(uint64_t, uint64_t, void *);
    void *arg;
    uint64_t a, b;
    int have;
};

static void wp_coalesce_add(uint64_t a, uint64_t b, void *arg)
{
    struct wp_coalesce *c = arg;
    if (c->have && a <= c->b + 1000000) { /* apart by less than the 1 ms shown */
        if (b > c->b)
            c->b = b;
        return;
    }
    if (c->have && c->fn)
        c->fn(c->a, c->b, c->arg);
    c->a = a;
    c->b = b;
    c->have = 1;
}

uint64_t wp_sampler_intervals(uint64_t end_ns, void (*fn)(uint64_t a, uint64_t b, void *arg), void *arg,
                              uint64_t *lost_toggles)
{
    uint64_t end = end_ns > wp_cfg.t0_ns ? end_ns - wp_cfg.t0_ns : 0, total = 0, from = 0;
    struct wp_coalesce co = {fn, arg, 0, 0, 0};
    /* Sampling starts running; each logged toggle flips it (only changes
     * are logged).  When toggles were lost, the log ends early and the rest
     * counts as in the last logged state (said in lost_toggles). */
    int running = 1, n = wp_ntoggles;
    for (int i = 0; i <= n; i++) {
        uint64_t t = i < n && wp_toggles[i] < end ? wp_toggles[i] : end;
        if (running && from < t)
            total += wp_window_pieces(&wp_cfg.tsel, from, t, wp_coalesce_add, &co);
        from = t;
        running = !running;
    }
    if (co.have && fn)
        fn(co.a, co.b, arg);
    *lost_toggles = wp_toggles_lost;
    return total;
}
