/* sampler/ctr_perf.c — the Linux perf_event backend of the counters (see
 * sampler/ctr_backend.h): one group per thread (the first kept event
 * leads), PERF_FORMAT_GROUP so that one read() returns every count, pid 0
 * and cpu -1 so that the group follows its thread over CPUs and counts
 * that thread only. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/counters.h"
#include "sampler/ctr_backend.h"
#include "sampler/perf_names.h"
#include "state/thread.h"

/* The events this backend knows, by the names perf(1) gives them, and
 * by the name of their perf_event constant, which is also libpfm4's (so
 * PAPI's) perf::PERF_COUNT_SW_TASK_CLOCK. */
struct wp_perf_event {
    const char *name, *alias, *constant;
    uint32_t type;
    uint64_t config;
};

#define WP_SW(n, a, c) {n, a, "PERF_COUNT_SW_" #c, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c}
#define WP_HW(n, a, c) {n, a, "PERF_COUNT_HW_" #c, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c}
static const struct wp_perf_event wp_perf_events[] = {
    WP_SW("task-clock", NULL, TASK_CLOCK),
    WP_SW("cpu-clock", NULL, CPU_CLOCK),
    WP_SW("context-switches", "cs", CONTEXT_SWITCHES),
    WP_SW("cpu-migrations", "migrations", CPU_MIGRATIONS),
    WP_SW("page-faults", "faults", PAGE_FAULTS),
    WP_SW("minor-faults", NULL, PAGE_FAULTS_MIN),
    WP_SW("major-faults", NULL, PAGE_FAULTS_MAJ),
    WP_SW("alignment-faults", NULL, ALIGNMENT_FAULTS),
    WP_SW("emulation-faults", NULL, EMULATION_FAULTS),
    WP_HW("cycles", "cpu-cycles", CPU_CYCLES),
    WP_HW("instructions", NULL, INSTRUCTIONS),
    WP_HW("cache-references", NULL, CACHE_REFERENCES),
    WP_HW("cache-misses", NULL, CACHE_MISSES),
    WP_HW("branches", "branch-instructions", BRANCH_INSTRUCTIONS),
    WP_HW("branch-misses", NULL, BRANCH_MISSES),
    WP_HW("bus-cycles", NULL, BUS_CYCLES),
    WP_HW("ref-cycles", NULL, REF_CPU_CYCLES),
    WP_HW("stalled-cycles-frontend", NULL, STALLED_CYCLES_FRONTEND),
    WP_HW("stalled-cycles-backend", NULL, STALLED_CYCLES_BACKEND),
};
#undef WP_SW
#undef WP_HW
#define WP_PERF_KNOWN (int)(sizeof wp_perf_events / sizeof wp_perf_events[0])

/* The kept events (indexes into the table), in group order. */
static int wp_perf_kept[WP_CTR_MAX];
static int wp_perf_n;
/* Set when the kernel refused counting the kernel's share (a
 * perf_event_paranoid setting for unprivileged users): every group is then
 * opened for user space only. */
static int wp_perf_user_only;
/* The trial group of wp_perf_add, on the thread that runs the setup. */
static int wp_perf_trial[WP_CTR_MAX];
static int wp_perf_ntrial;

/* Per thread, by registry index: the group leader's descriptor (-1: none;
 * members are closed with it through wp_perf_member).  Static, so the
 * handler touches no memory that a registration could still be
 * allocating. */
static int wp_perf_fd[WP_MAX_THREADS];
static int wp_perf_member[WP_MAX_THREADS][WP_CTR_MAX];
static int wp_perf_fds_ready;
/* Per thread, the group's time enabled and time on the PMU (ns) as of its
 * last read; they stay after the group is closed, for the meta files. */
static uint64_t wp_perf_times[WP_MAX_THREADS][2];

int wp_perf_lookup(const char *name, int native)
{
    for (int i = 0; i < WP_PERF_KNOWN; i++) {
        const struct wp_perf_event *e = &wp_perf_events[i];
        /* perf(1)'s names are lower case; libpfm4's perf:: names are the
         * same words in upper case, and it takes either. */
        int (*cmp)(const char *, const char *) = native ? strcasecmp : strcmp;
        if (cmp(name, e->name) == 0 || (e->alias && cmp(name, e->alias) == 0) ||
            (native && strcasecmp(name, e->constant) == 0))
            return i;
    }
    return -1;
}

/* sampler/perf_names.h: this table, for the overflow trigger. */
int wp_ctr_perf_attr(const char *name, uint32_t *type, uint64_t *config, const char **canonical)
{
    int ev = wp_perf_lookup(name, 0);
    if (ev < 0)
        return -1;
    *type = wp_perf_events[ev].type;
    *config = wp_perf_events[ev].config;
    *canonical = wp_perf_events[ev].name;
    return 0;
}

const char *wp_perf_event_name(int ev)
{
    return ev >= 0 && ev < WP_PERF_KNOWN ? wp_perf_events[ev].name : "";
}

int wp_perf_event_is_clock(int ev)
{
    return ev >= 0 && ev < WP_PERF_KNOWN && wp_perf_events[ev].type == PERF_TYPE_SOFTWARE &&
           (wp_perf_events[ev].config == PERF_COUNT_SW_TASK_CLOCK ||
            wp_perf_events[ev].config == PERF_COUNT_SW_CPU_CLOCK);
}

int wp_perf_event_is_hw(int ev)
{
    return ev >= 0 && ev < WP_PERF_KNOWN && wp_perf_events[ev].type == PERF_TYPE_HARDWARE;
}

const char *wp_perf_known(void)
{
    return "task-clock, cpu-clock, context-switches, cpu-migrations, page-faults, minor-faults, major-faults, "
           "cycles, instructions, cache-references, cache-misses, branches, branch-misses, ref-cycles";
}

static int wp_perf_open1(int ev, int group, int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = wp_perf_events[ev].type;
    a.config = wp_perf_events[ev].config;
    /* The times the group was enabled and on the PMU: they differ when
     * the kernel multiplexed it (more hardware events wanted than the PMU
     * has counters), which the meta files then say (wp_perf_times_sum). */
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = 0;
    a.exclude_kernel = (uint64_t)user_only;
    a.exclude_hv = (uint64_t)user_only;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

void wp_perf_reset(void)
{
    if (!wp_perf_fds_ready) {
        for (int i = 0; i < WP_MAX_THREADS; i++)
            wp_perf_fd[i] = -1;
        wp_perf_fds_ready = 1;
    }
    wp_perf_n = 0;
    wp_perf_ntrial = 0;
}

/* The trial group on this thread: an event is kept when it opens on its
 * own and joins the group of those kept before it, which is what every
 * thread's group will ask of the kernel. */
int wp_perf_add(int ev)
{
    if (ev < 0 || ev >= WP_PERF_KNOWN || wp_perf_n >= WP_CTR_MAX) {
        errno = EINVAL;
        return -1;
    }
    int lead = wp_perf_ntrial ? wp_perf_trial[0] : -1;
    int fd = wp_perf_open1(ev, lead, wp_perf_user_only);
    if (fd < 0 && errno == EACCES && lead < 0 && !wp_perf_user_only) {
        wp_perf_user_only = 1;
        fd = wp_perf_open1(ev, lead, 1);
    }
    if (fd < 0)
        return -1;
    wp_perf_trial[wp_perf_ntrial++] = fd;
    wp_perf_kept[wp_perf_n++] = ev;
    return 0;
}

void wp_perf_trial_end(void)
{
    for (int k = wp_perf_ntrial - 1; k >= 0; k--)
        close(wp_perf_trial[k]);
    wp_perf_ntrial = 0;
}

int wp_perf_count(void)
{
    return wp_perf_n;
}

int wp_perf_thread_open(int index)
{
    if (wp_perf_n == 0)
        return 0;
    if (index < 0 || index >= WP_MAX_THREADS || !wp_perf_fds_ready)
        return -1;
    int lead = -1;
    for (int k = 0; k < wp_perf_n; k++) {
        int fd = wp_perf_open1(wp_perf_kept[k], lead, wp_perf_user_only);
        if (fd < 0) {
            /* All or nothing: a partial group would read fewer values
             * than the handler expects. */
            int err = errno;
            for (int j = k - 1; j >= 0; j--)
                close(wp_perf_member[index][j]);
            errno = err;
            return -1;
        }
        if (lead < 0)
            lead = fd;
        wp_perf_member[index][k] = fd;
    }
    __atomic_store_n(&wp_perf_fd[index], lead, __ATOMIC_RELEASE);
    return 0;
}

/* Taken out of the handler's reach first: a signal still in flight then
 * finds no descriptor rather than a closed (or reused) one.  close() is
 * async-signal-safe, so this serves wp_perf_close_all too. */
void wp_perf_thread_close(int index)
{
    if (index < 0 || index >= WP_MAX_THREADS || !wp_perf_fds_ready)
        return;
    int lead = __atomic_exchange_n(&wp_perf_fd[index], -1, __ATOMIC_ACQ_REL);
    if (lead < 0)
        return;
    for (int k = wp_perf_n - 1; k >= 0; k--)
        close(wp_perf_member[index][k]);
}

void wp_perf_close_all(void)
{
    for (int i = 0; i < WP_MAX_THREADS && wp_perf_fds_ready; i++)
        wp_perf_thread_close(i);
}

/* read() is async-signal-safe by POSIX; on a perf_event group descriptor
 * it copies the counts out of the kernel and never blocks.  The buffer is
 * on the caller's stack. */
int wp_perf_read_sig(int index, uint64_t *val)
{
    if (index < 0 || index >= WP_MAX_THREADS || wp_perf_n == 0)
        return -1;
    int fd = __atomic_load_n(&wp_perf_fd[index], __ATOMIC_ACQUIRE);
    if (fd < 0)
        return -1;
    /* nr, time enabled, time running, then the values. */
    uint64_t buf[3 + WP_CTR_MAX];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < (ssize_t)sizeof(uint64_t) || buf[0] != (uint64_t)wp_perf_n ||
        got < (ssize_t)((3 + (size_t)wp_perf_n) * sizeof(uint64_t)))
        return -1;
    wp_perf_times[index][0] = buf[1];
    wp_perf_times[index][1] = buf[2];
    for (int k = 0; k < wp_perf_n; k++)
        val[k] = buf[3 + k];
    return 0;
}

/* Plain loads of values the threads store; a torn one is only a figure. */
void wp_perf_times_sum(uint64_t *enabled, uint64_t *running)
{
    *enabled = *running = 0;
    for (int i = 0; i < WP_MAX_THREADS; i++) {
        *enabled += wp_perf_times[i][0];
        *running += wp_perf_times[i][1];
    }
}
