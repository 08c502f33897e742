/* tests/mpi/ctr_probe.c — what this machine can count, found without
 * waitprof, so that t_counters_papi.sh and t_counters_hw.sh know which
 * outcome to expect from it instead of believing what it says.  Prints
 * "key=value" lines:
 *   perf_<event>=1|0   perf_event_open of task-clock, cycles and
 *                      instructions on this thread (as waitprof opens them:
 *                      pid 0, cpu -1), with perf_<event>_error= the reason
 *   papi_built=1|0     whether this build has the PAPI backend (HAVE_PAPI);
 *                      when it has, the probe links libpapi itself and says
 *   papi_started=1|0   PAPI_library_init and PAPI_thread_init succeeded
 *   papi_events=N      available presets plus native events of enabled
 *                      components (papi_avail's figures)
 *   papi_<name>=1|0    for perf::TASK-CLOCK, PAPI_TOT_INS and PAPI_TOT_CYC:
 *                      added to an EventSet alone and started. */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_PAPI
#include <papi.h>
#endif

static void probe_perf(const char *key, uint32_t type, uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EACCES) {
        a.exclude_kernel = a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    printf("perf_%s=%d\n", key, fd >= 0);
    if (fd < 0)
        printf("perf_%s_error=%s\n", key, strerror(errno));
    else
        close(fd);
}

#ifdef HAVE_PAPI
static unsigned long probe_tid(void)
{
    return (unsigned long)syscall(SYS_gettid);
}

static void probe_papi_event(const char *name)
{
    int set = PAPI_NULL, ok = 0;
    if (PAPI_create_eventset(&set) == PAPI_OK) {
        if (PAPI_add_named_event(set, name) == PAPI_OK && PAPI_start(set) == PAPI_OK) {
            long long v[1];
            ok = 1;
            PAPI_stop(set, v);
        }
        PAPI_cleanup_eventset(set);
        PAPI_destroy_eventset(&set);
    }
    printf("papi_%s=%d\n", name, ok);
}
#endif

int main(void)
{
    probe_perf("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    probe_perf("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    probe_perf("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
#ifdef HAVE_PAPI
    printf("papi_built=1\n");
    int started = PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT && PAPI_thread_init(probe_tid) == PAPI_OK;
    printf("papi_started=%d\n", started);
    if (!started)
        return 0;
    int n = 0, code = PAPI_PRESET_MASK;
    if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK)
        do
            n += PAPI_query_event(code) == PAPI_OK;
        while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    for (int c = 0; c < PAPI_num_components(); c++) {
        const PAPI_component_info_t *ci = PAPI_get_component_info(c);
        if (ci && !ci->disabled && ci->num_native_events > 0)
            n += ci->num_native_events;
    }
    printf("papi_events=%d\n", n);
    probe_papi_event("perf::TASK-CLOCK");
    probe_papi_event("PAPI_TOT_INS");
    probe_papi_event("PAPI_TOT_CYC");
#else
    printf("papi_built=0\n");
#endif
    return 0;
}
