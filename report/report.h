/* report/report.h — the cross-rank report, a pure function of a run's
 * output directory.
 *
 * Contract: wp_report_dir() reads the per-rank files of a run directory
 * (rank.R.meta, rank.R.folded, rank.R.waits, rank.R.calls, rank.R.matrix;
 * complete or partial) and writes into outdir every cross-rank output:
 *   report.txt        the text report ("waitprof-report 1" on its first line)
 *   report.json       the same and per-rank values (schema doc/report.schema.json)
 *   ranks.csv, mpi_time.csv, mpi_calls.csv, mpi_bytes_sent.csv,
 *   mpi_requests_sent.csv, mpi_bytes_recv.csv, mpi_requests_recv.csv
 *                     per-rank tables for spreadsheets (MPInside's layout)
 *   matrix_size.csv, matrix_request.csv, matrix_time.csv
 *                     transfer matrices, when rank.R.matrix files exist
 *                     (every CSV starts with its header row; report.json
 *                     names its format and version in csv_files)
 *   all.folded        the merged folded stacks (loads unchanged in
 *                     flamegraph.pl, inferno and speedscope)
 *   all.diff.folded   call paths with two counts: MPI-Work then MPI-Stall
 *   all.svg           the flame graph (report/svg.h)
 *   timeline.svg      per rank, the MPI states over time (report/timeline.c;
 *                     from the rank.R.timeline files, also in report.json)
 *   summary.txt       the one-screen digest (report/summary.h)
 * A file that is missing, truncated, corrupted, foreign or of a newer
 * format is named in one line on errs (and in the report's "problems"
 * section); everything else is still produced.  Memory is O(ranks x MPI
 * functions + distinct call paths), never O(ranks^2): matrix rows are
 * streamed.  short_out, when not NULL, receives the first screen (at most
 * 25 lines) naming the main waiting call path and the rank that causes it.
 * Returns 0 when every output was written, 1 when some input was bad but the
 * outputs were written, -1 when an output could not be written, -2 when
 * there was nothing to read (no such directory, no rank files, bad --ranks).
 */
#ifndef WP_REPORT_REPORT_H
#define WP_REPORT_REPORT_H

#include <stdio.h>

struct wp_report_opts {
    const char *ranks; /* "0-3,7" or NULL: every rank */
    int stall_only;    /* --state stall */
    int top;           /* rows in the top lists (default 10) */
    const char *weight; /* --weight EVENT: all.svg (and --diff) weighted by that counter; NULL: samples */
};

int wp_report_dir(const char *dir, const char *outdir, const struct wp_report_opts *o, FILE *short_out,
                  FILE *errs);

/* Compare the stall samples per call path of two runs; writes the text to
 * out and, when diff_folded is not NULL, a folded file "path stallA stallB".
 * Returns 0, 1 (some input was bad) or -1. */
int wp_report_diff(const char *a, const char *b, const struct wp_report_opts *o, FILE *out,
                   const char *diff_folded, FILE *errs);


#endif
