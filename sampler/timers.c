/* sampler/timers.c — a thread's sampling timers: on the kernel's tick or
 * free-running, re-armed for a longer period when its store fills and
 * moved past unselected time.  See sampler/internal.h. */
#include <time.h>

#include "format/select.h"
#include "sampler/internal.h"

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
int wp_timers_for(uint64_t p)
{
    return (!wp_smp_tick_ns || p <= wp_smp_tick_ns) ? 1 : (int)(wp_smp_tick_ns / wp_gcd(p, wp_smp_tick_ns));
}

static uint64_t wp_ceil_to(uint64_t x, uint64_t m)
{
    return (x + m - 1) / m * m;
}

uint64_t wp_mono_ns_sig(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static int wp_settime_sig(timer_t t, int flags, uint64_t first, uint64_t every)
{
    struct itimerspec its = {{(time_t)(every / 1000000000ull), (long)(every % 1000000000ull)},
                             {(time_t)(first / 1000000000ull), (long)(first % 1000000000ull)}};
    return timer_settime(t, flags, &its, NULL);
}

/* Stop a thread's timers (its own, from its handler or with SIGPROF
 * blocked).  timer_settime is async-signal-safe. */
int wp_disarm_sig(struct wp_slot *slot)
{
    if (wp_smp_ovf)
        return wp_ovf_disarm_sig(slot);
    int rc = 0;
    for (int i = 0; i < slot->ntimers; i++)
        rc |= wp_settime_sig(slot->timer[i], 0, 0, 0);
    return rc;
}

/* Delete a thread's timers: by the owner that wins the exchange on
 * slot->armed.  wp_sampler_stop runs from the termination handler too:
 * glibc's timer_delete for a SIGEV_THREAD_ID timer is a plain system
 * call.  An overflow trigger is only stopped here: another thread's
 * handler may still be reading it, so its descriptor is closed once none
 * does (wp_ovf_close, by the thread itself or the stopper). */
void wp_timers_delete(struct wp_slot *slot)
{
    if (wp_smp_ovf) {
        wp_ovf_disarm_sig(slot);
        return;
    }
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
int wp_arm_in_sig(struct wp_slot *slot, uint32_t stride, uint64_t first_ns)
{
    /* A count has no grid in time: the overflow trigger just restarts. */
    if (wp_smp_ovf)
        return wp_ovf_arm_sig(slot, stride);
    uint64_t p = wp_smp_period_ns * (stride ? stride : 1), f = first_ns ? first_ns : p;
    uint64_t now = wp_mono_ns_sig();
    if (!wp_smp_tick_ns) {
        slot->grid_ns = now + f;
        return wp_settime_sig(slot->timer[0], 0, f, p);
    }
    int m = wp_timers_for(p), rc = 0;
    uint64_t t = f > p ? now + f - p : now, k = t / p + 1;
    /* The grid point before may still be ahead once moved to its tick. */
    if (m > 1 && wp_ceil_to((k - 1) * p, wp_smp_tick_ns) > t)
        k--;
    slot->grid_ns = k * p;
    for (int i = 0; i < slot->ntimers; i++)
        rc |= i < m ? wp_settime_sig(slot->timer[i], TIMER_ABSTIME,
                                 m > 1 ? wp_ceil_to((k + (uint64_t)i) * p, wp_smp_tick_ns) : k * p, (uint64_t)m * p)
                    : wp_settime_sig(slot->timer[i], 0, 0, 0);
    return rc;
}

int wp_arm_sig(struct wp_slot *slot, uint32_t stride)
{
    return wp_arm_in_sig(slot, stride, 0);
}

/* A signal that found no selected time (WAITPROF_START, STOP, WINDOW):
 * rather than take a signal every period through the unselected stretch,
 * the handler moves its own timer's next expiration to one period after
 * the first selected instant (wp_window_next_sig), or stops it when STOP has
 * passed, so the stretch costs one signal.  The first signal after it
 * then stands for a period of selected time, so the weights stay right.
 * Own timer only, like wp_slow_down_sig; wp_arm_in_sig and timer_settime are
 * async-signal-safe.  Not with a CPU clock, nor with an overflow
 * trigger: the selection is in wall time, which a thread's CPU time (or
 * count) cannot be set to. */
void wp_skip_unselected_sig(struct wp_slot *slot, struct wp_store *s, uint64_t rel, uint64_t period)
{
    uint64_t next = wp_window_next_sig(&wp_smp_cfg.tsel, rel);
    if (wp_smp_cfg.cpu_clock || wp_smp_ovf || (next != UINT64_MAX && next <= rel + period) ||
        !__atomic_load_n(&slot->armed, __ATOMIC_ACQUIRE))
        return;
    if (next == UINT64_MAX)
        wp_disarm_sig(slot);
    else
        wp_arm_in_sig(slot, s->stride, next - rel + period);
}
