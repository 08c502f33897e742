/* bench/cold_cache.c — how long one fixed, short piece of code takes when it
 * runs once every T of busy time, on this machine, without MPI or waitprof.
 *
 * usage: cold_cache [repeats]        (default 300)
 *
 * Why: waitprof's SIGPROF handler runs once per sampling period, so it meets
 * whatever state the core's caches, TLBs and branch predictors are in after a
 * period of the application (and, on a VM, of the host and its other guests).
 * This program separates that effect from the handler's own work: a thread
 * spins on the clock (a tiny footprint of its own) for T, then times a piece
 * that resembles the handler — unw_backtrace() of a 13-frame stack and 64
 * scattered reads from a 256 KiB table, as the handler's store lookup does —
 * for T = 0.1, 1 and 10 ms, interleaved so drift hits all three.  If the
 * piece's time grows with T, the growth is the machine, not waitprof.  One
 * line per period:
 *   cold_cache period_us=<T> median_ns=<median> p10_ns=<...> p90_ns=<...>
 * Build: cc -std=c11 -O2 cold_cache.c -lunwind
 */
#define _POSIX_C_SOURCE 200809L

#include <libunwind.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CC_TABLE (256 * 1024 / sizeof(uint64_t))
#define CC_DEPTH 12

static volatile uint64_t cc_table[CC_TABLE];
static volatile uint64_t cc_sink;

static uint64_t cc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Recursion builds the stack to unwind; noinline keeps every level a frame. */
static __attribute__((noinline)) uint64_t cc_piece(int depth)
{
    if (depth > 0)
        return cc_piece(depth - 1) + 1;
    void *frames[64];
    uint64_t x = (uint64_t)unw_backtrace(frames, 64);
    /* A fixed pseudo-random sequence: the same lines every time, so only the
     * state they are found in can change. */
    uint64_t h = 12345;
    for (int i = 0; i < 64; i++) {
        h = h * 6364136223846793005u + 1442695040888963407u;
        x += cc_table[(h >> 33) % CC_TABLE];
    }
    return x;
}

static int cc_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 300;
    if (repeats < 10) {
        fprintf(stderr, "usage: cold_cache [repeats >= 10]\n");
        return 2;
    }
    static const long period_us[] = {100, 1000, 10000};
    enum { NP = sizeof period_us / sizeof period_us[0] };
    uint64_t *t = malloc(NP * (size_t)repeats * sizeof *t);
    if (t == NULL)
        return 1;
    cc_sink += cc_piece(CC_DEPTH); /* first use: libunwind's caches are filled here */
    for (int r = 0; r < repeats; r++)
        for (int p = 0; p < NP; p++) {
            uint64_t until = cc_now() + (uint64_t)period_us[p] * 1000u;
            while (cc_now() < until)
                cc_sink++;
            uint64_t t0 = cc_now();
            cc_sink += cc_piece(CC_DEPTH);
            t[p * repeats + r] = cc_now() - t0;
        }
    for (int p = 0; p < NP; p++) {
        uint64_t *v = t + p * repeats;
        qsort(v, (size_t)repeats, sizeof *v, cc_cmp);
        printf("cold_cache period_us=%ld median_ns=%llu p10_ns=%llu p90_ns=%llu\n", period_us[p],
               (unsigned long long)v[repeats / 2], (unsigned long long)v[repeats / 10],
               (unsigned long long)v[repeats * 9 / 10]);
    }
    free(t);
    return 0;
}
