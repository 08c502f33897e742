/* runtime/lifecycle.c — what happens at MPI_Init, MPI_Finalize, MPI_Abort, exit
 * and termination signals.
 *
 * Contract:
 * - Nothing happens before MPI_Init(_thread) returns successfully: a program
 *   that never calls MPI runs exactly as without waitprof and nothing is
 *   written.
 * - wp_hook_init (after PMPI_Init): reads the configuration, agrees on the
 *   output directory across ranks, starts sampling.  waitprof talks to other
 *   ranks only on its own duplicate of MPI_COMM_WORLD, so it can never match
 *   an application message.
 * - wp_hook_finalize (before PMPI_Finalize): stops sampling, writes this
 *   rank's files, merges all ranks at rank 0, estimates wait states
 *   (fallback/estimate.h) and prints one summary line.
 * - MPI_Abort, exit() without MPI_Finalize, SIGTERM/SIGINT/SIGHUP: this rank's
 *   files are still written, marked partial in rank.R.meta.  After a signal
 *   they are written by async-signal-safe code, without symbol names.
 * - Every failure prints one line and degrades; the application's own exit
 *   code and MPI semantics are never changed.
 */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/run.h"
#include "fallback/estimate.h"
#include "report/calls.h"
#include "report/partial.h"
#include "report/profile.h"
#include "sampler/sampler.h"
#include "state/clock.h"

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

static void wp_choose_dir(void)
{
    char dir[4096] = "";
    if (wp_run.rank == 0) {
        if (wp_make_dir(dir, sizeof dir) != 0) {
            int err = errno;
            char want[4096];
            snprintf(want, sizeof want, "%s", wp_run.cfg.out[0] ? wp_run.cfg.out : "the current directory");
            const char *tmp = getenv("TMPDIR");
            snprintf(wp_run.cfg.out, sizeof wp_run.cfg.out, "%s/waitprof.%d", tmp && tmp[0] ? tmp : "/tmp",
                     (int)getpid());
            if (wp_make_dir(dir, sizeof dir) == 0)
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
    PMPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, wp_comm);
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
static const int wp_term_signals[3] = {SIGTERM, SIGINT, SIGHUP};

/* Async-signal-safe: stops the sampler (atomics, timer_delete and
 * sched_yield, which are plain system calls), writes with open/write/close
 * only, then lets the signal do what it would have done without waitprof. */
static void wp_on_term(int sig, siginfo_t *si, void *uc)
{
    int idx = 0;
    while (idx < 2 && wp_term_signals[idx] != sig)
        idx++;
    if (getpid() == wp_pid && !__atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL) && wp_run.have_dir) {
        wp_sampler_stop();
        wp_run.end_ns = wp_now_ns();
        const char *why = sig == SIGTERM ? "partial: terminated by SIGTERM before MPI_Finalize; frames unsymbolized"
                        : sig == SIGINT  ? "partial: interrupted by SIGINT before MPI_Finalize; frames unsymbolized"
                                         : "partial: hung up by SIGHUP before MPI_Finalize; frames unsymbolized";
        wp_partial_write_folded(wp_run.dir, wp_run.rank);
        wp_meta_write(wp_run.dir, wp_run.rank, why);
    }
    struct sigaction *old = &wp_old_term[idx];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
    } else if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    } else {
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
static void wp_write_rank(const char *status, struct wp_folded *mine)
{
    wp_sampler_stop();
    wp_run.end_ns = wp_now_ns();
    if (!wp_run.have_dir)
        return;
    /* A run that is ending abnormally may be killed at any moment (MPICH's
     * launcher kills the other ranks as soon as one exits): first leave the
     * quick unsymbolized profile, then replace it by the symbolized one. */
    if (strcmp(status, "complete") != 0) {
        wp_partial_write_folded(wp_run.dir, wp_run.rank);
        wp_meta_write(wp_run.dir, wp_run.rank, status);
    }
    if (wp_profile_build(mine) != 0 || wp_profile_write_rank(wp_run.dir, wp_run.rank, mine) != 0) {
        wp_log_always("waitprof: rank %d: symbolized profile not written (%s); writing raw frames",
                      wp_run.rank, strerror(errno));
        wp_partial_write_folded(wp_run.dir, wp_run.rank);
    }
    if (wp_calls_write(wp_run.dir, wp_run.rank) != 0)
        wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.calls (%s)", wp_run.rank, wp_run.dir,
                      wp_run.rank, strerror(errno));
    if (wp_meta_write(wp_run.dir, wp_run.rank, status) != 0)
        wp_log_always("waitprof: rank %d: cannot write %s/rank.%d.meta (%s)", wp_run.rank, wp_run.dir,
                      wp_run.rank, strerror(errno));
}

static void wp_at_exit(void)
{
    if (!wp_run.active || getpid() != wp_pid || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    struct wp_folded mine = {0};
    wp_write_rank("partial: the program exited without MPI_Finalize", &mine);
    wp_folded_free(&mine);
    if (wp_run.have_dir)
        wp_log_always("waitprof: rank %d exited without MPI_Finalize; partial profile in %s/rank.%d.folded",
                      wp_run.rank, wp_run.dir, wp_run.rank);
}

/* --- the hooks the generated wrappers call ------------------------------------- */

void wp_hook_init(int rc)
{
    int inited = 0;
    if (rc != MPI_SUCCESS || wp_run.active || PMPI_Initialized(&inited) != MPI_SUCCESS || !inited)
        return;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &wp_comm) != MPI_SUCCESS)
        return;
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
    wp_clock_calibrate();
    wp_run.start_ns = wp_now_ns();
    wp_pid = getpid();
    wp_run.active = 1;
    atexit(wp_at_exit);
    wp_install_term_handlers();
    wp_calls_init(wp_run.rank, wp_run.size, wp_run.cfg.matrix);
    struct wp_sampler_config sc = {
        .hz = wp_run.cfg.hz,
        .cpu_clock = wp_run.cfg.cpu_clock,
        .runtime_threads = wp_run.cfg.runtime_threads,
        .max_frames = wp_run.cfg.depth,
    };
    wp_run.sampling = wp_sampler_start(&sc) == 0;
}

void wp_hook_finalize(void)
{
    if (!wp_run.active || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    struct wp_folded mine = {0};
    wp_write_rank("complete", &mine);
    wp_folded_free(&mine);
    wp_estimate_finalize(wp_comm, wp_run.rank, wp_run.size, wp_run.dir, wp_run.have_dir,
                         (wp_run.end_ns - wp_run.start_ns) * 1e-9, wp_run.cfg.threshold / 100);
    /* After every rank's files (rank.R.waits included) are written. */
    wp_profile_merge(wp_comm, wp_run.rank, wp_run.dir, wp_run.have_dir, wp_run.cfg.quiet);

    struct wp_totals t;
    wp_totals_collect(&t);
    unsigned long long local[5] = {t.samples, t.dropped_full + t.dropped_dl, t.unwind_fail,
                                   (unsigned long long)t.threads, t.truncated};
    unsigned long long sum[5] = {0};
    PMPI_Reduce(local, sum, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, wp_comm);
    if (wp_run.rank == 0 && !wp_run.cfg.quiet) {
        if (wp_run.have_dir)
            wp_log("waitprof: %d ranks, %llu threads sampled at %d Hz: %llu samples, %llu dropped, "
                   "%llu unwind failures; profile in %s/ (report.txt, all.svg, report.json)",
                   wp_run.size, sum[3], wp_run.cfg.hz, sum[0], sum[1], sum[2], wp_run.dir);
        else
            wp_log("waitprof: %d ranks: %llu samples, %llu dropped, %llu unwind failures; no profile written "
                   "(no writable directory)",
                   wp_run.size, sum[0], sum[1], sum[2]);
    }
    PMPI_Comm_free(&wp_comm);
}

void wp_hook_abort(void)
{
    if (!wp_run.active || __atomic_exchange_n(&wp_finished, 1, __ATOMIC_ACQ_REL))
        return;
    struct wp_folded mine = {0};
    wp_write_rank("partial: MPI_Abort was called", &mine);
    wp_folded_free(&mine);
    if (wp_run.have_dir)
        wp_log_always("waitprof: rank %d called MPI_Abort; partial profile in %s/rank.%d.folded", wp_run.rank,
                      wp_run.dir, wp_run.rank);
}
