/* sampler/overflow.c — counter overflow as the sampling trigger
 * (WAITPROF_TIMER=overflow:EVENT@PERIOD): each sampled thread gets one
 * perf_event of EVENT that counts that thread only (pid 0, cpu -1) and
 * overflows every PERIOD counts; the kernel then sends the thread SIGPROF,
 * which the handler takes as a sample.  With task-clock that is a sample
 * per PERIOD ns of the thread's own CPU time, so a thread that sleeps or
 * blocks in the kernel takes none, where a wall-clock timer samples it
 * all the time.  See sampler/internal.h for the sampler's files.
 *
 * How the kernel signals (measured on this project's 6.18 kernel, and
 * what its perf core does since long before): an event whose descriptor
 * has O_ASYNC set, an owner (F_SETOWN_EX, F_OWNER_TID: one thread, not
 * the process) and a signal (F_SETSIG) gets that signal at every
 * overflow, with si_code POLL_IN and si_fd the descriptor, whether or not
 * a ring buffer is mapped: the wake-up is queued after the overflow
 * handler, which only skips writing a record when there is no buffer.
 * So no buffer is mapped.  Without PERF_EVENT_IOC_REFRESH the event has no
 * overflow limit and keeps counting and signalling: nothing needs
 * re-arming in the handler (POLL_HUP, which a limit ends with, does not
 * come).  Task-clock with a period of 5 ms on a thread spinning 1 s of CPU
 * time: 199 signals, all POLL_IN with the event's si_fd; none while the
 * thread sleeps.
 *
 * The signal is a standard one, so an overflow that comes while SIGPROF is
 * still pending for the thread is lost.  The weight of a sample is
 * therefore not the number of signals but the thread's count since the
 * last sample, in periods (wp_ovf_weight_sig): a lost signal's count goes
 * to the next sample, as a timer's overruns do. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/perf_names.h"

int wp_smp_ovf;
static uint32_t wp_ovf_type;
static uint64_t wp_ovf_config;
static uint64_t wp_ovf_period;
static const char *wp_ovf_name;
/* Set when the kernel refused counting the kernel's share (a
 * perf_event_paranoid setting for unprivileged users): every thread's
 * event then counts user space only. */
static int wp_ovf_user_only;

static int wp_ovf_open(int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = wp_ovf_type;
    a.config = wp_ovf_config;
    a.sample_period = wp_ovf_period;
    /* No record is written (no buffer, sample_type 0); one wake-up per
     * overflow is what asks for a signal each time. */
    a.wakeup_events = 1;
    /* Opened stopped: the owner and the signal are set before the first
     * overflow can come, and wp_ovf_arm_sig starts it. */
    a.disabled = 1;
    a.exclude_kernel = (uint64_t)user_only;
    a.exclude_hv = (uint64_t)user_only;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int wp_ovf_setup(const char *name, uint64_t period, void (*say)(const char *line))
{
    char line[512];
    wp_smp_ovf = 0;
    wp_ovf_period = period;
    if (wp_ctr_perf_attr(name, &wp_ovf_type, &wp_ovf_config, &wp_ovf_name) != 0) {
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_TIMER=overflow:%.63s@%llu: unknown event \"%.63s\"; known: task-clock, "
                 "cpu-clock, page-faults, cycles, instructions, cache-misses, branches and the other perf names of "
                 "WAITPROF_COUNTERS; sampling with the default timer (tick) instead",
                 name, (unsigned long long)period, name);
        say(line);
        return -1;
    }
    /* A trial on this thread: what every thread's registration will ask of
     * the kernel. */
    int fd = wp_ovf_open(wp_ovf_user_only);
    if (fd < 0 && errno == EACCES && !wp_ovf_user_only) {
        wp_ovf_user_only = 1;
        fd = wp_ovf_open(1);
    }
    if (fd < 0) {
        int err = errno;
        snprintf(line, sizeof line,
                 "waitprof: WAITPROF_TIMER=overflow:%.63s@%llu: %s cannot trigger samples here (perf_event_open: "
                 "%s%s); sampling with the default timer (tick) instead%s",
                 name, (unsigned long long)period, wp_ovf_name, strerror(err),
                 wp_ovf_type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP)
                     ? ", no hardware PMU (a virtual machine?)"
                     : "",
                 err == EACCES || err == EPERM ? "; lower /proc/sys/kernel/perf_event_paranoid to use it" : "");
        say(line);
        return -1;
    }
    close(fd);
    wp_smp_ovf = 1;
    return 0;
}

/* The calling thread's event, its signal owned by this thread alone
 * (F_OWNER_TID: F_SETOWN would send it to the process, any of whose
 * threads could take it).  Normal context, before the thread's slot is
 * published to its handler. */
int wp_ovf_thread_open(struct wp_slot *slot)
{
    int fd = wp_ovf_open(wp_ovf_user_only);
    if (fd < 0)
        return -1;
    struct f_owner_ex own = {F_OWNER_TID, slot->tid};
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETFL, fl | O_ASYNC) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    slot->ovf_last = 0;
    __atomic_store_n(&slot->ovf_fd, fd, __ATOMIC_RELEASE);
    return 0;
}

/* Start (or restart) the thread's event at stride periods.  ioctl is a
 * plain system call, safe in a signal handler like the timer_settime it
 * stands in for; on a perf_event descriptor these two only change the
 * event's period and switch it on.  A period change at a restart starts
 * the next period afresh, which costs a CPU-time trigger nothing: it has no
 * grid to keep. */
int wp_ovf_arm_sig(struct wp_slot *slot, uint32_t stride)
{
    int fd = __atomic_load_n(&slot->ovf_fd, __ATOMIC_ACQUIRE);
    if (fd < 0)
        return -1;
    uint64_t p = wp_ovf_period * (stride ? stride : 1);
    if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &p) != 0)
        return -1;
    return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0 ? -1 : 0;
}

/* Stop the thread's event: it neither counts nor signals until armed
 * again.  A plain ioctl, as above. */
int wp_ovf_disarm_sig(struct wp_slot *slot)
{
    int fd = __atomic_load_n(&slot->ovf_fd, __ATOMIC_ACQUIRE);
    if (fd < 0)
        return 0;
    return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0 ? -1 : 0;
}

/* Close the thread's event: by the thread itself at its end, or by the
 * stopper once no handler runs.  Taken out of the handler's reach first,
 * so that a signal still in flight finds no descriptor rather than a
 * closed or reused one.  close() is async-signal-safe (the termination
 * handler stops the sampler too). */
void wp_ovf_close(struct wp_slot *slot)
{
    int fd = __atomic_exchange_n(&slot->ovf_fd, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
}

/* Is this SIGPROF the overflow of the thread's own event?  Overflows come
 * with si_code POLL_IN (POLL_HUP where an overflow limit ends, which this
 * file never sets) and si_fd the event's descriptor; anything else (the
 * wake-up of MPI_Pcontrol(1), a SIGPROF someone sent) is not a sample. */
int wp_ovf_is_mine_sig(struct wp_slot *slot, const siginfo_t *si)
{
    int fd = __atomic_load_n(&slot->ovf_fd, __ATOMIC_ACQUIRE);
    return fd >= 0 && (si->si_code == POLL_IN || si->si_code == POLL_HUP) && si->si_fd == fd;
}

/* The thread's count since its previous sample, in whole configured
 * periods (rounded; the rest carries over to the next sample), so that
 * the weights add up to the thread's count divided by the period however
 * many signals were lost or merged.  One read() of the event's count,
 * async-signal-safe by POSIX, which never blocks on a perf_event
 * descriptor; ovf_last is written by this thread's handler only (and by
 * the thread itself with SIGPROF blocked).  Should the read fail, the
 * signal itself stands for the stride's periods. */
uint64_t wp_ovf_weight_sig(struct wp_slot *slot, uint32_t stride)
{
    int fd = __atomic_load_n(&slot->ovf_fd, __ATOMIC_ACQUIRE);
    uint64_t v;
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v || v < slot->ovf_last)
        return stride ? stride : 1;
    uint64_t w = (v - slot->ovf_last + wp_ovf_period / 2) / wp_ovf_period;
    slot->ovf_last += w * wp_ovf_period;
    return w;
}

/* At a pause: what the thread counted since its last sample is charged to
 * no one, as a timer's partial period is not, so that the first sample
 * after the resume does not carry time from before the pause.  Same
 * context and safety as wp_ovf_weight_sig. */
void wp_ovf_forget_sig(struct wp_slot *slot)
{
    int fd = __atomic_load_n(&slot->ovf_fd, __ATOMIC_ACQUIRE);
    uint64_t v;
    if (fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v)
        slot->ovf_last = v;
}

const char *wp_sampler_overflow(uint64_t *period)
{
    if (!wp_smp_ovf)
        return NULL;
    *period = wp_ovf_period;
    return wp_ovf_name;
}
