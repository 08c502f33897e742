/* bench/perf_read_cold.c — what one read() of a perf_event group costs when
 * it comes once every T of the program's work, on this machine, without MPI
 * or waitprof.
 *
 * usage: perf_read_cold [repeats]        (default 200)
 *
 * Why: with WAITPROF_COUNTERS the SIGPROF handler reads the thread's group
 * once per sample (sampler/ctr_perf.c), so at 100 Hz the read meets the
 * kernel's perf code and data as 10 ms of the program left them.  This
 * program opens the group waitprof's benchmarks count (task-clock and
 * context-switches, read with PERF_FORMAT_GROUP and both times, as waitprof
 * does), then for T = 0.01, 1 and 10 ms of two kinds of work (one kind
 * after the other, the periods interleaved so drift hits all of them),
 * times one group read and, for comparison, one getppid() (the cheapest
 * system call):
 *   spin    the clock in a loop: a tiny footprint, like a compute kernel
 *           that stays in cache;
 *   sweep   one byte written per 64-byte line of an 8 MiB buffer, over and
 *           over: a memory-bound program's footprint.
 * If the read's time grows with T and with the footprint while getppid's
 * stays small, the growth is the perf path's coldness, not waitprof.  One
 * line per work, period and call:
 *   perf_read_cold work=<spin|sweep> period_us=<T> call=<read|getppid>
 *       median_ns=<...> p10_ns=<...> p90_ns=<...>
 * Build: cc -std=c11 -O2 perf_read_cold.c
 */
#define _GNU_SOURCE

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PR_SWEEP_BYTES (8u << 20)

static unsigned char pr_buf[PR_SWEEP_BYTES];
static volatile uint64_t pr_sink;

static uint64_t pr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pr_open(uint64_t config, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = config;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

/* T of work of the given kind: the clock alone, or the clock and a sweep. */
static void pr_work(int sweep, uint64_t ns)
{
    uint64_t until = pr_now() + ns;
    size_t i = 0;
    while (pr_now() < until) {
        if (!sweep) {
            pr_sink++;
            continue;
        }
        for (int k = 0; k < 256; k++, i = (i + 64) % PR_SWEEP_BYTES)
            pr_buf[i]++;
    }
}

static int pr_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 200;
    if (repeats < 10) {
        fprintf(stderr, "usage: perf_read_cold [repeats >= 10]\n");
        return 2;
    }
    int leader = pr_open(PERF_COUNT_SW_TASK_CLOCK, -1);
    int member = leader >= 0 ? pr_open(PERF_COUNT_SW_CONTEXT_SWITCHES, leader) : -1;
    if (member < 0) {
        perror("perf_read_cold: perf_event_open");
        return 1;
    }
    static const long period_us[] = {10, 1000, 10000};
    enum { NP = sizeof period_us / sizeof period_us[0], NW = 2, NC = 2 };
    uint64_t *t = malloc((size_t)NW * NP * NC * (size_t)repeats * sizeof *t);
    if (t == NULL)
        return 1;
    memset(pr_buf, 1, sizeof pr_buf); /* the pages exist before any timing */
    for (int w = 0; w < NW; w++)
        for (int r = 0; r < repeats; r++)
            for (int p = 0; p < NP; p++)
                for (int c = 0; c < NC; c++) {
                    /* The same call once untimed, then T of work: the
                     * timed call meets what T alone left since the last
                     * one, as a sample meets what one period left. */
                    uint64_t g[8];
                    if (read(leader, g, sizeof g) <= 0)
                        return 1;
                    pr_sink += (uint64_t)syscall(SYS_getppid);
                    pr_work(w, (uint64_t)period_us[p] * 1000u);
                    uint64_t t0 = pr_now();
                    if (c == 0) {
                        if (read(leader, g, sizeof g) <= 0)
                            return 1;
                    } else {
                        pr_sink += (uint64_t)syscall(SYS_getppid);
                    }
                    t[(((size_t)w * NP + p) * NC + c) * repeats + r] = pr_now() - t0;
                }
    for (int w = 0; w < NW; w++)
        for (int p = 0; p < NP; p++)
            for (int c = 0; c < NC; c++) {
                uint64_t *v = t + (((size_t)w * NP + p) * NC + c) * repeats;
                qsort(v, (size_t)repeats, sizeof *v, pr_cmp);
                printf("perf_read_cold work=%s period_us=%ld call=%s median_ns=%llu p10_ns=%llu p90_ns=%llu\n",
                       w ? "sweep" : "spin", period_us[p], c ? "getppid" : "read",
                       (unsigned long long)v[repeats / 2], (unsigned long long)v[repeats / 10],
                       (unsigned long long)v[repeats * 9 / 10]);
            }
    free(t);
    return 0;
}
