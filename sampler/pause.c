/* sampler/pause.c — pausing and resuming sampling for MPI_Pcontrol, and
 * the sampled intervals of the run.  See sampler/sampler.h for the
 * contract, sampler/internal.h for the sampler's files. */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/select.h"
#include "sampler/internal.h"

/* MPI_Pcontrol toggles: times since t0 at which the state changed; entry i
 * starts a paused stretch when i is even.  Normal context only. */
static uint64_t wp_toggles[WP_TOGGLES_MAX];
static int wp_ntoggles;
static uint64_t wp_toggles_lost;

/* MPI_Pcontrol: only a thread's own handler stops or restarts its timer,
 * so these never race with wp_slow_down_sig's re-arm, and a timer always runs
 * at its thread's stride.  A signal that finds the pause in force stops
 * the timer, so the paused stretch costs no more signals; the resume
 * (wp_sampler_pause) sends each stopped thread a SIGPROF of its own, on
 * which wp_resume_own_sig restarts it.  Both sides write their flag and then
 * read the other's (sequentially consistent, a Dekker pair): a resume
 * that comes while a handler is stopping the timer is seen by one of them,
 * and the exchange on the flag lets exactly one restart it.  Both call
 * timer_settime and clock_gettime, async-signal-safe by POSIX (with the
 * overflow trigger, ioctl and read on its descriptor instead, plain system
 * calls: sampler/overflow.c).
 *
 * The restart keeps the thread's grid: the first expiration is the next
 * one the timer would have had, had it run on.  Then every grid point in
 * the sampled stretches is sampled, however short they are: a restart one
 * whole period later would never sample a stretch shorter than a period. */
void wp_resume_own_sig(struct wp_slot *slot, struct wp_store *s)
{
    if (__atomic_load_n(&wp_smp_paused, __ATOMIC_SEQ_CST) || !__atomic_exchange_n(&slot->disarmed, 0, __ATOMIC_SEQ_CST))
        return;
    uint64_t p = wp_smp_period_ns * (s->stride ? s->stride : 1), g = slot->grid_ns, now = wp_mono_ns_sig();
    uint64_t first = now < g ? (g - now) % p : p - (now - g) % p;
    wp_arm_in_sig(slot, s->stride, first ? first : p);
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
static void wp_drop_pending_prof_sig(void)
{
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    struct timespec zero = {0, 0};
    syscall(SYS_rt_sigtimedwait, &prof, NULL, &zero, (size_t)(_NSIG / 8));
}

void wp_pause_own_sig(struct wp_slot *slot, struct wp_store *s)
{
    if (!__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE) || wp_disarm_sig(slot) != 0)
        return;
    /* An overflow trigger's count since the last sample is left out, so
     * the first sample after the resume weighs only sampled time. */
    if (wp_smp_ovf)
        wp_ovf_forget_sig(slot);
    /* Before publishing the stop.  Should this drop a wake-up, it is not
     * lost: a resume after the store below sees the thread stopped and
     * wakes it again, one before it is seen by wp_resume_own_sig. */
    wp_drop_pending_prof_sig();
    __atomic_store_n(&slot->disarmed, 1, __ATOMIC_SEQ_CST);
    wp_resume_own_sig(slot, s);
}

void wp_sampler_pause(int paused, uint64_t now_ns)
{
    paused = paused != 0;
    if (__atomic_load_n(&wp_smp_paused, __ATOMIC_ACQUIRE) == paused)
        return;
    __atomic_store_n(&wp_smp_paused, paused, __ATOMIC_SEQ_CST);
    if (wp_ntoggles < WP_TOGGLES_MAX)
        wp_toggles[wp_ntoggles++] = now_ns > wp_smp_cfg.t0_ns ? now_ns - wp_smp_cfg.t0_ns : 0;
    else
        wp_toggles_lost++;
    /* The calling thread stops its own timer now (its own, in normal
     * context, with SIGPROF blocked so its handler cannot come in
     * between), so its pause costs no signal; every other thread's
     * handler stops its own at its next signal (wp_pause_own_sig).  A resume
     * wakes the threads whose timers are stopped, and each restarts its
     * own on its grid (wp_resume_own_sig).  A thread that ended meanwhile gets
     * nothing (ESRCH); should its id already belong to another thread of
     * the process, that thread's handler takes the signal for what it is,
     * a wake-up, and restarts nothing of its own unless stopped. */
    if (paused && wp_smp_started && wp_self.slot && wp_self.slot->store) {
        sigset_t prof, old;
        sigemptyset(&prof);
        sigaddset(&prof, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &prof, &old);
        wp_pause_own_sig(wp_self.slot, wp_self.slot->store);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (paused || !wp_smp_started)
        return;
    int n = wp_slots_used();
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
    uint64_t end = end_ns > wp_smp_cfg.t0_ns ? end_ns - wp_smp_cfg.t0_ns : 0, total = 0, from = 0;
    struct wp_coalesce co = {fn, arg, 0, 0, 0};
    /* Sampling starts running; each logged toggle flips it (only changes
     * are logged).  When toggles were lost, the log ends early and the rest
     * counts as in the last logged state (said in lost_toggles). */
    int running = 1, n = wp_ntoggles;
    for (int i = 0; i <= n; i++) {
        uint64_t t = i < n && wp_toggles[i] < end ? wp_toggles[i] : end;
        if (running && from < t)
            total += wp_window_pieces_sig(&wp_smp_cfg.tsel, from, t, wp_coalesce_add, &co);
        from = t;
        running = !running;
    }
    if (co.have && fn)
        fn(co.a, co.b, arg);
    *lost_toggles = wp_toggles_lost;
    return total;
}
