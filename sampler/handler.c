/* sampler/handler.c — the SIGPROF handler: one sample of the interrupted
 * thread's MPI state and call stack into its store, and the settling of the
 * samples it held for a call that may wait.  See sampler/sampler.h for the
 * contract, sampler/internal.h for the sampler's files. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "format/select.h"
#include "sampler/counters.h"
#include "sampler/ctr_split.h"
#include "sampler/internal.h"
#include "sampler/timeline.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/hooks.h"

/* libunwind's two ways (see wp_unwind_sig). */
static int wp_unwind_lib_sig(ucontext_t *uc, uintptr_t *out, int max, int *trunc, int *slow)
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
static __attribute__((noinline)) int wp_unwind_sig(void *ucv, uintptr_t *out, int max, int *trunc, int *lib,
                                                int *slow, int *in_wrapper)
{
    ucontext_t *uc = ucv;
    int k = -1;
    if (wp_cfi_mine) {
        /* Inside a wrapped call, from the outermost wrapper's frame
         * (wrap/wrap.h): its PC is checked to be a wrapper's, so a frame
         * recorded by anything else is never trusted. */
        if (wp_self.depth > 0 && wp_is_wrapper_ip(wp_self.call_pc))
            k = wp_cfi_unwind_from_sig(uc, wp_cfi_mine, wp_stack_lo, wp_stack_hi, wp_self.call_pc, wp_self.call_cfa,
                                   out, max, trunc);
        if (k < 0)
            k = wp_cfi_unwind_sig(uc, wp_cfi_mine, wp_stack_lo, wp_stack_hi, out, max, trunc);
    }
    if (k < 0) {
        *lib = 1;
        k = wp_unwind_lib_sig(uc, out, max, trunc, slow);
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

/* Step 1: how many configured periods this signal stands for, 0 when none
 * of them is selected.  A signal with overruns stands for w expirations
 * over the last w periods, not all now (a thread that was not scheduled
 * gets them late, in one signal).  With a time selection
 * (START/STOP/WINDOW) only those that fall into the selected time count:
 * the selected part of that span, in periods, rounded; a signal that finds
 * none moves its own timer past the unselected stretch.  Each expiration
 * stands for stride configured periods.  Arithmetic, clock_gettime and
 * timer_settime only. */
static uint64_t wp_sample_weight_sig(struct wp_slot *slot, struct wp_store *s, const siginfo_t *si)
{
    /* An overflow trigger's signal carries no overrun (its si_fd is where
     * a timer's si_overrun would be): the weight is the thread's count
     * since its last sample, in periods (wp_ovf_weight_sig, one read()).
     * A selection in wall time takes the sample whole or not at all, by
     * whether its instant is selected: a count has no span in time to cut. */
    if (wp_smp_ovf) {
        uint64_t w = wp_ovf_weight_sig(slot, s->stride);
        if (w && wp_smp_has_tsel) {
            uint64_t rel = wp_now_ns() - wp_smp_cfg.t0_ns;
            if (wp_window_pieces_sig(&wp_smp_cfg.tsel, rel, rel + 1, NULL, NULL) == 0) {
                s->unselected_signals++;
                return 0;
            }
        }
        return w;
    }
    uint64_t w = si->si_overrun > 0 ? (uint64_t)si->si_overrun + 1 : 1;
    uint32_t stride = s->stride ? s->stride : 1;
    if (wp_smp_has_tsel) {
        uint64_t t0 = wp_now_ns();
        uint64_t period = wp_smp_period_ns * stride, rel = t0 - wp_smp_cfg.t0_ns, span = w * period;
        uint64_t in = wp_window_pieces_sig(&wp_smp_cfg.tsel, rel > span ? rel - span : 0, rel, NULL, NULL);
        w = (in + period / 2) / period;
        if (w == 0) {
            s->unselected_signals++;
            wp_skip_unselected_sig(slot, s, rel, period);
            return 0;
        }
    }
    return w * stride;
}

/* Step 3: hold a sample of a call that may wait until the call returns and
 * Work and Stall can be told apart (wp_sampler_settle): the call's stack is
 * kept once, each sample as its offset from the call's entry.  Returns 0
 * when the call already holds WP_PENDING_MAX samples: it is waiting, and
 * only its last (minimum duration) can be work, so the caller stores this
 * one as Stall.  Stores into the thread's preallocated pending buffer. */
static int wp_hold_sig(struct wp_store *s, const uintptr_t *ips, int n, int fn, uint64_t w, const uint64_t *ctr)
{
    struct wp_pending *p = s->pending;
    if (p->n >= WP_PENDING_MAX)
        return 0;
    if (p->n == 0) {
        memcpy(p->ips, ips, (size_t)n * sizeof *ips);
        p->depth = (uint16_t)n;
        p->fn = (uint16_t)fn;
        p->enter = wp_self.enter_ticks;
    }
    p->off[p->n] = wp_ticks() - wp_self.enter_ticks;
    p->weight[p->n] = (uint32_t)w;
    /* The sample's counter deltas wait with it for its state. */
    if (p->ctr)
        memcpy(&p->ctr[(size_t)p->n * s->nctr], ctr, (size_t)s->nctr * sizeof *ctr);
    p->n++;
    wp_self.has_pending = 1;
    return 1;
}

/* Step 5: halve this thread's rate when its store passed another step towards
 * full (wp_store_pressure_sig).  Here, not in timers.c, so that the
 * common case (no change) is inlined into the handler.  Design: the handler re-arms its own thread's
 * timer with twice the period rather than skipping every other tick.
 * wp_arm_sig is async-signal-safe (see there), touches only this thread's
 * timer (no other thread re-arms it, see wp_resume_own_sig; the stopper may
 * delete it concurrently, and then the call just fails with EINVAL), and
 * a longer period also halves the cost of the signals, which dominates
 * waitprof's overhead (doc/performance.md), where skipping ticks would
 * keep paying it.  The weights stay exact: every expiration after the
 * re-arm weighs the new stride, in units of the configured period. */
static void wp_slow_down_sig(struct wp_slot *slot, struct wp_store *s)
{
    uint32_t stride = s->stride ? s->stride : 1;
    int level = wp_store_pressure_sig(s);
    int halvings = 0;
    while ((1u << halvings) < stride)
        halvings++;
    if (level <= halvings || stride >= WP_STRIDE_MAX || (!wp_smp_ovf && (int)(stride * 2) > wp_smp_cfg.hz))
        return;
    stride *= 2;
    if (__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE) && wp_arm_sig(slot, stride) == 0)
        s->stride = stride;
}

/* The SIGPROF handler, in steps: is this a sample at all (a wake-up, a
 * pause, sampling stopped), its weight (step 1), the stack (step 2,
 * wp_unwind_sig), the state: from the record, from the stall source, or
 * held until the call returns (step 3), into the store (step 4), and slower when the store fills (step 5).
 * What it calls, and why each is safe here:
 * - wp_self (TLS): initial-exec, see state/thread.h.
 * - wp_ticks / wp_ticks_duration_ns: an rdtsc and arithmetic on globals
 *   (state/clock.h); clock_gettime, async-signal-safe by POSIX, only with
 *   a time selection or without a usable TSC.
 * - wp_unwind_sig: waitprof's unwinder (sampler/unwind.h: reads the objects'
 *   unwind tables, this thread's cache and its stack), else libunwind local
 *   unwinding (see above), no malloc; the loader lock case is excluded by
 *   wp_dl_held().
 * - wp_store_add_sig / wp_store_handler_time_sig / wp_hold_sig /
 *   wp_tl_add_sig: own code on preallocated memory; wp_ticks_to_ns reads
 *   a few globals (state/clock.h).
 * - wp_ctr_read_abs_sig, wp_ctr_delta_sig: one read() of the thread's
 *   perf_event group, which POSIX lists as async-signal-safe and which never
 *   blocks on such a descriptor, and with PAPI events one PAPI_read() of the
 *   thread's own started EventSet, which is a table lookup and read() on the
 *   perf_event descriptors PAPI opened for this thread, no allocation and no
 *   lock (sampler/ctr_papi.c says why); the previous counts are static
 *   memory only this thread writes (sampler/counters.h), and not while its
 *   wrapper reads (ctr_busy).  wp_ctr_split_abs_sig: arithmetic on the
 *   thread's own memory.
 * - wp_hook_stalled: the stall source's verdict (mpit/source.h,
 *   wp_src_stalled_sig), which reads this thread's TLS, a static counter
 *   array and the progress passes' static words (mpit/requests.h).
 * - wp_slow_down_sig, wp_pause_own_sig, wp_resume_own_sig,
 *   wp_sample_weight_sig: timer_settime, async-signal-safe by POSIX (see
 *   wp_arm_in_sig); the window arithmetic of format/select.h.  With the
 *   overflow trigger (sampler/overflow.c) instead: ioctl on the thread's
 *   perf_event descriptor to stop, restart or re-period it, and one read()
 *   of its count for the weight, plain system calls that never block on
 *   such a descriptor.
 * errno is saved and restored because unwinding may set it. */
void wp_on_sigprof(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    int saved_errno = errno;
    /* Every delivery counts, sample or not (sampler/sleeps.c). */
    wp_self.sigprof++;
    struct wp_slot *slot = wp_self.slot;
    if (slot == NULL)
        goto out;
    /* Publish that a handler runs, then check that sampling is on: with
     * wp_sampler_stop()'s store-then-check this is a Dekker pair, so the
     * stopper either sees us here or we see it stopped. */
    __atomic_store_n(&slot->in_handler, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&wp_smp_running, __ATOMIC_SEQ_CST))
        goto done;
    struct wp_store *s = slot->store;
    /* The handler's own time, in ticks: a TSC read touches no memory, where
     * the vDSO clock reads its data page, cold at 100 Hz. */
    uint64_t c0 = wp_ticks();
    /* The counts since this thread's previous read (sampler/counters.h):
     * read at every signal, so that a signal that stores no sample (a
     * pause, an unselected stretch, the loader lock) charges its counts to
     * no one rather than to the next sample.  After the check that
     * sampling is on, so that the stopper, which closes the groups once no
     * handler runs, never has one read a closed descriptor. */
    uint64_t ctr[WP_CTR_MAX];
    if (s->nctr) {
        /* A wrapper of this thread in the middle of its own read
         * (WAITPROF_COUNTERS_SPLIT, sampler/ctr_split.h): leave the
         * group and the baselines to it; this sample carries no counts,
         * the next one takes them. */
        uint64_t abs[WP_CTR_MAX];
        if (__atomic_load_n(&slot->ctr_busy, __ATOMIC_SEQ_CST) || wp_ctr_read_abs_sig(slot->index, abs) != 0) {
            for (uint32_t c = 0; c < s->nctr && c < WP_CTR_MAX; c++)
                ctr[c] = 0;
        } else {
            wp_ctr_delta_sig(slot->index, abs, ctr);
            if (wp_ctr_split)
                wp_ctr_split_abs_sig(slot, wp_self.state != WAITPROF_STATE_NOT_IN_MPI, abs);
        }
    }
    /* Not a timer's expiration (or, with the overflow trigger, not an
     * overflow of this thread's event): the wake-up of MPI_Pcontrol(1), or
     * a SIGPROF someone else sent, which is no sample. */
    if (wp_smp_ovf ? !wp_ovf_is_mine_sig(slot, si) : si->si_code != SI_TIMER) {
        wp_resume_own_sig(slot, s);
        goto done;
    }
    if (__atomic_load_n(&wp_smp_paused, __ATOMIC_SEQ_CST)) {
        s->paused_signals++;
        wp_pause_own_sig(slot, s);
        goto done;
    }
    uint64_t w = wp_sample_weight_sig(slot, s, si);
    if (w == 0)
        goto done;
    if (wp_dl_held()) {
        s->dropped_dl += w;
        goto done;
    }
    int state = wp_self.state, fn = wp_self.fn;
    /* A lean-mode wrapper read no clock (wrap/wrap.h): the call's first
     * sample dates it.  Same thread, so no other writer; wp_ticks is a TSC
     * or vDSO clock read. */
    if (state == WAITPROF_STATE_WORK && wp_self.enter_ticks == 0)
        wp_self.enter_ticks = wp_ticks();
    uintptr_t ips[WP_MAX_FRAMES];
    int trunc = 0, lib = 0, slow = 0, in_wrapper = 0;
    int n = wp_unwind_sig(ucv, ips, wp_smp_cfg.max_frames, &trunc, &lib, &slow, &in_wrapper);
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
     * thread waits (state/hooks.h; mpit's answer reads TLS and static
     * memory only). */
    int told = state == WAITPROF_STATE_WORK && in_wrapper && wp_self.src_seen && wp_hook_stalled
                   ? wp_hook_stalled()
                   : -1;
    if (told >= 0) {
        state = told ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK;
        s->by_source += w;
    }
    /* Inside a call that may wait, Work and Stall are told apart when the
     * call returns: hold the sample until then.  Lean wrappers record
     * nothing to tell them apart by: Work at once. */
    else if (state == WAITPROF_STATE_WORK && in_wrapper && !wp_lean && fn > 0 && fn < WP_FN_COUNT &&
             wp_fn_table[fn].waits) {
        if (wp_hold_sig(s, ips, n, fn, w, ctr)) {
            wp_store_handler_time_sig(s, wp_ticks_duration_ns(wp_ticks() - c0));
            goto done;
        }
        state = WAITPROF_STATE_STALL;
    }
    wp_store_add_ctr_sig(s, state, fn, ips, n, w, s->nctr ? ctr : NULL);
    /* Into the thread's timeline at the time of the sample: arithmetic on
     * its preallocated bins (sampler/timeline.h); a waiting sample votes for
     * its stack, whose id hashes the frames already in hand. */
    wp_tl_add_sig(s->tl, wp_ticks_to_ns(c0), state, w,
                  state == WAITPROF_STATE_STALL ? wp_tl_stack_id(fn, ips, n) : 0);
    /* What the thread computes, for the causes of waits (match/match.h):
     * a store in the same thread's record, async-signal-safe. */
    if (state == WAITPROF_STATE_NOT_IN_MPI && s->last_hash)
        wp_self.last_compute = s->last_hash;
    wp_slow_down_sig(slot, s);
    wp_store_handler_time_sig(s, wp_ticks_duration_ns(wp_ticks() - c0));
done:
    __atomic_store_n(&slot->in_handler, 0, __ATOMIC_RELEASE);
out:
    errno = saved_errno;
}

/* Move the calling thread's pending samples into its store: against a
 * threshold (held 0, value the threshold), or held for the category's
 * share of time waited (held 1, value the call's duration).  The handler writes the pending
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
