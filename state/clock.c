/* state/clock.c — see state/clock.h. */
#include <stdio.h>
#include <string.h>

#include "state/clock.h"

int wp_clock_tsc;

/* A reference pair and the rate as ns per tick in 32.32 fixed point, so a
 * conversion is one 128-bit multiply (no floating point in handlers).  Two
 * copies and an index: calibration fills the unused copy and then flips the
 * index, so a handler that interrupts it still reads a consistent set. */
struct wp_clock_ref {
    uint64_t ticks, ns, ns_per_tick_q32;
};
static struct wp_clock_ref wp_refs[2] = {{0, 0, 1ull << 32}, {0, 0, 1ull << 32}};
static int wp_ref_cur;

/* x86-64 only: the TSC is usable when it runs at a constant rate in every
 * power state (constant_tsc, nonstop_tsc), as Linux reports per CPU. */
static int wp_tsc_usable(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

/* The clock a reference pair reads (wp_clock_test_reader). */
static uint64_t (*wp_clock_reader)(void) = wp_clock_ns;

void wp_clock_test_reader(uint64_t (*read_ns)(void))
{
    wp_clock_reader = read_ns ? read_ns : wp_clock_ns;
}

#if defined(__x86_64__)
/* A reference pair: CLOCK_MONOTONIC and the TSC at one moment.  Read
 * between two TSC reads, the pair is off by at most half the ticks between
 * them; the best of WP_CLOCK_TRIES readings is kept.  One reading alone is
 * off by whatever came between its two reads: an interrupt, a page fault,
 * or, on a node with more ranks than cores, a preemption of milliseconds.
 * Every conversion after it would carry that error, on that rank alone,
 * and matched instances compare the ranks' times on one node without
 * measuring an offset (match/clock.c): a receive would seem to end before
 * its message was sent.  Each reading costs about 30 ns here. */
#define WP_CLOCK_TRIES 16
static void wp_clock_pair_tsc(uint64_t *ns, uint64_t *ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < WP_CLOCK_TRIES; i++) {
        uint64_t a = __rdtsc();
        uint64_t n = wp_clock_reader();
        uint64_t b = __rdtsc();
        if (i == 0 || (b >= a && b - a < best)) {
            best = b >= a ? b - a : UINT64_MAX;
            *ns = n;
            *ticks = a + (b >= a ? (b - a) / 2 : 0);
        }
    }
}
#endif

/* Runs at load, before any wrapper: reads /proc/cpuinfo once and takes the
 * first reference pair.  A program that never calls MPI pays this only. */
__attribute__((constructor)) static void wp_clock_init(void)
{
    wp_clock_tsc = wp_tsc_usable();
    if (!wp_clock_tsc)
        return;
#if defined(__x86_64__)
    wp_clock_pair_tsc(&wp_refs[0].ns, &wp_refs[0].ticks);
    /* Provisional: 1 ns per tick until calibrated (a 1 GHz TSC). */
#endif
}

void wp_clock_calibrate(void)
{
#if defined(__x86_64__)
    if (!wp_clock_tsc)
        return;
    const struct wp_clock_ref *old = &wp_refs[wp_ref_cur];
    uint64_t ns, ticks;
    wp_clock_pair_tsc(&ns, &ticks);
    if (ticks <= old->ticks || ns <= old->ns)
        return;
    struct wp_clock_ref *next = &wp_refs[1 - wp_ref_cur];
    next->ns_per_tick_q32 = (uint64_t)(((unsigned __int128)(ns - old->ns) << 32) / (ticks - old->ticks));
    /* Anchor at now: the line then passes through both pairs, so
     * conversions between them are exact to the pairs' errors. */
    next->ticks = ticks;
    next->ns = ns;
    __atomic_store_n(&wp_ref_cur, 1 - wp_ref_cur, __ATOMIC_RELEASE);
#endif
}

uint64_t wp_ticks_to_ns(uint64_t ticks)
{
    if (!wp_clock_tsc)
        return ticks;
    const struct wp_clock_ref *r = &wp_refs[__atomic_load_n(&wp_ref_cur, __ATOMIC_ACQUIRE)];
    if (ticks >= r->ticks)
        return r->ns + (uint64_t)(((unsigned __int128)(ticks - r->ticks) * r->ns_per_tick_q32) >> 32);
    return r->ns - (uint64_t)(((unsigned __int128)(r->ticks - ticks) * r->ns_per_tick_q32) >> 32);
}

uint64_t wp_ticks_duration_ns(uint64_t dticks)
{
    if (!wp_clock_tsc)
        return dticks;
    const struct wp_clock_ref *r = &wp_refs[__atomic_load_n(&wp_ref_cur, __ATOMIC_ACQUIRE)];
    return (uint64_t)(((unsigned __int128)dticks * r->ns_per_tick_q32) >> 32);
}

void wp_clock_pair(uint64_t *ns, uint64_t *ticks)
{
#if defined(__x86_64__)
    if (wp_clock_tsc) {
        wp_clock_pair_tsc(ns, ticks);
        return;
    }
#endif
    *ns = *ticks = wp_clock_ns();
}

void wp_clock_anchor(uint64_t *ns, uint64_t *ticks)
{
    const struct wp_clock_ref *r = &wp_refs[__atomic_load_n(&wp_ref_cur, __ATOMIC_ACQUIRE)];
    if (!wp_clock_tsc) {
        *ns = *ticks = 0;
        return;
    }
    *ns = r->ns;
    *ticks = r->ticks;
}
