/* report/model.h — the in-memory model of a run directory, and the functions
 * that the report's files share.  Internal to report/; the interface of the
 * report is report/report.h.
 *
 * Contract: a struct run holds what the writers need from one run
 * directory, reduced over ranks as the files are read:
 *   - per rank (struct rinfo, sorted by rank, one entry per rank that has
 *     any rank.R.* file): its samples per state, its meta figures, its
 *     samples at the main waiting call path;
 *   - the merged call paths (struct pmap of struct path): one entry per
 *     distinct path without its state frame, with a count per state;
 *   - per MPI function (struct fnagg) the call statistics reduced over ranks,
 *     its histograms grouped by their fullest bin (struct hgroup), and each
 *     rank's row (struct rfn, in rank order) for the per-rank tables;
 *   - per call site the wait-state sums and the per-rank extremes (struct
 *     site), sorted by wait and by imbalance once every rank is read;
 *   - the main waiting call path, the rank that causes it, and the problems
 *     found in the input (struct ctx), each also printed on the errors file.
 * Only report/read.c fills it: wp_rep_open_run() reads the directory and
 * wp_rep_run_free() releases it.  The writers (report/text.c, json.c, csv.c,
 * diff.c) then only read it, except that the matrix writer adds the
 * problems of the rank.R.matrix files, which it is the first to open.
 *
 * Memory: O(ranks x MPI functions + distinct call paths + call sites), never
 * O(ranks^2): matrix rows are not kept but streamed from the ranks' files
 * while the CSVs are written.  Every allocation goes through
 * wp_rep_xrealloc(); out of memory, it jumps back to the entry point that
 * set wp_rep_oom_jmp, which then returns -1 (what was allocated is lost).
 *
 * Non-static names here carry the wp_rep_ prefix; the library is built with
 * -fvisibility=hidden, so none of them is exported.
 */
#ifndef WP_REPORT_MODEL_H
#define WP_REPORT_MODEL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/format.h"
#include "format/select.h"
#include "report/report.h"

struct wp_folded;

#define NBINS 101 /* fallback/stats.h WP_HIST_BINS */


/* The input's problems: each is printed on errs and kept for the report;
 * bad is set once there is one. */
struct ctx {
    const char *dir;
    FILE *errs;
    int bad;            /* some input was bad */
    char **problems;    /* the same lines, for the report */
    size_t nproblems;
};

/* Ranks as ranges, appended in increasing order. */
struct ranges {
    int *lo, *hi;
    size_t n, cap;
};

/* --- the model ------------------------------------------------------------------ */

/* Where a frame's function is defined (rank.R.frames): file NULL when
 * DWARF did not say. */
struct floc {
    char *file;
    int line, inlined;
};

/* A call path of the merged profile, with its samples per state. */
struct path {
    char *path; /* without the state frame */
    uint64_t c[WP_STATE_COUNT];
};

/* The call paths: an open-addressing hash table of indexes into v
 * (wp_rep_pmap_get(), report/util.c). */
struct pmap {
    struct path *v;
    size_t n, cap;
    uint32_t *slot;
    size_t nslots; /* power of two */
};

/* One rank's timeline, as rank.R.timeline gives it: weights (sampling
 * periods) per bin and state, and per bin the index of its stall path in
 * the run's timeline paths (struct run, tl_paths), -1 for none. */
struct tline {
    uint64_t origin_ns, bin_ns, period_ns;
    uint32_t nbins;
    uint64_t (*w)[WP_STATE_COUNT];
    int32_t *path;
};

/* The timelines of all ranks on one grid (report/aggregate.c,
 * wp_rep_timeline): bins of bin_ns from origin_ns, the earliest rank's
 * start in the common time base; per rank with a timeline (in rank order,
 * row[k] the index in struct run's r) seconds per bin and state and the
 * stall path index of the bin's largest stall contribution. */
struct tgrid {
    uint64_t origin_ns, bin_ns;
    uint32_t nbins;
    size_t nrows;
    size_t *row;
    double *start_s;                   /* per row: its rank's start after origin_ns */
    double (*s)[WP_STATE_COUNT];       /* nrows x nbins */
    int32_t *path;                     /* nrows x nbins */
};

/* One rank, from its meta and folded files. */
struct rinfo {
    int rank;
    unsigned has_meta : 1, has_folded : 1, partial : 1;
    struct tline *tl;       /* NULL without a rank.R.timeline */
    char host[64];          /* meta's host, for the clock offset */
    int64_t clock_offset_ns; /* meta's clock_offset_ns (match/clock.c), 0 if none */
    unsigned files; /* which rank.R.* files the directory lists (F_* bits, report/read.c) */
    uint64_t st[WP_STATE_COUNT];
    uint64_t samples, dropped, duration_ns, hz;
    uint64_t main_stall, main_all; /* at the main waiting call path */
    char *ctr_split; /* meta's counters_split= (WAITPROF_COUNTERS_SPLIT), NULL without */
    uint64_t ctr_enabled_ns, ctr_running_ns; /* the perf_event groups' times (meta) */
};

/* The ranks of one MPI function whose call-duration histograms have the same
 * fullest bin, with each bin's max (rank), min (rank) and sum over them. */
struct hgroup {
    struct ranges ranks;
    uint64_t nranks;
    uint32_t max[NBINS], min[NBINS];
    int maxr[NBINS], minr[NBINS];
    uint64_t sum[NBINS];
};

/* Per MPI function, the call statistics reduced over ranks: events per rank,
 * the longest, second-longest and shortest calls, the average and total per
 * rank (max and min with their ranks), the traffic, and the histogram groups
 * indexed by their fullest bin. */
struct fnagg {
    char name[64];
    struct ranges ranks;
    uint64_t nranks, events;
    uint64_t ev_max, ev_min;
    int ev_max_r, ev_min_r;
    uint64_t longest, longest_ev, second, second_ev, shortest, shortest_ev;
    int longest_r, second_r, shortest_r;
    double avg_max, avg_min;
    int avg_max_r, avg_min_r;
    uint64_t avg_max_n, avg_min_n;
    uint64_t tot_max, tot_min, tot_max_n, tot_min_n, total;
    int tot_max_r, tot_min_r;
    uint64_t bytes_sent, bytes_recv, req_sent, req_recv;
    struct hgroup *groups[NBINS];
};

struct rfn { /* one rank's figures for one function, for the CSVs and JSON */
    int rank, fn;
    uint64_t calls, time_ns, bytes_sent, bytes_recv, req_sent, req_recv;
};

/* Per (call site, function, pattern) the wait-state sums, or per (call site,
 * function) the time in the call for the imbalance, with the per-rank
 * extremes; cur_* and last_rank hold the rank being read. */
struct site {
    char *site;
    char fn[64], pattern[24];
    uint64_t calls, time_ns, wait_ns, nranks;
    uint64_t cur_wait, cur_time;
    int last_rank;
    uint64_t wmax, wmin, tmax;
    int wmax_r, wmin_r, tmax_r;
    /* How the wait was had (rank.R.waits' method and matched columns):
     * instances matched, summed over the measured rows; the calls of the
     * rows the runtime stall source gave (method source); the calls of the
     * rows that kept the estimate (or predate those columns). */
    uint64_t matched, src_calls, est_calls;
};

/* Who caused measured waits (rank.R.causes, rank.R.paths; match/match.h):
 * per delaying rank and call path, the waits it caused, each as (waiting
 * rank, call site, function, pattern, seconds, directly or through ranks
 * that waited for it). */
struct cwait {
    int rank;
    char *site;
    char fn[64], pattern[24];
    double wait_s;
    int propagated;
};
struct cause {
    int delayer;
    uint64_t hash;  /* the delayer's computation, as rank.R.causes names it */
    char *path;     /* its call path (rank D's rank.D.paths), NULL if not written */
    double short_s; /* the waits it caused directly (short-term cost) */
    double long_s;  /* the waits it caused through waiting ranks (long-term) */
    struct cwait *w;
    size_t nw;
};

/* One run directory (see the contract above). */
struct run {
    struct ctx c;
    struct wp_ranks want; /* --ranks (format/select.h) */
    int have_want;
    struct rinfo *r;
    size_t nr, rcap;
    struct pmap paths;
    struct fnagg *fns;
    size_t nfns;
    struct rfn *rf;
    size_t nrf, rfcap;
    struct site *sites, *isites; /* per (site, function, pattern); per (site, function) */
    size_t nsites, nisites;
    int size;              /* from meta */
    char source[64], mpi[256], clock[16];
    char counters[1024]; /* the first meta's counters= ("task-clock:ns:perf_event,..."): each counter's unit */
    uint64_t hz;
    /* The overflow trigger (meta timer=overflow, overflow_event and
     * overflow_period) from the first meta that names one; "" and 0 when
     * the ranks sampled on timers at hz. */
    char overflow_event[64];
    uint64_t overflow_period;
    int mixed_source, have_matrix, nmeta_partial;
    int lean; /* a rank's meta says wrappers=lean: no call was timed */
    char **extra;          /* meta keys not known here, "key=value" from the first meta */
    size_t nextra;
    uint64_t duration_max, samples, dropped;
    const struct path *main; /* the main waiting call path */
    int cause_rank;
    struct cause *causes;    /* largest short_s + long_s first */
    size_t ncauses;
    /* Where each frame's function is defined, from rank.R.frames: the
     * names in frames.v[i].path, their locations in floc[i]. */
    struct pmap frames;
    struct floc *floc;
    struct pmap tl_paths;    /* the timelines' stall paths (counts unused) */
    /* The counters (WAITPROF_COUNTERS) the ranks' rank.R.<event>.folded
     * name, read by wp_rep_counters_read (report/counters.c). */
    struct rctr *ctr;
    size_t nctr;
};

/* One counter over the ranks read: its merged folded lines, its totals per
 * MPI state (the lines' root frames) and per rank (rank_total[i] for
 * R->r[i]), in its unit. */
struct rctr {
    char name[64];
    char unit[32]; /* as the meta files say ("ns", "events"; by the name for older files) */
    struct wp_folded *fold;
    uint64_t st[WP_STATE_COUNT], total;
    uint64_t *rank_total;                 /* [R->nr] */
    uint64_t (*rank_st)[WP_STATE_COUNT];  /* [R->nr]: per rank and state */
    /* WAITPROF_COUNTERS_SPLIT: the counts read at MPI entry and exit and at
     * the samples, [0] outside and [1] inside MPI (the meta files'
     * counters_split=), summed and per rank; nsplit ranks had them. */
    uint64_t split[2];
    uint64_t (*rank_split)[2];            /* [R->nr] */
    size_t nsplit;
};

/* A state's share of the samples over the ranks that have samples. */
struct mm {
    double min, max, sum;
    int rmin, rmax;
    size_t n;
};

/* --- report/counters.c: the counter profiles (WAITPROF_COUNTERS) ---------------- */

/* Read every rank.R.<event>.folded of the ranks read into R->ctr (at most
 * WP_REP_CTR_MAX events, sorted by name): merged lines and totals; with
 * stall_only (--state stall) the MPI-Stall lines only. */
#define WP_REP_CTR_MAX 16
void wp_rep_counters_read(struct run *R, const char *dir, int stall_only);
void wp_rep_counters_free(struct run *R);
/* report.txt's section and report.json's "counters" (nothing without
 * counters, so that reports of runs without them are unchanged). */
void wp_rep_write_counters_text(FILE *f, const struct run *R);
void wp_rep_write_counters_json(FILE *f, const struct run *R);
/* counters.csv: per rank, each counter's count per MPI state and total. */
void wp_rep_write_counters_csv(FILE *f, const struct run *R);

/* --- report/util.c: problems, memory, files, rank ranges, strings, paths ------- */

void wp_rep_problem(struct ctx *c, const char *fmt, ...);
extern jmp_buf *wp_rep_oom_jmp;
void wp_rep_oom(size_t n);
void *wp_rep_xrealloc(void *p, size_t n);
char *wp_rep_slurp(const char *path, size_t *len);

void wp_rep_ranges_add(struct ranges *r, int rank);
void wp_rep_ranges_print(FILE *f, const struct ranges *r);

void wp_rep_jstr(FILE *f, const char *s);
void wp_rep_cstr(FILE *f, const char *s);
void wp_rep_put_path(FILE *f, const char *p, size_t max);
/* A call site ("func (file:line)", or a call path of such frames joined by
 * " < ") in at most w columns of out (capacity cap): what is cut is the
 * function name of the first frame (its parameters, then its qualifiers),
 * never that frame's file:line, which says where the call is. */
void wp_rep_site_fit(char *out, size_t cap, const char *site, size_t w);
double wp_rep_pct(uint64_t a, uint64_t b);
uint64_t wp_rep_bin_low(int bin);
uint64_t wp_rep_bin_high(int bin);

struct path *wp_rep_pmap_get(struct pmap *m, const char *s, size_t n);
/* The same without adding: NULL when s is not in m. */
const struct path *wp_rep_pmap_find(const struct pmap *m, const char *s, size_t n);
void wp_rep_pmap_free(struct pmap *m);

/* --- report/read.c: a run directory into the model ------------------------------- */

long wp_rep_format_version(const char *buf, const char *prefix, const char *name);
int wp_rep_open_run(struct run *R, const char *dir, const struct wp_report_opts *o, FILE *errs);
void wp_rep_run_free(struct run *R);

/* --- report/aggregate.c: figures computed from the model ------------------------- */

void wp_rep_state_mm(const struct run *R, int st, struct mm *m);
uint64_t wp_rep_total_samples(const struct run *R, int st);
double wp_rep_run_total_s(const struct run *R);
/* Seconds in state st: a rank's duration times its share of samples in st
 * (an estimate from sampling), for one rank and summed over the ranks. */
double wp_rep_rank_state_s(const struct rinfo *ri, int st);
double wp_rep_state_s(const struct run *R, int st);
int wp_rep_rinfo_stall_cmp(const void *a, const void *b);
const struct path **wp_rep_top_stall(const struct run *R, size_t *n);
/* The ranks' timelines on one grid of at most max_bins bins; NULL-free
 * result with nrows 0 when no rank has one.  wp_rep_tgrid_free releases. */
void wp_rep_timeline(const struct run *R, uint32_t max_bins, struct tgrid *g);
void wp_rep_tgrid_free(struct tgrid *g);
void wp_rep_to_folded(const struct run *R, struct wp_folded *out);

/* --- the writers: report/text.c, json.c, csv.c, diff.c --------------------------- */

void wp_rep_write_text(FILE *f, const struct run *R, const struct wp_report_opts *o);
void wp_rep_write_short(FILE *f, const struct run *R);
void wp_rep_write_json(FILE *f, const struct run *R, const struct wp_report_opts *o);
/* timeline.svg (report/timeline.c): ranks as rows, time as columns, each
 * bin stacked by its states' shares, <title> tooltips. */
int wp_rep_write_timeline_svg(FILE *f, const struct run *R);

/* The CSV files (report/csv.c), in the order they are written: ranks.csv,
 * the per-rank tables (T_TIME ...) and the three transfer matrices.  Each
 * starts with its header row; report.json names each one written with its
 * format, version and content ("csv_files"), from this one list. */
enum { T_TIME, T_CALLS, T_BSENT, T_RSENT, T_BRECV, T_RRECV, T_N };
enum { CSV_RANKS, CSV_TABLE, CSV_MATRIX = CSV_TABLE + T_N, CSV_COUNTERS = CSV_MATRIX + 3, CSV_N };
struct csv_file {
    const char *name;    /* "mpi_time.csv" */
    const char *content; /* what its rows and columns hold, for report.json */
};
extern const struct csv_file wp_rep_csv_files[CSV_N];
int wp_rep_csv_written(const struct run *R, int i);
void wp_rep_write_csv(FILE *f, struct run *R, int i);

void wp_rep_write_diff_folded(FILE *f, const struct run *R);
int wp_rep_report_diff(const char *da, const char *db, const struct wp_report_opts *opts, FILE *out,
                       const char *diff_folded, FILE *errs);

#endif
