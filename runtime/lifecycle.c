/* runtime/lifecycle.c — what happens at MPI_Init, MPI_Finalize, MPI_Abort, exit
 * and termination signals.
 *
 * Contract:
 * - Nothing happens before MPI_Init(_thread) returns successfully: a program
 *   that never calls MPI runs exactly as without waitprof and nothing is
 *   written.
 * - wp_hook_preinit (before PMPI_Init): only what must precede MPI's own
 *   start, the stall source's preparation (MPI_T, mpit/source.h).
 * - wp_hook_init (after PMPI_Init): reads the configuration, agrees on the
 *   output directory across ranks, starts sampling.  waitprof talks to other
 *   ranks only on its own duplicate of MPI_COMM_WORLD, so it can never match
 *   an application message.
 * - wp_hook_finalize (before PMPI_Finalize): stops sampling, writes this
 *   rank's files, estimates wait states (fallback/estimate.h), reduces the
 *   counters to rank 0, which then merges all ranks' files into the report
 *   and prints one summary line.
 * - MPI_Abort, exit() without MPI_Finalize, SIGTERM/SIGINT/SIGHUP: this rank's
 *   files are still written, marked partial in rank.R.meta.  After a signal
 *   they are written by async-signal-safe code, without symbol names.
 * - Every failure prints one line and degrades; the application's own exit
 *   code and MPI semantics are never changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "state/config.h"
#include "state/log.h"
#include "state/mpiwait.h"
#include "state/run.h"
#include "fallback/estimate.h"
#include "match/clock.h"
#include "match/match.h"
#include "fallback/stats.h"
#include "mpit/source.h"
#include "profile/calls.h"
#include "profile/partial.h"
#include "profile/profile.h"
#include "report/report.h"
#include "state/hooks.h"
#include "wrap/traffic.h"
#include "format/select.h"
#include "sampler/sampler.h"
#include "sampler/store.h"
#include "state/clock.h"
#include "runtime/abi.h"

extern char **environ;

struct wp_run wp_run;
static MPI_Comm wp_comm = MPI_COMM_NULL;
static int wp_finished; /* outputs written (complete or partial) */
/* The process that called MPI_Init.  A child made by fork() inherits the
 * handlers, the atexit entry and copies of the stores, but it is not the
 * rank: when it exits it must not write the rank's files. */
static pid_t wp_pid;

static const char *wp_getenv(const char *name)
{
    return getenv(name);
}

static void wp_report(const char *line)
{
    wp_log("%s", line);
}

/* mkdir -p; 0 when the directory exists afterwards. */
static int wp_mkdirs(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) ? 0 : -1;
}

static int wp_dir_is_empty(const char *path)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/rank.0.meta", path);
    if (access(probe, F_OK) == 0)
        return 0;
    snprintf(probe, sizeof probe, "%s/all.folded", path);
    return access(probe, F_OK) != 0;
}

/* Rank 0 only: create a fresh output directory and put its path in dir.
 * An earlier run's directory is never reused: a ".1", ".2", ... suffix is
 * added instead. */
static int wp_make_dir(char *dir, size_t cap)
{
    char base[4096];
    const char *ids[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID", NULL};
    if (wp_run.cfg.out[0]) {
        snprintf(base, sizeof base, "%s", wp_run.cfg.out);
    } else {
        const char *id = NULL;
        for (int i = 0; ids[i] && !id; i++)
            if (getenv(ids[i]) && getenv(ids[i])[0])
                id = getenv(ids[i]);
        if (id) {
            snprintf(base, sizeof base, "waitprof.%s", id);
        } else {
            time_t now = time(NULL);
            struct tm tm;
            localtime_r(&now, &tm);
            strftime(base, sizeof base, "waitprof.%Y%m%d-%H%M%S", &tm);
        }
    }
    for (int i = 0; i < 1000; i++) {
        char cand[4200];
        if (i == 0)
            snprintf(cand, sizeof cand, "%s", base);
        else
            snprintf(cand, sizeof cand, "%s.%d", base, i);
        struct stat st;
        int existed = stat(cand, &st) == 0;
        if (existed && !(S_ISDIR(st.st_mode) && wp_dir_is_empty(cand)))
            continue;
        if (wp_mkdirs(cand) != 0)
            return -1;
        char probe[4300];
        snprintf(probe, sizeof probe, "%s/.waitprof-write-test", cand);
        FILE *f = fopen(probe, "w");
        if (f == NULL)
            return -1;
        fclose(f);
        remove(probe);
        snprintf(dir, cap, "%s", cand);
        return 0;
    }
    errno = EEXIST;
    return -1;
}

/* What the ranks agree on at MPI_Init, in one reduction (MPI_MAX, byte by
 * byte): rank 0's decisions, which the others leave zero, the output
 * directory and the seed of WAITPROF_RANKS=random:N without one (so that
 * every rank tests its membership against the same set); and whether all
 * ranks read one clock (match/clock.h, wp_match_clock_words). */
static struct {
    char dir[4096];
    unsigned long long seed;
    unsigned long long clock[4];
} wp_agreed;

/* Rank 0 only: the seed of random:N without one. */
static void wp_draw_seed(void)
{
    struct wp_ranks *r = &wp_run.cfg.ranks;
    wp_agreed.seed = r->seed;
    if (r->kind == WP_RANKS_RANDOM && !r->has_seed)
        wp_agreed.seed = ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid() ^ wp_now_ns();
}

static void wp_choose_dir(void)
{
    char *dir = wp_agreed.dir;
    dir[0] = '\0';
    if (wp_run.rank == 0) {
        wp_draw_seed();
        if (wp_make_dir(dir, sizeof wp_agreed.dir) != 0) {
            int err = errno;
            char want[4096];
            snprintf(want, sizeof want, "%s", wp_run.cfg.out[0] ? wp_run.cfg.out : "the current directory");
            const char *tmp = getenv("TMPDIR");
            snprintf(wp_run.cfg.out, sizeof wp_run.cfg.out, "%s/waitprof.%d", tmp && tmp[0] ? tmp : "/tmp",
                     (int)getpid());
            if (wp_make_dir(dir, sizeof wp_agreed.dir) == 0)
                wp_log("waitprof: cannot write to %s (%s); writing the profile to %s instead; "
                       "set WAITPROF_OUT to a writable directory",
                       want, strerror(err), dir);
            else {
                dir[0] = '\0';
                wp_log("waitprof: cannot write to %s (%s) nor to %s; no profile will be written; "
                       "set WAITPROF_OUT to a writable directory",
                       want, strerror(err), wp_run.cfg.out);
            }
        }
    }
    /* One reduction for all three: each collective costs MPI_Init a few
     * ms where ranks outnumber cores (doc/performance.md, "Start-up and
     * finalize"). */
    wp_match_clock_words(wp_run.cfg.test_clock_rank == wp_run.rank, wp_agreed.clock);
    MPI_Request req;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &wp_agreed, (int)sizeof wp_agreed, MPI_UNSIGNED_CHAR, MPI_MAX, wp_comm,
                        &req) == MPI_SUCCESS &&
        wp_wait_yield(&req) == MPI_SUCCESS)
        wp_match_clock_agreed(wp_agreed.clock);
    if (dir[0] && wp_mkdirs(dir) == 0) {
        snprintf(wp_run.dir, sizeof wp_run.dir, "%s", dir);
        wp_run.have_dir = 1;
    } else if (dir[0]) {
        wp_log_always("waitprof: rank %d cannot create %s (%s); this rank's profile is not written",
                      wp_run.rank, dir, strerror(errno));
    }
}

/* --- abnormal ends ------------------------------------------------------------ */

static struct sigaction wp_old_term[3];

/* A rank that ends at a terminating signal, or by exit() without
 * MPI_Finalize, waits for the others to write before it dies: a launcher
 * that forwards SIGTERM to every rank kills the rest with SIGKILL as soon
 * as one is gone (Open MPI's mpirun 2-7 ms later here, MPICH's at once
 * after an exit), and a rank that got no CPU in between (4 ranks on 2
 * cores) would lose its files.  So each rank appends one byte to
 * DIR/.waitprof-ended once it has written its files (or has none to
 * write), then waits until the file holds one byte per rank of the job, or
 * a bound.  When the ranks end together, the wait is over once the
 * slowest has written.  At a signal the bound is WP_TERM_WAIT_NS: a fixed
 * wait of 200 ms, which this replaced, lost one rank's samples in 80 on a
 * loaded machine.  At an exit it stays WP_TERM_GRACE_NS: ranks that call
 * exit() at different times then still end at different times, as they
 * would without waitprof (MPICH's launcher returns a different code in
 * about one run in twelve when two ranks end at once), and only ranks
 * that exit together end together.  Ranks whose directories are not
 * shared (a node-local WAITPROF_OUT on several nodes) never see every byte
 * and wait the whole bound. */
#define WP_TERM_WAIT_NS 2000000000ULL
#define WP_TERM_GRACE_NS 200000000L
#define WP_TERM_POLL_NS 2000000L
#define WP_TERM_FILE "/.waitprof-ended"

/* Sleep ns (< 1 s).  A plain system call, async-signal-safe: nanosleep
 * itself is interposed by sampler/sleeps.c. */
static void wp_term_sleep(long ns)
{
    struct timespec t = {0, ns};
    syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &t, NULL);
}

/* Once per process, from a signal handler or exit.  Async-signal-safe:
 * strnlen, memcpy, open, write, close, stat and clock_gettime (wp_now_ns)
 * are on POSIX's list, the path is built without snprintf, and wp_run is
 * read-only after MPI_Init. */
static void wp_term_meet(uint64_t bound_ns)
{
    static int met;
    if (!wp_run.have_dir || __atomic_exchange_n(&met, 1, __ATOMIC_ACQ_REL))
        return;
    char path[sizeof wp_run.dir + sizeof WP_TERM_FILE];
    size_t n = strnlen(wp_run.dir, sizeof wp_run.dir - 1);
    memcpy(path, wp_run.dir, n);
    memcpy(path + n, WP_TERM_FILE, sizeof WP_TERM_FILE);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    ssize_t w = fd < 0 ? -1 : write(fd, "x", 1);
    if (fd >= 0)
        close(fd);
    if (w != 1) {
        wp_term_sleep(WP_TERM_GRACE_NS);
        return;
    }
    uint64_t t0 = wp_now_ns();
    for (;;) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size >= (off_t)wp_run.size)
            return;
        if (wp_now_ns() - t0 >= bound_ns)
            return;
        wp_term_sleep(WP_TERM_POLL_NS);
    }
}
static const int wp_term_signals[3] = {SIGTERM, SIGINT, SIGHUP};

/* Async-signal-safe: stops the sampler (atomics, timer_delete and
 * sched_yield, which are plain system calls), writes with open/write/close
 * only, then lets the signal do what it would have done without waitprof. */
static void wp_on_term(int sig, siginfo_t *si, void *uc)
{
    int idx = 0;
    while (idx < 2 && wp_term_signals[idx] != sig)
        idx++;
    if (getpid() == wp_pid && !__atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL) && wp_run.have_dir &&
        wp_run.selected) {
        wp_sampler_stop_sig();
        wp_run.end_ns = wp_now_ns();
        enum wp_end why = sig == SIGTERM ? WP_END_SIGTERM : sig == SIGINT ? WP_END_SIGINT : WP_END_SIGHUP;
        wp_partial_write_folded_sig(wp_run.dir, wp_run.rank);
        wp_timeline_write_sig(wp_run.dir, wp_run.rank, NULL, NULL);
        wp_meta_write_sig(wp_run.dir, wp_run.rank, why);
    }
    struct sigaction *old = &wp_old_term[idx];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
    } else if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
        /* Before dying, the other ranks get to write theirs
         * (wp_term_meet); a rank that writes nothing waits too, or its
         * end would start the launcher's kills.  Not a forked child. */
        if (getpid() == wp_pid && wp_run.active)
            wp_term_meet(WP_TERM_WAIT_NS);
        sigaction(sig, old, NULL);
        raise(sig);
    }
}

static void wp_install_term_handlers(void)
{
    for (int i = 0; i < 3; i++) {
        struct sigaction old;
        if (sigaction(wp_term_signals[i], NULL, &old) != 0)
            continue;
        /* An ignored signal stays ignored: the program chose that. */
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = wp_on_term;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        wp_old_term[i] = old;
        sigaction(wp_term_signals[i], &sa, NULL);
    }
}

/* Stop sampling and write this rank's files, symbolized, marked with status.
 * The symbolized lines are left in *mine for the merge. */
static void wp_write_rank(enum wp_end status, struct wp_folded *mine)
{
    wp_sampler_stop_sig();
    wp_run.end_ns = wp_now_ns();
    /* At MPI_Finalize, the estimator's minima first (collective: every
     * rank, selected or not): the held samples of collective calls are
     * classified against the global ones when the profile is built. */
    if (status == WP_END_COMPLETE) {
        /* The minima's reductions are started first and completed after
         * the matched instances' step (collective too: the held samples
         * of matched categories are classified by their measured waits),
         * so that the ranks meet in one collective step fewer: each costs
         * milliseconds where ranks outnumber cores (doc/performance.md,
         * "Start-up and finalize"). */
        double run_s = (wp_run.end_ns - wp_run.start_ns) * 1e-9;
        wp_estimate_minima_start(wp_comm, wp_run.rank, run_s);
        wp_match_finalize(wp_comm, wp_run.rank, wp_run.size);
        wp_estimate_minima(wp_comm, wp_run.rank, run_s);
        wp_estimate_held_prepare();
    }
    /* Ranks that WAITPROF_RANKS leaves out write no per-rank file. */
    if (!wp_run.have_dir || !wp_run.selected)
        return;
    /* A run that is ending abnormally may be killed at any moment (MPICH's
     * launcher kills the other ranks as soon as one exits): first leave the
     * quick unsymbolized profile, then replace it by the symbolized one. */
    if (status != WP_END_COMPLETE) {
        wp_partial_write_folded_sig(wp_run.dir, wp_run.rank);
        wp_timeline_write_sig(wp_run.dir, wp_run.rank, NULL, NULL);
        wp_meta_write_sig(wp_run.dir, wp_run.rank, status);
    }
    struct wp_folded frames = {0};
    if (wp_profile_build(mine, &frames) != 0 || wp_profile_write_rank(wp_run.dir, wp_run.rank, mine) != 0) {
        wp_log_always("waitprof: rank %d: symbolized profile not written (%s); writing raw frames",
                      wp_run.rank, strerror(errno));
        wp_partial_write_folded_sig(wp_run.dir, wp_run.rank);
    } else {
        /* The module table names raw frames only: beside a symbolized
         * profile it would make `waitprof report` read the symbolizer's
         * own "module+0x..." fallbacks as raw frames. */
        char path[4200];
        snprintf(path, sizeof path, "%s/rank.%d.%s", wp_run.dir, wp_run.rank, wp_file_suffix(WP_FILE_MODULES));
        unlink(path);
        if (wp_profile_write_frames(wp_run.dir, wp_run.rank, &frames) != 0)
            wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.frames (%s); the report gives no source "
                          "locations for this rank's frames",
                          wp_run.rank, wp_run.dir, wp_run.rank, strerror(errno));
    }
    wp_folded_free(&frames);
    wp_profile_write_timeline(wp_run.dir, wp_run.rank);
    /* rank.R.<event>.folded, one per counter (WAITPROF_COUNTERS). */
    wp_profile_write_counters(wp_run.dir, wp_run.rank);
    if (wp_calls_write(wp_run.dir, wp_run.rank) != 0)
        wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.calls (%s)", wp_run.rank, wp_run.dir,
                      wp_run.rank, strerror(errno));
    /* The computations of this rank that made others wait, by the names
     * their rank.R.causes give them (after matching, at MPI_Finalize). */
    if (status == WP_END_COMPLETE && wp_match_on)
        wp_profile_write_paths(wp_run.dir, wp_run.rank);
    if (wp_meta_write_sig(wp_run.dir, wp_run.rank, status) != 0)
        wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.meta (%s)", wp_run.rank, wp_run.dir,
                      wp_run.rank, strerror(errno));
}

static void wp_at_exit(void)
{
    if (!wp_run.active || getpid() != wp_pid || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    struct wp_folded mine = {0};
    wp_write_rank(WP_END_EXIT, &mine);
    wp_folded_free(&mine);
    if (wp_run.have_dir && wp_run.selected)
        wp_log_always("waitprof: rank %d exited without MPI_Finalize; partial profile in %s/rank.%d.folded",
                      wp_run.rank, wp_run.dir, wp_run.rank);
    /* Wait as at SIGTERM (wp_on_term), with the shorter bound: MPICH's
     * launcher kills the other ranks with SIGKILL once one has exited. */
    wp_term_meet(WP_TERM_GRACE_NS);
}

/* --- rank and time selection, the end-of-run summary ----------------------------- */

/* Fit WAITPROF_RANKS to the job, with the seed rank 0 drew for random:N
 * without one (wp_choose_dir's reduction brought it). */
static void wp_select_ranks(void)
{
    struct wp_ranks *r = &wp_run.cfg.ranks;
    r->seed = wp_agreed.seed;
    char note[320];
    if (wp_ranks_fit(r, wp_run.size, note, sizeof note))
        wp_log("waitprof: WAITPROF_RANKS=\"%.64s\" %s", wp_run.cfg.ranks_spec, note);
    wp_run.selected = wp_ranks_has(r, wp_run.rank);
    wp_run.nselected = wp_ranks_count(r, wp_run.size);
}

/* Finalize timing for sampling.txt (rank 0's view; bench/finalize_scale.sh). */
static uint64_t wp_fin_t0, wp_est_ns;

static struct wp_timesel wp_timesel_of(const struct wp_config *c)
{
    struct wp_timesel t = {(uint64_t)(c->start_s * 1e9), (uint64_t)(c->stop_s * 1e9), (uint64_t)(c->every_s * 1e9),
                           (uint64_t)(c->for_s * 1e9)};
    return t;
}

/* The sampled intervals as text, "0.000-1.500,3.000-4.500" (seconds since
 * MPI_Init), cut after WP_SHOWN_INTERVALS with "+N more". */
#define WP_SHOWN_INTERVALS 64
struct wp_ivtext {
    char *buf;
    size_t cap, n;
    int count;
};

static void wp_iv_add(uint64_t a, uint64_t b, void *arg)
{
    struct wp_ivtext *t = arg;
    if (t->count++ < WP_SHOWN_INTERVALS && t->n < t->cap)
        t->n += (size_t)snprintf(t->buf + t->n, t->cap - t->n, "%s%.3f-%.3f", t->n ? "," : "", a * 1e-9, b * 1e-9);
}

static uint64_t wp_intervals_text(char *buf, size_t cap)
{
    struct wp_ivtext t = {buf, cap, 0, 0};
    uint64_t lost = 0;
    buf[0] = '\0';
    uint64_t ns = wp_sampler_intervals(wp_run.end_ns, wp_iv_add, &t, &lost);
    if (t.count > WP_SHOWN_INTERVALS && t.n < cap)
        snprintf(buf + t.n, cap - t.n, ",+%d more", t.count - WP_SHOWN_INTERVALS);
    if (t.count == 0)
        snprintf(buf, cap, "none");
    return ns;
}

/* The counters over all ranks that rank 0 reports (wp_finalize_summary):
 * sums, the largest stride and sampled time, the smallest sampled time (as
 * the largest of its negation), the sampled intervals of the lowest
 * selected rank, and rank 0's finalize time up to the end of the
 * reductions. */
static struct {
    unsigned long long sum[9];
    long long gmx[3];
    char iv[2048];
    long first;
    double finalize_s;
    int have; /* rank 0: the reductions ran */
} wp_sum;
/* The stall source's name, kept for the summary line after the source
 * stopped. */
static const char *wp_src_used = "wrappers";

/* Counters over all ranks, in reductions (O(log P) steps, a fixed amount of
 * data at rank 0).  The sampled intervals are those of the lowest selected
 * rank (they differ between ranks only by MPI_Pcontrol), sent to rank 0 in
 * one message.  Every rank calls this after it wrote its files, so rank 0's
 * reductions end only once every rank's files are complete: rank 0 may
 * read them afterwards without a barrier. */
static void wp_finalize_reduce(void)
{
    struct wp_totals t;
    wp_totals_collect_sig(&t);
    uint64_t stride = t.stride_max, merged = t.merged;
    char iv[2048] = "";
    uint64_t sampled_ns = wp_run.selected && wp_run.sampling ? wp_intervals_text(iv, sizeof iv) : 0;
    /* A selected rank whose sampled time is shorter than its run (by more
     * than a millisecond) had time selection at work. */
    int cut = wp_run.selected && sampled_ns + 1000000 < wp_run.end_ns - wp_run.start_ns;
    unsigned long long local[9] = {t.samples, t.dropped_full + t.dropped_dl, t.unwind_fail,
                                   (unsigned long long)t.threads, t.truncated, merged,
                                   wp_sampler_unsampled_threads(), (unsigned long long)wp_run.selected,
                                   (unsigned long long)cut};
    unsigned long long *sum = wp_sum.sum;
    /* Max of stride and of sampled time, min of sampled time (as a max of
     * its negation, so one MPI_MAX reduction does all three); unselected
     * ranks send neutral values. */
    long long mx[3] = {(long long)stride, wp_run.selected ? (long long)sampled_ns : 0,
                       wp_run.selected ? -(long long)sampled_ns : LLONG_MIN};
    long first = wp_ranks_first(&wp_run.cfg.ranks, wp_run.size);
    /* Both reductions and the intervals' message at once, waited for with
     * sched_yield: rank 0 waits here for the ranks still writing their
     * files, and polling would take a core from them (state/mpiwait.h). */
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (PMPI_Ireduce(local, sum, 9, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, wp_comm, &req[0]) != MPI_SUCCESS)
        req[0] = MPI_REQUEST_NULL;
    if (PMPI_Ireduce(mx, wp_sum.gmx, 3, MPI_LONG_LONG, MPI_MAX, 0, wp_comm, &req[1]) != MPI_SUCCESS)
        req[1] = MPI_REQUEST_NULL;
    if (first > 0 && wp_run.rank == first &&
        PMPI_Isend(iv, (int)sizeof iv, MPI_CHAR, 0, 7705, wp_comm, &req[2]) != MPI_SUCCESS)
        req[2] = MPI_REQUEST_NULL;
    if (first > 0 && wp_run.rank == 0 &&
        PMPI_Irecv(iv, (int)sizeof iv, MPI_CHAR, (int)first, 7705, wp_comm, &req[2]) != MPI_SUCCESS)
        req[2] = MPI_REQUEST_NULL;
    wp_waitall_yield(3, req);
    if (wp_run.rank != 0)
        return;
    memcpy(wp_sum.iv, iv, sizeof wp_sum.iv);
    wp_sum.first = first;
    /* Seconds from the start of waitprof's MPI_Finalize work to here (all
     * its reductions done). */
    wp_sum.finalize_s = (wp_now_ns() - wp_fin_t0) * 1e-9;
    wp_sum.have = 1;
}

/* Rank 0: sampling.txt (which ranks and which time were sampled) and the
 * one summary line, from wp_finalize_reduce's figures. */
static void wp_finalize_summary(void)
{
    if (wp_run.rank != 0 || !wp_sum.have)
        return;
    const unsigned long long *sum = wp_sum.sum;
    const long long *gmx = wp_sum.gmx;
    const char *iv = wp_sum.iv;
    long first = wp_sum.first;
    char ranks[512];
    wp_ranks_format(&wp_run.cfg.ranks, wp_run.size, ranks, sizeof ranks);
    double hz_final = (double)wp_run.cfg.hz / (double)(gmx[0] > 0 ? gmx[0] : 1);
    double smax = gmx[1] * 1e-9, smin = wp_run.nselected > 0 ? -gmx[2] * 1e-9 : 0;
    if (wp_run.have_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/sampling.txt", wp_run.dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "format=" WP_FORMAT_SAMPLING "\n");
            fprintf(f, "size=%d\nranks_spec=%s\nranks=%s\nranks_sampled=%lld\n", wp_run.size,
                    wp_run.cfg.ranks_spec, ranks, sum[7]);
            fprintf(f, "start_s=%g\nstop_s=%g\nwindow=", wp_run.cfg.start_s, wp_run.cfg.stop_s);
            if (wp_run.cfg.every_s > 0)
                fprintf(f, "every:%g,for:%g\n", wp_run.cfg.every_s, wp_run.cfg.for_s);
            else
                fprintf(f, "none\n");
            fprintf(f, "intervals_rank=%ld\nintervals=%s\n", first, first >= 0 ? iv : "none");
            fprintf(f, "sampled_s_min=%.6f\nsampled_s_max=%.6f\n", smin, smax);
            fprintf(f, "hz=%d\nhz_final=%g\nmemory=%llu\n", wp_run.cfg.hz, hz_final,
                    (unsigned long long)wp_run.cfg.memory);
            fprintf(f, "samples=%llu\nmerged=%llu\ndropped=%llu\nthreads_unsampled=%llu\n", sum[0], sum[5], sum[1],
                    sum[6]);
            /* Seconds from the start of waitprof's MPI_Finalize work to
             * the end of its reductions, and of that the estimator's. */
            fprintf(f, "finalize_s=%.6f\nfinalize_estimate_s=%.6f\n", wp_sum.finalize_s, wp_est_ns * 1e-9);
            if (fclose(f) != 0)
                wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
        } else {
            wp_log("waitprof: cannot write %s (%s)", path, strerror(errno));
        }
    }
    if (wp_run.cfg.quiet)
        return;
    /* What was left out, said only when something was. */
    char extra[1024] = "", part[512];
    if (sum[7] < (unsigned long long)wp_run.size) {
        snprintf(part, sizeof part, "; ranks sampled %s", ranks);
        strncat(extra, part, sizeof extra - strlen(extra) - 1);
    }
    if (sum[8]) {
        snprintf(part, sizeof part, "; sampled %.3f-%.3f s per rank (intervals %.200s)", smin, smax,
                 first >= 0 ? iv : "none");
        strncat(extra, part, sizeof extra - strlen(extra) - 1);
    }
    /* The trigger as rank 0 had it: the overflow trigger has no rate in
     * time, and a full store lengthens its period instead. */
    uint64_t ovf_period = 0;
    const char *ovf = wp_run.sampling ? wp_sampler_overflow(&ovf_period) : NULL;
    char rate[128];
    if (ovf)
        snprintf(rate, sizeof rate, "a sample per %llu %s", (unsigned long long)ovf_period, ovf);
    else
        snprintf(rate, sizeof rate, "%d Hz", wp_run.cfg.hz);
    if (gmx[0] > 1) {
        if (ovf)
            snprintf(part, sizeof part, "; period raised to %llu %s to fit WAITPROF_MEMORY",
                     (unsigned long long)ovf_period * (unsigned long long)gmx[0], ovf);
        else
            snprintf(part, sizeof part, "; rate lowered to %g Hz to fit WAITPROF_MEMORY", hz_final);
        strncat(extra, part, sizeof extra - strlen(extra) - 1);
    }
    if (sum[5] || sum[6]) {
        snprintf(part, sizeof part, "; %llu samples kept under shortened stacks, %llu threads not sampled", sum[5],
                 sum[6]);
        strncat(extra, part, sizeof extra - strlen(extra) - 1);
    }
    if (wp_run.have_dir)
        wp_log("waitprof: %d ranks, %llu threads sampled at %s: %llu samples, %llu dropped, "
               "%llu unwind failures; stall source %s; profile in %s/ (report.txt, all.svg, timeline.svg, report.json)%s",
               wp_run.size, sum[3], rate, sum[0], sum[1], sum[2], wp_src_used, wp_run.dir, extra);
    else
        wp_log("waitprof: %d ranks: %llu samples, %llu dropped, %llu unwind failures; no profile written "
               "(no writable directory)%s",
               wp_run.size, sum[0], sum[1], sum[2], extra);
}

/* --- the hooks the generated wrappers call ------------------------------------- */

/* MPI_Init was called in this process (successfully or not). */
static int wp_init_called;

/* A program that the waitprof launcher started (bin/waitprof exports its
 * own pid, which exec keeps, as _WAITPROF_LAUNCHER_PID) and that ends
 * without calling MPI_Init was not profiled: one line says so, on the
 * launcher's rank 0 (or wherever no launcher said which rank it is).
 * Processes the program starts inherit the variable under another pid and
 * stay silent, as do programs preloaded without the launcher.  The line
 * does not say that nothing was profiled: a launcher put after waitprof
 * (waitprof mpirun ./app) passes the preload on to ranks that are. */
__attribute__((destructor)) static void wp_never_initialized(void)
{
    const char *pid = getenv("_WAITPROF_LAUNCHER_PID");
    if (wp_init_called || pid == NULL || atol(pid) != (long)getpid() || wp_abi_launcher_rank() > 0)
        return;
    /* glibc sets the program's name from argv[0] before any constructor. */
    const char *name = program_invocation_short_name;
    wp_log_always("waitprof: %s, the program waitprof started, ended without calling MPI_Init and was not "
                  "profiled; waitprof profiles the processes that call MPI_Init (its children only if they do), "
                  "so start it after the launcher: mpirun -np N waitprof ./app",
                  name);
}

/* waitprof's own time in MPI_Init: before PMPI_Init and after it. */
static uint64_t wp_preinit_ns;

static void wp_silent(const char *line)
{
    (void)line;
}

/* Before PMPI_Init (MPI_Init and MPI_Init_thread).  Only what must come
 * before MPI starts: the stall source's preparation (mpit/source.h,
 * wp_source_preinit), which needs WAITPROF_SOURCE.  The configuration is
 * read again, with its messages, after PMPI_Init, when the rank is known.
 * A second MPI_Init (an error the library reports) changes nothing. */
void wp_hook_preinit(void)
{
    int inited = 1, finalized = 1;
    if (wp_run.active || PMPI_Initialized(&inited) != MPI_SUCCESS || inited ||
        PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return;
    uint64_t t0 = wp_clock_ns();
    static struct wp_config c;
    wp_config_load(&c, wp_getenv, wp_silent);
    wp_source_preinit(c.source, wp_config_matched(&c));
    wp_preinit_ns = wp_clock_ns() - t0;
}

void wp_hook_init(int rc)
{
    int inited = 0;
    uint64_t t0 = wp_clock_ns();
    wp_init_called = 1;
    if (rc != MPI_SUCCESS || wp_run.active || PMPI_Initialized(&inited) != MPI_SUCCESS || !inited)
        return;
    /* A program on another MPI than the build's: waitprof's own calls
     * would pass it handles it does not know.  The program runs
     * unprofiled, through the lean wrappers. */
    char why[256];
    if (wp_abi_mismatch(why, sizeof why)) {
        wp_foreign = 1;
        wp_lean = 1;
        wp_log_rank = wp_abi_launcher_rank(); /* one line for the job, not one per process */
        wp_log("waitprof: %s; the program runs unprofiled. Use a waitprof built with this MPI's compiler "
               "(./configure MPICC=...)", why);
        return;
    }
    /* The ranks leave PMPI_Init at different times and this first
     * collective absorbs that: waited for with sched_yield, so a rank that
     * left early does not take the CPU from those still in PMPI_Init
     * (state/mpiwait.h). */
    MPI_Request dup;
    if (PMPI_Comm_idup(MPI_COMM_WORLD, &wp_comm, &dup) != MPI_SUCCESS || wp_wait_yield(&dup) != MPI_SUCCESS)
        return;
    /* waitprof's own traffic must never abort the application: errors on
     * its communicator are returned (and handled where they can occur). */
    PMPI_Comm_set_errhandler(wp_comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(wp_comm, &wp_run.rank);
    PMPI_Comm_size(wp_comm, &wp_run.size);
    wp_log_rank = wp_run.rank;
    wp_config_load(&wp_run.cfg, wp_getenv, wp_report);
    wp_config_check_unknown(environ, wp_report);
    /* The library writes up to MPI_MAX_LIBRARY_VERSION_STRING bytes (8192
     * in MPICH); keep the first line. */
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) == MPI_SUCCESS) {
        version[strcspn(version, "\n")] = '\0';
        snprintf(wp_run.mpi_version, sizeof wp_run.mpi_version, "%s", version);
    }
    gethostname(wp_run.host, sizeof wp_run.host - 1);
    wp_choose_dir();
    wp_select_ranks();
    wp_clock_calibrate();
    /* The stall source is chosen before the first sample, so every sample
     * is classified by it, and before the run's clock starts, since probing
     * (MPI_T's variable list, a self-test) takes time no sample covers. */
    wp_source_select(wp_run.cfg.source, wp_config_matched(&wp_run.cfg), wp_report);
    /* The handler asks the source through a hook (state/hooks.h), so the
     * sampler does not depend on the stall sources. */
    wp_hook_stalled = wp_src_stalled_sig;
    /* After the calibration: the estimator's histogram edges are in ticks. */
    wp_stats_configure(wp_run.cfg.estimate, wp_run.cfg.callpath_depth);
    /* Matched instances (state/config.h, wp_config_matched).  A quarter
     * of the sample budget holds the point-to-point records. */
    wp_match_clock_test(wp_run.cfg.test_clock_rank == wp_run.rank, wp_run.cfg.test_clock_offset_s,
                        wp_run.cfg.test_clock_drift_ppm);
    wp_match_init(wp_comm, wp_config_matched(&wp_run.cfg), (unsigned)wp_run.cfg.match,
                  (unsigned)wp_run.cfg.match_dense, wp_run.cfg.memory / 4);
    wp_match_gather_limit((size_t)wp_run.cfg.test_gather);
    wp_run.start_ns = wp_now_ns();
    wp_pid = getpid();
    wp_run.active = 1;
    atexit(wp_at_exit);
    wp_install_term_handlers();
    wp_traffic_init(wp_run.rank, wp_run.size, wp_run.cfg.matrix);
    /* Lean wrappers (wrap/wrap.h).  Set before sampling starts, so the
     * handler never sees a call timed under the other mode. */
    wp_lean = wp_run.cfg.lean;
    struct wp_sampler_config sc = {
        .hz = wp_run.cfg.hz,
        .cpu_clock = wp_run.cfg.cpu_clock,
        .free_timer = wp_run.cfg.free_timer,
        .runtime_threads = wp_run.cfg.runtime_threads,
        .max_frames = wp_run.cfg.depth,
        .memory = wp_run.cfg.memory,
        .tsel = wp_timesel_of(&wp_run.cfg),
        .t0_ns = wp_run.start_ns,
        .counters = wp_run.cfg.counters,
        .ncounters = wp_run.cfg.ncounters,
        .counters_split = wp_run.cfg.counters_split,
        .overflow_event = wp_run.cfg.overflow_event,
        .overflow_period = wp_run.cfg.overflow_period,
    };
    /* Unselected ranks take no samples; their wrappers still record the
     * call statistics the estimator's global minima need. */
    if (wp_run.selected) {
        /* The memory the signal-time writer sorts in, reserved now in
         * normal context (profile/partial.h). */
        wp_partial_reserve();
        wp_run.sampling = wp_sampler_start(&sc) == 0;
        /* A meta file from the start, which every ending that can write
         * replaces: a rank killed before it writes (a launcher's SIGKILL
         * a few ms after its SIGTERM, a crash) is still named in the
         * report, and why. */
        if (wp_run.have_dir)
            wp_meta_write_sig(wp_run.dir, wp_run.rank, WP_END_KILLED);
    }
    /* One line at the start (rank 0), so that a user sees at once that
     * waitprof runs, how, and where the profile will be. */
    if (!wp_run.cfg.quiet) {
        char match[48] = "off", rate[128];
        if (wp_match_on)
            snprintf(match, sizeof match, "1 in %u", 1u << wp_match_bits);
        /* The trigger as it is in force on this rank (rank 0, which
         * speaks): the overflow trigger, or the timers at their rate. */
        uint64_t period = 0;
        const char *ovf = wp_run.sampling ? wp_sampler_overflow(&period) : NULL;
        if (ovf)
            snprintf(rate, sizeof rate, "a sample per %llu %s (overflow trigger", (unsigned long long)period, ovf);
        else
            snprintf(rate, sizeof rate, "%d Hz (%s clock", wp_run.cfg.hz, wp_run.cfg.cpu_clock ? "CPU" : "wall");
        wp_log("waitprof: profiling %d ranks at %s, stall source %s, matched instances %s%s) into %s/",
               wp_run.size, rate, wp_src->name, match,
               wp_run.cfg.lean ? ", lean wrappers" : "", wp_run.have_dir ? wp_run.dir : "(no writable directory)");
    }
    wp_run.init_ns = wp_preinit_ns + (wp_clock_ns() - t0);
}

/* Rank 0, after the reductions: build every cross-rank output from the
 * per-rank files with the code `waitprof report DIR` uses
 * (report/report.h) and, unless quiet, print the report's first screen on
 * stderr.  Every rank closed its files before rank 0's reductions ended
 * (wp_finalize_reduce), so rank 0 reads complete files without a barrier;
 * what a rank could not write is named by the reader.  Rank 0 holds one
 * rank's data at a time, not everyone's. */
static int wp_merge_run(void)
{
    if (wp_run.rank != 0 || !wp_run.have_dir || !wp_sum.have)
        return 0;
    struct wp_report_opts o = {NULL, 0, 10, NULL};
    int rc = wp_report_dir(wp_run.dir, wp_run.dir, &o, wp_run.cfg.quiet ? NULL : stderr, stderr);
    return rc < 0 ? -1 : 0;
}

void wp_hook_finalize(void)
{
    if (!wp_run.active || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    wp_fin_t0 = wp_now_ns();
    struct wp_folded mine = {0};
    wp_write_rank(WP_END_COMPLETE, &mine);
    wp_folded_free(&mine);
    uint64_t est0 = wp_now_ns();
    /* Matching first: the estimator's rows take the measured waits. */
    wp_match_finalize(wp_comm, wp_run.rank, wp_run.size);
    wp_estimate_finalize(wp_comm, wp_run.rank, wp_run.size, wp_run.dir, wp_run.have_dir, wp_run.selected,
                         (wp_run.end_ns - wp_run.start_ns) * 1e-9, wp_run.cfg.threshold / 100);
    wp_est_ns = wp_now_ns() - est0;
    /* After every rank's files (rank.R.waits included) are written. */
    wp_finalize_reduce();
    /* Detach the stall source last (MPI_T must be finalized before MPI). */
    wp_src_used = wp_src->name;
    wp_source_stop();
    PMPI_Comm_free(&wp_comm);
    /* The other ranks go on to PMPI_Finalize while rank 0 writes the
     * report.  It needs no MPI, but it stays before PMPI_Finalize: Open
     * MPI's mpirun kills the ranks still running as soon as one returns a
     * non-zero code after MPI_Finalize, and a report written after
     * PMPI_Finalize was lost then (tests/mpi/t_endings.sh); Open MPI's
     * PMPI_Finalize waits for every rank to enter it. */
    wp_merge_run();
    wp_finalize_summary();
}

/* MPI_Pcontrol(level): 0 pauses sampling on this rank, 1 resumes it; other
 * levels (mpiP gives them meanings of its own) change nothing. */
void wp_hook_pcontrol(int level)
{
    if (!wp_run.active || (level != 0 && level != 1))
        return;
    wp_sampler_pause(level == 0, wp_now_ns());
}

void wp_hook_abort(void)
{
    if (!wp_run.active || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    struct wp_folded mine = {0};
    wp_write_rank(WP_END_ABORT, &mine);
    wp_folded_free(&mine);
    if (wp_run.have_dir && wp_run.selected)
        wp_log_always("waitprof: rank %d called MPI_Abort; partial profile in %s/rank.%d.folded", wp_run.rank,
                      wp_run.dir, wp_run.rank);
}
