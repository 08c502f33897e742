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

/* Runs at load, before any wrapper: reads /proc/cpuinfo once and takes the
 * first reference pair.  A program that never calls MPI pays this only. */
__attribute__((constructor)) static void wp_clock_init(void)
{
    wp_clock_tsc = wp_tsc_usable();
    if (!wp_clock_tsc)
        return;
#if defined(__x86_64__)
    wp_refs[0].ns = wp_clock_ns();
    wp_refs[0].ticks = __rdtsc();
    /* Provisional: 1 ns per tick until calibrated (a 1 GHz TSC). */
#endif
}

void wp_clock_calibrate(void)
{
#if defined(__x86_64__)
    if (!wp_clock_tsc)
        return;
    const struct wp_clock_ref *old = &wp_refs[wp_ref_cur];
    uint64_t ns = wp_clock_ns(), ticks = __rdtsc();
    if (ticks <= old->ticks || ns <= old->ns)
        return;
    struct wp_clock_ref *next = &wp_refs[1 - wp_ref_cur];
    next->ns_per_tick_q32 = (uint64_t)(((unsigned __int128)(ns - old->ns) << 32) / (ticks - old->ticks));
    /* Anchor at now: conversions near the calibration are then exact and
     * the error grows only with the distance from it. */
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
