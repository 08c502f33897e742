/* state/clock.h — the wrappers' clock.
 *
 * Contract: wp_ticks() is the cheapest monotonic timestamp this machine
 * offers: the TSC on x86-64 when the CPU declares it constant and nonstop
 * (one rdtsc, about a quarter of a vDSO clock_gettime here), else
 * CLOCK_MONOTONIC nanoseconds.  wp_ticks_to_ns() turns a tick value into
 * CLOCK_MONOTONIC nanoseconds.  The TSC rate is measured between library
 * load and MPI_Init (wp_clock_calibrate(), normal context), a span of at
 * least the MPI start-up; before that, conversions use a provisional
 * rate.  Each measurement reads a reference pair (CLOCK_MONOTONIC and the
 * TSC at one moment) within a few tens of nanoseconds, however the reading
 * is interrupted.  wp_ticks_to_ns() and
 * wp_ticks_duration_ns() are async-signal-safe: they read a few globals and
 * the TSC.
 */
#ifndef WP_STATE_CLOCK_H
#define WP_STATE_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

extern int wp_clock_tsc; /* 1 when wp_ticks() reads the TSC */

static inline uint64_t wp_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t wp_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(wp_clock_tsc, 1))
        return __rdtsc();
#endif
    return wp_clock_ns();
}

uint64_t wp_ticks_to_ns(uint64_t ticks);

/* A duration in ticks as nanoseconds / microseconds.  Async-signal-safe. */
uint64_t wp_ticks_duration_ns(uint64_t dticks);
static inline uint64_t wp_ticks_to_us(uint64_t dticks)
{
    return wp_ticks_duration_ns(dticks) / 1000;
}

/* Measure the TSC rate against CLOCK_MONOTONIC since the last reference
 * pair (library load, or the last calibration) and anchor conversions at
 * now.  Normal context. */
void wp_clock_calibrate(void);

/* A reference pair now: CLOCK_MONOTONIC ns and ticks at one moment (the
 * same value twice without the TSC).  Normal context. */
void wp_clock_pair(uint64_t *ns, uint64_t *ticks);
/* The pair conversions are anchored at (the last calibration's); 0 and 0
 * without the TSC. */
void wp_clock_anchor(uint64_t *ns, uint64_t *ticks);

/* For tests only: the clock reference pairs read (NULL: CLOCK_MONOTONIC
 * again), so that a test can delay the reading as a preemption would. */
void wp_clock_test_reader(uint64_t (*read_ns)(void));

#endif
