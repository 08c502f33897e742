/* report/report.c — see report/report.h.
 *
 * The entry points and the order in which the outputs are written; each
 * output goes through a temporary file and a rename.  The model of a run
 * and the functions shared by the report's files are in report/model.h:
 * report/read.c reads a run directory, report/aggregate.c computes from it,
 * report/text.c, json.c, csv.c and diff.c write it, report/util.c holds the
 * helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"
#include "report/report.h"
#include "report/summary.h"
#include "report/svg.h"

struct emit_arg {
    struct run *R;
    const struct wp_report_opts *o;
    const struct wp_folded *fold;
    int which;
};

typedef int (*emit_fn)(FILE *, struct emit_arg *);

static int e_text(FILE *f, struct emit_arg *a) { wp_rep_write_text(f, a->R, a->o); return 0; }
static int e_json(FILE *f, struct emit_arg *a) { wp_rep_write_json(f, a->R, a->o); return 0; }
static int e_csv(FILE *f, struct emit_arg *a) { wp_rep_write_csv(f, a->R, a->which); return 0; }
static int e_folded(FILE *f, struct emit_arg *a) { return wp_folded_write(f, a->fold); }
static int e_diff(FILE *f, struct emit_arg *a) { wp_rep_write_diff_folded(f, a->R); return 0; }
static int e_svg(FILE *f, struct emit_arg *a)
{
    char title[256];
    snprintf(title, sizeof title, "waitprof: %zu rank%s%s", a->R->nr, a->R->nr == 1 ? "" : "s",
             a->o->stall_only ? ", MPI-Stall only" : "");
    return wp_svg_write(f, a->fold, title, NULL);
}
/* all.svg drawn from a counter's profile (--weight EVENT): a->which is
 * the counter's index in R->ctr. */
static int e_svg_weight(FILE *f, struct emit_arg *a)
{
    const struct rctr *c = &a->R->ctr[a->which];
    char title[256];
    snprintf(title, sizeof title, "waitprof: %zu rank%s, weighted by %s (%s)%s", a->R->nr, a->R->nr == 1 ? "" : "s",
             c->name, c->unit, a->o->stall_only ? ", MPI-Stall only" : "");
    return wp_svg_write(f, c->fold, title, c->unit);
}
static int e_timeline(FILE *f, struct emit_arg *a) { return wp_rep_write_timeline_svg(f, a->R); }
static int e_summary(FILE *f, struct emit_arg *a) { return wp_summary_write(f, a->fold, (int)a->R->nr, 8); }

/* Write outdir/name through a temporary file and a rename. */
static int emit(struct ctx *c, const char *outdir, const char *name, emit_fn fn, struct emit_arg *a)
{
    char path[4400], tmp[4500];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        if (c->errs)
            fprintf(c->errs, "waitprof report: cannot write %s (%s)\n", path, strerror(errno));
        return -1;
    }
    int rc = fn(f, a);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        if (c->errs)
            fprintf(c->errs, "waitprof report: cannot write %s (%s)\n", path, strerror(errno));
        remove(tmp);
    }
    return rc;
}

static int report_dir(const char *dir, const char *outdir, const struct wp_report_opts *opts, FILE *short_out,
                      FILE *errs)
{
    struct wp_report_opts o = *opts;
    if (o.top <= 0)
        o.top = 10;
    struct run R;
    if (wp_rep_open_run(&R, dir, &o, errs) != 0) {
        wp_rep_run_free(&R);
        return -2;
    }
    /* The counters the ranks counted first: --weight draws all.svg from
     * one of them, and a name the run does not have is a usage error. */
    wp_rep_counters_read(&R, dir, o.stall_only);
    int weight = -1;
    if (o.weight) {
        for (size_t i = 0; i < R.nctr && weight < 0; i++)
            if (strcmp(R.ctr[i].name, o.weight) == 0)
                weight = (int)i;
        if (weight < 0) {
            if (errs) {
                fprintf(errs, "waitprof report: --weight %s: %s has no counter of that name (", o.weight, dir);
                for (size_t i = 0; i < R.nctr; i++)
                    fprintf(errs, "%s%s", i ? ", " : "counted: ", R.ctr[i].name);
                fprintf(errs, "%s); give one of the events WAITPROF_COUNTERS named\n",
                        R.nctr ? "" : "the run counted none; run with WAITPROF_COUNTERS=EVENT");
            }
            wp_rep_run_free(&R);
            return -2;
        }
    }
    struct wp_folded fold = {0};
    wp_rep_to_folded(&R, &fold);
    struct emit_arg a = {&R, &o, &fold, 0};
    int rc = 0;
    rc |= emit(&R.c, outdir, "all.folded", e_folded, &a);
    rc |= emit(&R.c, outdir, "all.diff.folded", e_diff, &a);
    if (weight >= 0) {
        struct emit_arg wa = {&R, &o, NULL, weight};
        rc |= emit(&R.c, outdir, "all.svg", e_svg_weight, &wa);
    } else {
        rc |= emit(&R.c, outdir, "all.svg", e_svg, &a);
    }
    rc |= emit(&R.c, outdir, "timeline.svg", e_timeline, &a);
    rc |= emit(&R.c, outdir, "summary.txt", e_summary, &a);
    /* all.<event>.folded for each counter the ranks counted; the
     * totals go into report.txt and report.json below. */
    for (size_t i = 0; i < R.nctr; i++) {
        struct emit_arg ca = {&R, &o, R.ctr[i].fold, 0};
        char name[128];
        snprintf(name, sizeof name, "all.%s.folded", R.ctr[i].name);
        rc |= emit(&R.c, outdir, name, e_folded, &ca);
    }
    for (int i = 0; i < CSV_N; i++) {
        a.which = i;
        if (wp_rep_csv_written(&R, i))
            rc |= emit(&R.c, outdir, wp_rep_csv_files[i].name, e_csv, &a);
    }
    /* Last, so that they list every problem found above. */
    rc |= emit(&R.c, outdir, "report.json", e_json, &a);
    rc |= emit(&R.c, outdir, "report.txt", e_text, &a);
    if (short_out)
        wp_rep_write_short(short_out, &R);
    wp_folded_free(&fold);
    int bad = R.c.bad;
    wp_rep_run_free(&R);
    return rc ? -1 : bad ? 1 : 0;
}

int wp_report_dir(const char *dir, const char *outdir, const struct wp_report_opts *opts, FILE *short_out,
                  FILE *errs)
{
    jmp_buf env;
    if (setjmp(env) != 0) {
        wp_rep_oom_jmp = NULL;
        return -1;
    }
    wp_rep_oom_jmp = &env;
    int rc = report_dir(dir, outdir, opts, short_out, errs);
    wp_rep_oom_jmp = NULL;
    return rc;
}

int wp_report_diff(const char *a, const char *b, const struct wp_report_opts *opts, FILE *out,
                   const char *diff_folded, FILE *errs)
{
    jmp_buf env;
    if (setjmp(env) != 0) {
        wp_rep_oom_jmp = NULL;
        return -1;
    }
    wp_rep_oom_jmp = &env;
    int rc = wp_rep_report_diff(a, b, opts, out, diff_folded, errs);
    wp_rep_oom_jmp = NULL;
    return rc;
}
