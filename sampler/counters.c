/* sampler/counters.c — see sampler/counters.h.  The perf_event backend:
 * one group per thread (the first kept event leads), PERF_FORMAT_GROUP so
 * that one read() returns every count, pid 0 and cpu -1 so that the group
 * follows its thread over CPUs and counts that thread only. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/counters.h"
#include "state/thread.h"

/* The events this backend knows, by the names perf(1) gives them. */
struct wp_ctr_event {
    const char *name, *alias;
    uint32_t type;
    uint64_t config;
    const char *unit;
};

static const struct wp_ctr_event wp_ctr_events[] = {
    {"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns"},
    {"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns"},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "events"},
    {"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "events"},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "events"},
    {"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "events"},
    {"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "events"},
    {"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "events"},
    {"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "events"},
    {"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "events"},
    {"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "events"},
    {"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "events"},
    {"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "events"},
    {"branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "events"},
    {"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "events"},
    {"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "events"},
    {"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "events"},
    {"stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "events"},
    {"stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "events"},
};
#define WP_CTR_KNOWN (int)(sizeof wp_ctr_events / sizeof wp_ctr_events[0])

/* The kept events, in group order. */
static const struct wp_ctr_event *wp_ctr_kept[WP_CTR_MAX];
static int wp_ctr_n;
/* Set when the kernel refused counting the kernel's share (a
 * perf_event_paranoid setting for unprivileged users): every group is then
 * opened for user space only. */
static int wp_ctr_user_only;

/* Per thread, by registry index: the group leader's descriptor (-1: none;
 * members are closed with it through wp_ctr_member) and the counts of the
 * previous read.  Static, so the handler touches no memory that a
 * registration could still be allocating. */
static int wp_ctr_fd[WP_MAX_THREADS];
static int wp_ctr_member[WP_MAX_THREADS][WP_CTR_MAX];
static uint64_t wp_ctr_last[WP_MAX_THREADS][WP_CTR_MAX];
static int wp_ctr_fds_ready;

static int wp_ctr_open1(const struct wp_ctr_event *ev, int group, int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev->type;
    a.config = ev->config;
    a.read_format = PERF_FORMAT_GROUP;
    a.disabled = 0;
    a.exclude_kernel = (uint64_t)user_only;
    a.exclude_hv = (uint64_t)user_only;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static const struct wp_ctr_event *wp_ctr_lookup(const char *name)
{
    for (int i = 0; i < WP_CTR_KNOWN; i++)
        if (strcmp(name, wp_ctr_events[i].name) == 0 ||
            (wp_ctr_events[i].alias && strcmp(name, wp_ctr_events[i].alias) == 0))
            return &wp_ctr_events[i];
    return NULL;
}

int wp_ctr_setup(const char (*names)[WP_CTR_NAME_MAX], int n, void (*report)(const char *line))
{
    char line[512];
    if (!wp_ctr_fds_ready) {
        for (int i = 0; i < WP_MAX_THREADS; i++)
            wp_ctr_fd[i] = -1;
        wp_ctr_fds_ready = 1;
    }
    wp_ctr_n = 0;
    /* A trial group on this thread: an event is kept when it opens on its
     * own and joins the group of those kept before it, which is what every
     * thread's group will ask of the kernel. */
    int lead = -1, members[WP_CTR_MAX];
    for (int i = 0; i < n && i < WP_CTR_MAX; i++) {
        const struct wp_ctr_event *ev = wp_ctr_lookup(names[i]);
        if (ev == NULL) {
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: unknown event \"%.63s\" not counted; known: task-clock, "
                     "cpu-clock, context-switches, cpu-migrations, page-faults, minor-faults, major-faults, "
                     "cycles, instructions, cache-references, cache-misses, branches, branch-misses (perf names)",
                     names[i]);
            report(line);
            continue;
        }
        int dup = 0;
        for (int k = 0; k < wp_ctr_n; k++)
            dup |= wp_ctr_kept[k] == ev;
        if (dup) {
            snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS: \"%.63s\" is given twice; counted once",
                     names[i]);
            report(line);
            continue;
        }
        int fd = wp_ctr_open1(ev, lead, wp_ctr_user_only);
        if (fd < 0 && errno == EACCES && lead < 0 && !wp_ctr_user_only) {
            wp_ctr_user_only = 1;
            fd = wp_ctr_open1(ev, lead, 1);
        }
        if (fd < 0) {
            int err = errno;
            snprintf(line, sizeof line,
                     "waitprof: WAITPROF_COUNTERS: event %s cannot be counted here (perf_event_open: %s%s); "
                     "the run goes on without it%s",
                     ev->name, strerror(err),
                     ev->type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP)
                         ? ", no hardware PMU (a virtual machine?)"
                         : "",
                     err == EACCES || err == EPERM ? "; lower /proc/sys/kernel/perf_event_paranoid to count it"
                                                   : "; leave it out of the list");
            report(line);
            continue;
        }
        if (lead < 0)
            lead = fd;
        members[wp_ctr_n] = fd;
        wp_ctr_kept[wp_ctr_n++] = ev;
    }
    for (int k = wp_ctr_n - 1; k >= 0; k--)
        close(members[k]);
    if (n > WP_CTR_MAX) {
        snprintf(line, sizeof line, "waitprof: WAITPROF_COUNTERS names %d events; only the first %d are counted",
                 n, WP_CTR_MAX);
        report(line);
    }
    return wp_ctr_n;
}

int wp_ctr_count(void)
{
    return wp_ctr_n;
}

const char *wp_ctr_name(int i)
{
    return i >= 0 && i < wp_ctr_n ? wp_ctr_kept[i]->name : "";
}

const char *wp_ctr_unit(int i)
{
    return i >= 0 && i < wp_ctr_n ? wp_ctr_kept[i]->unit : "";
}

int wp_ctr_thread_open(int index)
{
    if (wp_ctr_n == 0 || index < 0 || index >= WP_MAX_THREADS)
        return -1;
    int lead = -1;
    for (int k = 0; k < wp_ctr_n; k++) {
        int fd = wp_ctr_open1(wp_ctr_kept[k], lead, wp_ctr_user_only);
        if (fd < 0) {
            /* All or nothing: a partial group would read fewer values
             * than the handler expects. */
            for (int j = k - 1; j >= 0; j--)
                close(wp_ctr_member[index][j]);
            return -1;
        }
        if (lead < 0)
            lead = fd;
        wp_ctr_member[index][k] = fd;
    }
    /* The base of the first delta: counting starts with the group, so the
     * thread's first sample gets the counts since its registration. */
    memset(wp_ctr_last[index], 0, sizeof wp_ctr_last[index]);
    __atomic_store_n(&wp_ctr_fd[index], lead, __ATOMIC_RELEASE);
    return 0;
}

void wp_ctr_thread_close(int index)
{
    if (index < 0 || index >= WP_MAX_THREADS || !wp_ctr_fds_ready)
        return;
    /* Taken out of the handler's reach first: a signal still in flight
     * then finds no descriptor rather than a closed (or reused) one. */
    int lead = __atomic_exchange_n(&wp_ctr_fd[index], -1, __ATOMIC_ACQ_REL);
    if (lead < 0)
        return;
    for (int k = wp_ctr_n - 1; k >= 0; k--)
        close(wp_ctr_member[index][k]);
}

void wp_ctr_close_all(void)
{
    for (int i = 0; i < WP_MAX_THREADS && wp_ctr_fds_ready; i++)
        wp_ctr_thread_close(i);
}

/* read() is async-signal-safe by POSIX; on a perf_event group descriptor
 * it copies the counts out of the kernel and never blocks.  The buffer is
 * on the handler's stack and the previous counts in static memory that
 * only this thread's handler writes (the registration wrote it before the
 * descriptor was published). */
int wp_ctr_read_abs_sig(int index, uint64_t *abs)
{
    if (index < 0 || index >= WP_MAX_THREADS)
        return -1;
    int fd = __atomic_load_n(&wp_ctr_fd[index], __ATOMIC_ACQUIRE);
    if (fd < 0)
        return -1;
    uint64_t buf[1 + WP_CTR_MAX];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < (ssize_t)sizeof(uint64_t) || buf[0] != (uint64_t)wp_ctr_n ||
        got < (ssize_t)((1 + (size_t)wp_ctr_n) * sizeof(uint64_t)))
        return -1;
    for (int k = 0; k < wp_ctr_n; k++)
        abs[k] = buf[1 + k];
    return 0;
}

void wp_ctr_since_sig(uint64_t *last, const uint64_t *abs, uint64_t *delta)
{
    for (int k = 0; k < wp_ctr_n; k++) {
        uint64_t v = abs[k];
        /* Counts only grow; a smaller value would be a reset we did not
         * make, and then the new count is the delta. */
        delta[k] = v >= last[k] ? v - last[k] : v;
        last[k] = v;
    }
}

void wp_ctr_delta_sig(int index, const uint64_t *abs, uint64_t *delta)
{
    if (index < 0 || index >= WP_MAX_THREADS) {
        for (int k = 0; k < wp_ctr_n; k++)
            delta[k] = 0;
        return;
    }
    wp_ctr_since_sig(wp_ctr_last[index], abs, delta);
}

void wp_ctr_read_sig(int index, uint64_t *delta)
{
    uint64_t abs[WP_CTR_MAX];
    if (wp_ctr_read_abs_sig(index, abs) != 0) {
        for (int k = 0; k < wp_ctr_n; k++)
            delta[k] = 0;
        return;
    }
    wp_ctr_delta_sig(index, abs, delta);
}
