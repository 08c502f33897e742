/* tests/unit/test_counters.c — the counters' name rules (sampler/
 * counters.c, sampler/ctr_backend.h): which backend a name is asked of,
 * the perf_event twin of each PAPI name that has one (the fallback
 * table), units and file names; then, on this machine, a setup of
 * perf::TASK-CLOCK (PAPI counts it, or task-clock does with exactly one
 * line saying so), of names nobody offers (one line each, nothing kept),
 * and a read in normal context whose task-clock delta is the thread's CPU
 * time. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/counters.h"
#include "sampler/ctr_backend.h"
#include "tests/unit/unit.h"

static char said[8][1024];
static int nsaid;

static void collect(const char *line)
{
    if (nsaid < 8)
        snprintf(said[nsaid], sizeof said[nsaid], "%s", line);
    nsaid++;
}

START_TEST(backend_by_name)
{
    ck_assert_int_eq(wp_ctr_backend_of("task-clock"), WP_CTR_BE_PERF);
    ck_assert_int_eq(wp_ctr_backend_of("cs"), WP_CTR_BE_PERF);
    ck_assert_int_eq(wp_ctr_backend_of("cycles"), WP_CTR_BE_PERF);
    ck_assert_int_eq(wp_ctr_backend_of("ref-cycles"), WP_CTR_BE_PERF);
    ck_assert_int_eq(wp_ctr_backend_of("PAPI_TOT_CYC"), WP_CTR_BE_PAPI);
    ck_assert_int_eq(wp_ctr_backend_of("PAPI_L1_DCM"), WP_CTR_BE_PAPI);
    ck_assert_int_eq(wp_ctr_backend_of("perf::TASK-CLOCK"), WP_CTR_BE_PAPI);
    ck_assert_int_eq(wp_ctr_backend_of("rapl:::PACKAGE_ENERGY:PACKAGE0"), WP_CTR_BE_PAPI);
    /* perf(1)'s names are lower case; an upper-case one is neither. */
    ck_assert_int_eq(wp_ctr_backend_of("TASK-CLOCK"), WP_CTR_BE_NONE);
    ck_assert_int_eq(wp_ctr_backend_of("no-such-event"), WP_CTR_BE_NONE);
    ck_assert_int_eq(wp_ctr_backend_of("papi_tot_cyc"), WP_CTR_BE_NONE);
    ck_assert_int_eq(wp_ctr_backend_of("perf:TASK-CLOCK"), WP_CTR_BE_NONE);
}
END_TEST

/* The fallback table: each PAPI name with an exact perf_event twin, and
 * names that must have none. */
static const char *const twins[][2] = {
    {"PAPI_TOT_CYC", "cycles"},
    {"PAPI_TOT_INS", "instructions"},
    {"PAPI_BR_INS", "branches"},
    {"PAPI_BR_MSP", "branch-misses"},
    {"PAPI_REF_CYC", "ref-cycles"},
    {"perf::TASK-CLOCK", "task-clock"},
    {"perf::task-clock", "task-clock"},
    {"perf::PERF_COUNT_SW_TASK_CLOCK", "task-clock"},
    {"perf::CPU-CLOCK", "cpu-clock"},
    {"perf::CONTEXT-SWITCHES", "context-switches"},
    {"perf::CS", "context-switches"},
    {"perf::PAGE-FAULTS", "page-faults"},
    {"perf::FAULTS", "page-faults"},
    {"perf::MINOR-FAULTS", "minor-faults"},
    {"perf::MAJOR-FAULTS", "major-faults"},
    {"perf::CPU-MIGRATIONS", "cpu-migrations"},
    {"perf::MIGRATIONS", "cpu-migrations"},
    {"perf::ALIGNMENT-FAULTS", "alignment-faults"},
    {"perf::EMULATION-FAULTS", "emulation-faults"},
    {"perf::CYCLES", "cycles"},
    {"perf::CPU-CYCLES", "cycles"},
    {"perf::PERF_COUNT_HW_CPU_CYCLES", "cycles"},
    {"perf::INSTRUCTIONS", "instructions"},
    {"perf::BRANCH-INSTRUCTIONS", "branches"},
    {"perf::BRANCH-MISSES", "branch-misses"},
    {"perf::CACHE-MISSES", "cache-misses"},
};

START_TEST(fallback_table)
{
    for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++) {
        const char *got = wp_ctr_perf_equivalent(twins[i][0]);
        ck_assert_msg(got != NULL && strcmp(got, twins[i][1]) == 0, "%s: twin %s, expected %s", twins[i][0],
                      got ? got : "(none)", twins[i][1]);
        /* Every twin is an event the perf_event backend knows by that name. */
        ck_assert_int_eq(wp_ctr_backend_of(got), WP_CTR_BE_PERF);
        ck_assert_int_ge(wp_perf_lookup(got, 0), 0);
    }
    /* No exact twin: PAPI's cache and stall presets, a perf:: event with
     * a modifier (user space only is another count), unknown names, and
     * names that are not PAPI's. */
    const char *none[] = {"PAPI_L1_DCM", "PAPI_TOT_IIS", "PAPI_STL_ICY", "perf::CYCLES:u", "perf::NOPE",
                          "perf::", "task-clock", "cycles", "PAPI_", ""};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        ck_assert_msg(wp_ctr_perf_equivalent(none[i]) == NULL, "%s has a twin %s", none[i],
                      wp_ctr_perf_equivalent(none[i]));
}
END_TEST

START_TEST(units_and_files)
{
    ck_assert_str_eq(wp_ctr_unit_of("task-clock"), "ns");
    ck_assert_str_eq(wp_ctr_unit_of("cpu-clock"), "ns");
    ck_assert_str_eq(wp_ctr_unit_of("perf::TASK-CLOCK"), "ns");
    ck_assert_str_eq(wp_ctr_unit_of("perf::PERF_COUNT_SW_CPU_CLOCK"), "ns");
    ck_assert_str_eq(wp_ctr_unit_of("context-switches"), "events");
    ck_assert_str_eq(wp_ctr_unit_of("PAPI_TOT_CYC"), "events");
    ck_assert_str_eq(wp_ctr_unit_of("PAPI_L1_DCM"), "events");
    char f[64];
    wp_ctr_file_name("perf::TASK-CLOCK", f, sizeof f);
    ck_assert_str_eq(f, "perf::TASK-CLOCK");
    wp_ctr_file_name("PAPI_TOT_CYC", f, sizeof f);
    ck_assert_str_eq(f, "PAPI_TOT_CYC");
    wp_ctr_file_name("net:::eth0.rx/bytes", f, sizeof f);
    ck_assert_str_eq(f, "net:::eth0_rx_bytes");
    wp_ctr_file_name("abcdef", f, 4);
    ck_assert_str_eq(f, "abc");
    ck_assert_str_eq(wp_ctr_backend_name(WP_CTR_BE_PERF), "perf_event");
    ck_assert_str_eq(wp_ctr_backend_name(WP_CTR_BE_PAPI), "papi");
}
END_TEST

/* Names nobody offers: one line each, nothing kept, nothing else said. */
START_TEST(nobody_offers)
{
    const char names[3][WP_CTR_NAME_MAX] = {"no-such-event", "PAPI_NO_SUCH", "perf::NO-SUCH"};
    nsaid = 0;
    ck_assert_int_eq(wp_ctr_setup(names, 3, collect), 0);
    ck_assert_int_eq(wp_ctr_count(), 0);
    ck_assert_int_eq(nsaid, 3);
    ck_assert_msg(strstr(said[0], "unknown event \"no-such-event\"") != NULL, "%s", said[0]);
    ck_assert_msg(strstr(said[1], "PAPI_NO_SUCH") && strstr(said[1], "no exact equivalent; PAPI_NO_SUCH is not counted"),
                  "%s", said[1]);
    ck_assert_msg(strstr(said[2], "perf::NO-SUCH") && strstr(said[2], "is not counted"), "%s", said[2]);
}
END_TEST

static int perf_can(uint32_t type, uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) {
        a.exclude_kernel = a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    }
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* perf::TASK-CLOCK beside task-clock: PAPI counts the first where it
 * offers it (no line), else task-clock does (exactly one line, naming
 * both); then a read in normal context gives both the thread's CPU time
 * since the previous read. */
START_TEST(papi_name_counts_somewhere)
{
    if (!perf_can(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK)) {
        fprintf(stderr, "test_counters: perf_event_open refuses task-clock here; setup not checked\n");
        return;
    }
    const char names[2][WP_CTR_NAME_MAX] = {"perf::TASK-CLOCK", "task-clock"};
    nsaid = 0;
    ck_assert_int_eq(wp_ctr_setup(names, 2, collect), 2);
    ck_assert_str_eq(wp_ctr_name(0), "perf::TASK-CLOCK");
    ck_assert_str_eq(wp_ctr_unit(0), "ns");
    ck_assert_str_eq(wp_ctr_backend(1), "perf_event");
    if (strcmp(wp_ctr_backend(0), "papi") == 0) {
        ck_assert_int_eq(nsaid, 0);
    } else {
        ck_assert_str_eq(wp_ctr_backend(0), "perf_event");
        ck_assert_int_eq(nsaid, 1);
        const char *tail = "; counted task-clock with Linux perf_event instead";
        size_t n = strlen(said[0]), t = strlen(tail);
        ck_assert_msg(strncmp(said[0], "waitprof: WAITPROF_COUNTERS: ", 29) == 0 && n > t &&
                          strcmp(said[0] + n - t, tail) == 0 && strstr(said[0], "perf::TASK-CLOCK"),
                      "%s", said[0]);
    }
    fprintf(stderr, "test_counters: perf::TASK-CLOCK counted by %s%s%s\n", wp_ctr_backend(0), nsaid ? ": " : "",
            nsaid ? said[0] : "");
    ck_assert_int_eq(wp_ctr_thread_open(0), 0);
    uint64_t d[WP_CTR_MAX];
    wp_ctr_read_sig(0, d);
    uint64_t c0 = thread_cpu_ns();
    volatile double x = 0;
    while (thread_cpu_ns() - c0 < 200000000ull)
        for (int i = 0; i < 1000; i++)
            x = x + i;
    wp_ctr_read_sig(0, d);
    uint64_t cpu = thread_cpu_ns() - c0;
    for (int k = 0; k < 2; k++) {
        fprintf(stderr, "test_counters: %s delta %llu ns, thread CPU time %llu ns\n", wp_ctr_name(k),
                (unsigned long long)d[k], (unsigned long long)cpu);
        ck_assert_msg(d[k] >= cpu * 95 / 100 && d[k] <= cpu * 105 / 100, "%s: %llu ns for %llu ns of CPU",
                      wp_ctr_name(k), (unsigned long long)d[k], (unsigned long long)cpu);
    }
    wp_ctr_thread_close(0);
    /* Closed: a read gives zeros. */
    wp_ctr_read_sig(0, d);
    ck_assert_int_eq(d[0] + d[1], 0);
}
END_TEST

/* Two names of one file (rank.R.<file>.folded): the first is kept, the
 * second left out with one line naming both. */
START_TEST(one_file_per_counter)
{
    if (!perf_can(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK))
        return;
    const char names[2][WP_CTR_NAME_MAX] = {"perf::PERF_COUNT_SW_TASK_CLOCK", "perf::PERF_COUNT_SW.TASK_CLOCK"};
    nsaid = 0;
    ck_assert_int_eq(wp_ctr_setup(names, 2, collect), 1);
    ck_assert_str_eq(wp_ctr_name(0), "perf::PERF_COUNT_SW_TASK_CLOCK");
    /* The first's fallback line where PAPI lacks it, then the clash's. */
    ck_assert_int_ge(nsaid, 1);
    ck_assert_msg(strstr(said[nsaid - 1], "\"perf::PERF_COUNT_SW.TASK_CLOCK\" would be written to the file of "
                                          "\"perf::PERF_COUNT_SW_TASK_CLOCK\"") != NULL,
                  "%s", said[nsaid - 1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("counters");
    TCase *tc = tcase_create("names");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, backend_by_name);
    tcase_add_test(tc, fallback_table);
    tcase_add_test(tc, units_and_files);
    tcase_add_test(tc, nobody_offers);
    tcase_add_test(tc, papi_name_counts_somewhere);
    tcase_add_test(tc, one_file_per_counter);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
