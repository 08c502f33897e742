/* report/csv.c — the CSV files for spreadsheets: ranks.csv, the mpiP-style
 * per-rank tables per MPI function (mpi_time.csv, mpi_calls.csv, ...), and
 * the transfer matrices, whose rows are copied from the ranks'
 * rank.R.matrix files while they are written.  Each file's first line is
 * its header row, which CSV readers (Python's csv.DictReader, pandas) take
 * for the column names; a line before it would become the only column.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"

const struct csv_file wp_rep_csv_files[CSV_N] = {
    {"ranks.csv", "per rank: samples in each state and their shares, duration, dropped samples"},
    {"mpi_time.csv", "per rank and MPI function: seconds inside the function; not_in_mpi_s: the time outside "
                     "MPI, estimated from the samples"},
    {"mpi_calls.csv", "per rank and MPI function: calls"},
    {"mpi_bytes_sent.csv", "per rank and MPI function: bytes sent"},
    {"mpi_requests_sent.csv", "per rank and MPI function: messages sent"},
    {"mpi_bytes_recv.csv", "per rank and MPI function: bytes received (the size each receive posted)"},
    {"mpi_requests_recv.csv", "per rank and MPI function: receives"},
    {"matrix_size.csv", "SIZE(i,j): bytes sent from i (the rank column) to j (the column named j)"},
    {"matrix_request.csv", "REQUEST(i,j): send calls from i (the rank column) to j (the column named j)"},
    {"matrix_time.csv", "TIME(i,j): seconds i (the rank column) spent in blocking receives from j (the column "
                        "named j)"},
    {"counters.csv", "per rank and counter (WAITPROF_COUNTERS): the count its samples read in each MPI state "
                     "(EVENT_not_in_mpi, EVENT_mpi_work, EVENT_mpi_stall) and in all (EVENT_total), in the "
                     "event's unit (report.json counters)"},
};

/* The matrices exist only where the ranks wrote rank.R.matrix files
 * (WAITPROF_MATRIX=1), the counters only where they wrote counter
 * profiles (WAITPROF_COUNTERS). */
int wp_rep_csv_written(const struct run *R, int i)
{
    if (i == CSV_COUNTERS)
        return R->nctr > 0;
    return i >= 0 && i < CSV_N && (i < CSV_MATRIX || R->have_matrix);
}

/* --- the mpiP-style per-rank tables ---------------------------------------------------------- */

static void write_table(FILE *f, const struct run *R, int t)
{
    fputs("rank", f);
    if (t == T_TIME)
        fputs(",not_in_mpi_s", f);
    for (size_t i = 0; i < R->nfns; i++) {
        fputc(',', f);
        wp_rep_cstr(f, R->fns[i].name);
    }
    fputc('\n', f);
    uint64_t *row = wp_rep_xrealloc(NULL, (R->nfns + 1) * sizeof *row);
    size_t j = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        memset(row, 0, (R->nfns + 1) * sizeof *row);
        for (; j < R->nrf && R->rf[j].rank <= ri->rank; j++) {
            const struct rfn *x = &R->rf[j];
            if (x->rank != ri->rank)
                continue;
            row[x->fn] = t == T_TIME ? x->time_ns : t == T_CALLS ? x->calls : t == T_BSENT ? x->bytes_sent
                       : t == T_RSENT ? x->req_sent : t == T_BRECV ? x->bytes_recv : x->req_recv;
        }
        fprintf(f, "%d", ri->rank);
        if (t == T_TIME) {
            /* Time outside MPI: an estimate from sampling. */
            fprintf(f, ",%.6f", wp_rep_rank_state_s(ri, WP_STATE_NOT_IN_MPI));
        }
        for (size_t k = 0; k < R->nfns; k++) {
            if (t == T_TIME)
                fprintf(f, ",%.6f", row[k] * 1e-9);
            else
                fprintf(f, ",%llu", (unsigned long long)row[k]);
        }
        fputc('\n', f);
    }
    free(row);
}

static void write_ranks(FILE *f, const struct run *R)
{
    fputs("rank,status,samples,not_in_mpi,mpi_work,mpi_stall,not_in_mpi_share,mpi_work_share,mpi_stall_share,"
          "duration_s,dropped\n", f);
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        uint64_t a = ri->st[0] + ri->st[1] + ri->st[2];
        fprintf(f, "%d,%s,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.9f,%llu\n", ri->rank,
                !ri->has_meta ? "unknown" : ri->partial ? "partial" : "complete", (unsigned long long)a,
                (unsigned long long)ri->st[0], (unsigned long long)ri->st[1], (unsigned long long)ri->st[2],
                wp_rep_pct(ri->st[0], a) / 100, wp_rep_pct(ri->st[1], a) / 100, wp_rep_pct(ri->st[2], a) / 100,
                ri->duration_ns * 1e-9, (unsigned long long)ri->dropped);
    }
}

/* Matrix rows, streamed from the ranks' files: one row per sampled rank,
 * one column per rank of the run. */
static void write_matrix(FILE *f, struct run *R, int col)
{
    int size = R->size;
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].rank + 1 > size)
            size = R->r[i].rank + 1;
    fputs("rank", f);
    for (int j = 0; j < size; j++)
        fprintf(f, ",%d", j);
    fputc('\n', f);
    uint64_t *row = wp_rep_xrealloc(NULL, (size_t)size * sizeof *row);
    char path[4400];
    for (size_t i = 0; i < R->nr; i++) {
        memset(row, 0, (size_t)size * sizeof *row);
        snprintf(path, sizeof path, "%s/rank.%d.%s", R->c.dir, R->r[i].rank, wp_file_suffix(WP_FILE_MATRIX));
        const char *name = path;
        size_t len;
        char *buf = wp_rep_slurp(path, &len);
        if (buf &&
            wp_rep_format_version(buf, "# ", wp_file_format(WP_FILE_MATRIX)) == wp_file_version(WP_FILE_MATRIX)) {
            size_t bad = 0;
            for (char *line = strchr(buf, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
                unsigned long long x[4];
                if (strncmp(line + 1, "peer", 4) == 0)
                    continue;
                if (sscanf(line + 1, "%llu\t%llu\t%llu\t%llu", &x[0], &x[1], &x[2], &x[3]) != 4 ||
                    x[0] >= (unsigned long long)size) {
                    bad++;
                    continue;
                }
                row[x[0]] = x[1 + col];
            }
            if (bad && col == 0)
                wp_rep_problem(&R->c, "%s: %zu malformed line(s) left out", name, bad);
        } else if (buf && col == 0) {
            wp_rep_problem(&R->c, "%s: not a waitprof matrix file (first line is not \"# %s %d\"); skipped", name,
                           wp_file_format(WP_FILE_MATRIX), wp_file_version(WP_FILE_MATRIX));
        }
        free(buf);
        fprintf(f, "%d", R->r[i].rank);
        for (int j = 0; j < size; j++) {
            if (col == 2)
                fprintf(f, ",%.6f", row[j] * 1e-9);
            else
                fprintf(f, ",%llu", (unsigned long long)row[j]);
        }
        fputc('\n', f);
    }
    free(row);
}

void wp_rep_write_csv(FILE *f, struct run *R, int i)
{
    if (i == CSV_RANKS)
        write_ranks(f, R);
    else if (i < CSV_MATRIX)
        write_table(f, R, i - CSV_TABLE);
    else if (i < CSV_COUNTERS)
        write_matrix(f, R, i - CSV_MATRIX);
    else
        wp_rep_write_counters_csv(f, R);
}
