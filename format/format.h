/* format/format.h — the formats of waitprof's files, each fact declared once.
 *
 * Contract: this header is where the writers that run inside the
 * application (profile/, and the estimator's wait-state files) and the
 * offline report tool (report/) meet, as a tracing runtime and its reader
 * meet in a log-format header: file names and format versions, the MPI
 * state names, the wait-pattern names, the run's end status and the meta
 * keys.  Each is one X-macro table, expanded here into enums and into
 * static inline lookups (inline functions, not arrays, so a file that uses
 * none of them compiles without warnings).  The lookups are plain
 * switches on constants: async-signal-safe, so the partial writer may call
 * them from a signal handler.  No dependencies: every layer may include it.
 */
#ifndef WP_FORMAT_FORMAT_H
#define WP_FORMAT_FORMAT_H

#include <stddef.h>
#include <string.h>

/* --- files ------------------------------------------------------------------ */

/* The per-rank files, rank.R.<suffix> in the output directory, with the
 * first line that names their format and version (the folded file has
 * none: flame-graph tools read it as it is). */
#define WP_RANK_FILES(X)                                                                                          \
    X(META, "meta", "waitprof-meta", 1)         /* key=value lines: the run's settings and counters */        \
    X(FOLDED, "folded", "", 0)                  /* folded stacks, the MPI state as the root frame */          \
    X(CALLS, "calls", "waitprof-calls", 1)      /* per-MPI-function statistics and traffic (TSV) */           \
    X(WAITS, "waits", "waitprof-waits", 1)      /* wait-state categories of the estimator (TSV) */            \
    X(MATRIX, "matrix", "waitprof-matrix", 1)   /* this rank's row of the transfer matrices (TSV) */  \
    X(CAUSES, "causes", "waitprof-causes", 1)   /* who caused this rank's measured waits (TSV) */     \
    X(PATHS, "paths", "waitprof-paths", 1)      /* this rank's computations that caused waits (TSV) */ \
    X(FRAMES, "frames", "waitprof-frames", 1)   /* where each frame's function is defined (TSV) */ \
    X(MODULES, "modules", "waitprof-modules", 1) /* the objects a partial profile's frames name (TSV) */ \
    X(TIMELINE, "timeline", "waitprof-timeline", 1) /* samples per state in fixed time bins (TSV) */

enum wp_rank_file {
#define WP_X_(id, suffix, format, version) WP_FILE_##id,
    WP_RANK_FILES(WP_X_)
#undef WP_X_
    WP_FILE_COUNT
};

/* The lookups below are switches on the tables' columns. */
#define WP_FILE_SUFFIX_(id, suffix, format, version) \
    case WP_FILE_##id: return suffix;
#define WP_FILE_FORMAT_(id, suffix, format, version) \
    case WP_FILE_##id: return format;
#define WP_FILE_VERSION_(id, suffix, format, version) \
    case WP_FILE_##id: return version;

static inline const char *wp_file_suffix(enum wp_rank_file f)
{
    switch (f) { WP_RANK_FILES(WP_FILE_SUFFIX_) default: return ""; }
}

/* The format name of a file's first line ("waitprof-calls"), and the
 * newest version the code writes and the report reads. */
static inline const char *wp_file_format(enum wp_rank_file f)
{
    switch (f) { WP_RANK_FILES(WP_FILE_FORMAT_) default: return ""; }
}

static inline int wp_file_version(enum wp_rank_file f)
{
    switch (f) { WP_RANK_FILES(WP_FILE_VERSION_) default: return 0; }
}

/* rank.R.modules, written with a partial (signal-time) rank.R.folded: the
 * loaded objects its "module+0xOFFSET" frames name, so that
 * `waitprof report` can name them afterwards from the files still on disk
 * (symbols/offline.h).  After the "# waitprof-modules 1" line, a
 * "start_ns\tN" line (the meta's start_ns= of the run that wrote it: a
 * file left by an earlier run in the same directory is not used), a header
 * row and one row per object, these columns: */
#define WP_MODULES_COLUMNS "name\tbase\tbuild_id\tsize\tmtime_ns\tself\tpath"
/* name: the module as frames name it; base: the load address the offsets
 * are taken from (hexadecimal); build_id: the GNU build-id in hexadecimal,
 * or "-"; size and mtime_ns: the file's when it was loaded; self: 1 for
 * waitprof's own library; path: the file, absolute. */

/* A partial rank.R.folded whose frames `waitprof report` named keeps its
 * original text under this name, beside it. */
#define WP_FOLDED_RAW_SUFFIX ".partial-raw"

/* The keys of rank.R.timeline's lines between its format line and its
 * header row, "key=value", in this order: where bin 0 starts
 * (CLOCK_MONOTONIC ns, the rank's MPI_Init as meta's start_ns), a bin's
 * width (ns), the sampling period the weights count (ns), and the bins
 * in use (rows are written for bins with samples only). */
#define WP_TIMELINE_KEYS(X) X(origin_ns) X(bin_ns) X(period_ns) X(bins)
enum wp_timeline_key {
#define WP_X_(key) WP_TK_##key,
    WP_TIMELINE_KEYS(WP_X_)
#undef WP_X_
    WP_TK_COUNT
};
#define WP_TIMELINE_KEY_(key) \
    case WP_TK_##key: return #key;
static inline const char *wp_timeline_key(enum wp_timeline_key k)
{
    switch (k) { WP_TIMELINE_KEYS(WP_TIMELINE_KEY_) default: return ""; }
}
/* Its header row: the bin's index, its weight per state (in sampling
 * periods, WP_STATES order) and the call path most of its MPI-Stall
 * samples share (a weighted majority vote; empty without one). */
#define WP_TIMELINE_HEADER "bin\tnot_in_mpi\tmpi_work\tmpi_stall\tstall_path"

/* The files of the whole run, written by rank 0 or the report tool. */
#define WP_FORMAT_WAITSTATES "waitprof-waitstates 1" /* waitstates.txt and .tsv */
#define WP_FORMAT_SAMPLING "waitprof-sampling 1"     /* sampling.txt */
#define WP_FORMAT_REPORT "waitprof-report 1"         /* report.txt */
/* Every .csv: its first line is its header row, so that CSV readers take
 * the column names from it; the format name and version of each CSV the
 * report wrote are in report.json ("csv_files").  Version 1 had a line
 * "# waitprof-csv 1 NAME" before the header row. */
#define WP_FORMAT_CSV_NAME "waitprof-csv"
#define WP_FORMAT_CSV_VERSION 2

/* --- MPI states --------------------------------------------------------------- */

/* In the order of the public WAITPROF_STATE_* values (include/waitprof.h):
 * the root frame of every folded line. */
#define WP_STATES(X)               \
    X(NOT_IN_MPI, "Not-in-MPI")    \
    X(WORK, "MPI-Work")            \
    X(STALL, "MPI-Stall")

enum wp_state {
#define WP_X_(id, name) WP_STATE_##id,
    WP_STATES(WP_X_)
#undef WP_X_
    WP_STATE_COUNT
};

/* The state's name, or "unknown". */
#define WP_STATE_NAME_(id, name) \
    case WP_STATE_##id: return name;
static inline const char *wp_state_name(int s)
{
    switch (s) { WP_STATES(WP_STATE_NAME_) default: return "unknown"; }
}

/* The state named by s[0..n), or -1. */
static inline int wp_state_parse(const char *s, size_t n)
{
#define WP_X_(id, name)                                      \
    if (n == sizeof name - 1 && memcmp(s, name, n) == 0)     \
        return WP_STATE_##id;
    WP_STATES(WP_X_)
#undef WP_X_
    return -1;
}

/* --- wait patterns -------------------------------------------------------------- */

/* The wait-state patterns of the estimator, by their name in rank.R.waits,
 * waitstates.txt and the report. */
#define WP_PATTERNS(X)                  \
    X(NONE, "none")                     \
    X(LATE_SENDER, "late_sender")       \
    X(LATE_RECEIVER, "late_receiver")   \
    X(NXN, "wait_nxn")                  \
    X(BARRIER, "wait_barrier")          \
    X(LATE_BCAST, "late_broadcast")     \
    X(EARLY_REDUCE, "early_reduce")

enum wp_pattern {
#define WP_X_(id, name) WP_PAT_##id,
    WP_PATTERNS(WP_X_)
#undef WP_X_
    WP_PAT_COUNT
};

#define WP_PATTERN_NAME_(id, name) \
    case WP_PAT_##id: return name;
static inline const char *wp_pattern_name(int p)
{
    switch (p) { WP_PATTERNS(WP_PATTERN_NAME_) default: return "unknown"; }
}

/* --- the run's end ------------------------------------------------------------------ */

/* What rank.R.meta's status= says.  "complete" is a run that reached
 * MPI_Finalize; everything else starts with "partial:" and says why (the
 * report marks such a rank partial).  KILLED is written at MPI_Init and
 * replaced by every ending that can write: it is what remains of a rank
 * that was killed outright. */
#define WP_END_STATUSES(X)                                                                              \
    X(COMPLETE, "complete")                                                                             \
    X(EXIT, "partial: the program exited without MPI_Finalize")                                         \
    X(ABORT, "partial: MPI_Abort was called")                                                           \
    X(SIGTERM, "partial: terminated by SIGTERM before MPI_Finalize; frames unsymbolized")               \
    X(SIGINT, "partial: interrupted by SIGINT before MPI_Finalize; frames unsymbolized")                \
    X(SIGHUP, "partial: hung up by SIGHUP before MPI_Finalize; frames unsymbolized")                \
    X(KILLED, "partial: the rank ended before it could write its profile (killed by SIGKILL, or a crash)")

enum wp_end {
#define WP_X_(id, text) WP_END_##id,
    WP_END_STATUSES(WP_X_)
#undef WP_X_
    WP_END_COUNT
};

#define WP_END_TEXT_(id, text) \
    case WP_END_##id: return text;
static inline const char *wp_end_status(int e)
{
    switch (e) { WP_END_STATUSES(WP_END_TEXT_) default: return "partial: unknown"; }
}

/* Does a status= value say the rank's profile is complete? */
static inline int wp_end_is_complete(const char *status)
{
    return strncmp(status, "complete", 8) == 0;
}

/* --- meta keys ------------------------------------------------------------------------ */

/* The keys of rank.R.meta, in the order they are written.  run: 1 for the
 * keys the report presents in its own words (its run section and per-rank
 * table); the others it lists as they are.  Per-thread keys
 * ("thread.N.samples", ".tid", ".stride") are not listed here: the report
 * leaves them out. */
#define WP_META_KEYS(X)                                                                             \
    X(format, 1) X(status, 1) X(rank, 1) X(size, 1) X(host, 1) X(mpi, 1) X(source, 1) X(hz, 1)      \
    X(mpit_init, 0) X(mpit_init_ns, 0) X(init_ns, 0)                                                \
    X(wrappers, 0) X(clock, 1) X(timer, 0) X(tick_ns, 0) X(overflow_event, 1) X(overflow_period, 1)  \
    X(start_ns, 1) X(end_ns, 1)                                                                     \
    X(duration_ns, 1) X(threads, 1) X(samples, 1) X(dropped_full, 1) X(dropped_loader, 1)           \
    X(unwind_failures, 1) X(truncated, 1) X(libunwind_unwinds, 1) X(slow_unwinds, 1)                \
    X(samples_by_source, 0) X(samples_by_estimate, 0) X(paused_signals, 0)                          \
    X(unselected_signals, 0) X(untracked_requests, 0) X(handler_calls, 1) X(handler_ns_total, 1)    \
    X(handler_ns_median, 1) X(counters, 0) X(counters_split, 0) X(counters_enabled_ns, 0) X(counters_running_ns, 0) X(selected, 0) X(ranks, 0) X(memory, 0) X(memory_pool, 0) X(merged, 0)  \
    X(threads_unsampled, 0) X(rate_halvings, 0) X(hz_final, 0) X(sampled_intervals, 0)              \
    X(sampled_ns, 0) X(pcontrol_toggles_lost, 0) X(match_rate, 0) X(match_matched, 0)                \
    X(match_unmatched, 0) X(match_dropped, 0) X(match_unnumbered, 0) X(match_rounds, 0)             \
    X(match_records, 0) X(match_held, 0) X(match_received, 0) X(match_finalize_ns, 0)               \
    X(match_clock_ns, 0) X(match_gathered, 0) X(clock_offset_ns, 0) X(clock_error_ns, 0)            \
    X(clock_syncs, 0)

enum wp_meta_key {
#define WP_X_(key, run) WP_MK_##key,
    WP_META_KEYS(WP_X_)
#undef WP_X_
    WP_MK_COUNT
};

/* A key's text: wp_meta_key(WP_MK_status) is "status", so a writer can
 * only write keys declared above. */
#define WP_META_KEY_(key, run) \
    case WP_MK_##key: return #key;
static inline const char *wp_meta_key(enum wp_meta_key k)
{
    switch (k) { WP_META_KEYS(WP_META_KEY_) default: return ""; }
}

/* Does the report present this key itself (run = 1 above)? */
static inline int wp_meta_key_in_run(const char *k)
{
#define WP_X_(key, run)                   \
    if (run && strcmp(k, #key) == 0)      \
        return 1;
    WP_META_KEYS(WP_X_)
#undef WP_X_
    return 0;
}

#endif
