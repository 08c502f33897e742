/* report/diff.c — call paths compared in two columns: all.diff.folded
 * (MPI-Work against MPI-Stall in one run) and `waitprof report --diff`
 * (MPI-Stall samples in two runs; with --weight EVENT a counter's counts
 * per state and call path), both in difffolded.pl's "path a b" layout.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void wp_rep_write_diff_folded(FILE *f, const struct run *R)
{
    /* Path, MPI-Work samples, MPI-Stall samples: difffolded.pl's layout, so
     * flamegraph.pl colours the paths that stall more than they work red. */
    char **v = wp_rep_xrealloc(NULL, (R->paths.n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < R->paths.n; i++)
        if ((R->paths.v[i].c[WP_STATE_WORK] || R->paths.v[i].c[WP_STATE_STALL]) && R->paths.v[i].path[0])
            v[k++] = R->paths.v[i].path;
    qsort(v, k, sizeof *v, str_cmp);
    for (size_t i = 0; i < k; i++) {
        const struct path *p = wp_rep_pmap_get((struct pmap *)&R->paths, v[i], strlen(v[i]));
        fprintf(f, "%s %llu %llu\n", p->path, (unsigned long long)p->c[WP_STATE_WORK],
                (unsigned long long)p->c[WP_STATE_STALL]);
    }
    free(v);
}

/* --- the diff of two runs ------------------------------------------------------------------------- */

static int diff_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b;
    double dx = x[1] < 0 ? -x[1] : x[1], dy = y[1] < 0 ? -y[1] : y[1];
    return dx < dy ? 1 : dx > dy ? -1 : (x[0] > y[0]) - (x[0] < y[0]);
}

int wp_rep_report_diff(const char *da, const char *db, const struct wp_report_opts *opts, FILE *out,
                       const char *diff_folded, FILE *errs)
{
    struct wp_report_opts o = *opts;
    if (o.top <= 0)
        o.top = 10;
    struct run A, B;
    if (wp_rep_open_run(&A, da, &o, errs) != 0) {
        wp_rep_run_free(&A);
        return -1;
    }
    if (wp_rep_open_run(&B, db, &o, errs) != 0) {
        wp_rep_run_free(&A);
        wp_rep_run_free(&B);
        return -1;
    }
    uint64_t ta = wp_rep_total_samples(&A, 0) + wp_rep_total_samples(&A, 1) + wp_rep_total_samples(&A, 2);
    uint64_t tb = wp_rep_total_samples(&B, 0) + wp_rep_total_samples(&B, 1) + wp_rep_total_samples(&B, 2);
    /* One table of the paths of both runs: A's counts in slot 0, B's in
     * slot 1 of a second map. */
    struct pmap u = {0};
    const struct rctr *ca = NULL, *cb = NULL;
    if (o.weight) {
        /* --weight EVENT: the counter's count per call path, its state
         * frame kept (every state, or MPI-Stall only with --state stall). */
        wp_rep_counters_read(&A, da, o.stall_only);
        wp_rep_counters_read(&B, db, o.stall_only);
        for (size_t i = 0; i < A.nctr; i++)
            ca = strcmp(A.ctr[i].name, o.weight) == 0 ? &A.ctr[i] : ca;
        for (size_t i = 0; i < B.nctr; i++)
            cb = strcmp(B.ctr[i].name, o.weight) == 0 ? &B.ctr[i] : cb;
        if (ca == NULL || cb == NULL) {
            if (errs)
                fprintf(errs, "waitprof report: --weight %s: %s has no counter of that name; give an event "
                              "WAITPROF_COUNTERS named in both runs\n", o.weight, ca == NULL ? da : db);
            wp_rep_run_free(&A);
            wp_rep_run_free(&B);
            return -1;
        }
        ta = ca->total;
        tb = cb->total;
        for (size_t i = 0; i < ca->fold->n; i++)
            wp_rep_pmap_get(&u, ca->fold->lines[i].stack, strlen(ca->fold->lines[i].stack))->c[0] +=
                ca->fold->lines[i].count;
        for (size_t i = 0; i < cb->fold->n; i++)
            wp_rep_pmap_get(&u, cb->fold->lines[i].stack, strlen(cb->fold->lines[i].stack))->c[1] +=
                cb->fold->lines[i].count;
    } else {
        for (size_t i = 0; i < A.paths.n; i++)
            if (A.paths.v[i].c[WP_STATE_STALL])
                wp_rep_pmap_get(&u, A.paths.v[i].path, strlen(A.paths.v[i].path))->c[0] =
                    A.paths.v[i].c[WP_STATE_STALL];
        for (size_t i = 0; i < B.paths.n; i++)
            if (B.paths.v[i].c[WP_STATE_STALL])
                wp_rep_pmap_get(&u, B.paths.v[i].path, strlen(B.paths.v[i].path))->c[1] =
                    B.paths.v[i].c[WP_STATE_STALL];
    }
    /* Sorted by the change in stall share of all samples. */
    double *v = wp_rep_xrealloc(NULL, (u.n + 1) * 2 * sizeof *v);
    for (size_t i = 0; i < u.n; i++) {
        v[2 * i] = (double)i;
        v[2 * i + 1] = wp_rep_pct(u.v[i].c[1], tb) - wp_rep_pct(u.v[i].c[0], ta);
    }
    qsort(v, u.n, 2 * sizeof *v, diff_cmp);
    if (ca) {
        fprintf(out, "%s\nwaitprof report --diff: %s (%s) per call path%s, A = %s (%llu), B = %s (%llu)\n",
                WP_FORMAT_REPORT, o.weight, ca->unit, o.stall_only ? " in MPI-Stall" : " and MPI state", da,
                (unsigned long long)ta, db, (unsigned long long)tb);
        fprintf(out, "%15s %15s %9s %9s  %s\n", "A", "B", "A % all", "B % all",
                "state;call path (largest change first)");
    } else {
        fprintf(out,
                "%s\nwaitprof report --diff: MPI-Stall per call path, A = %s (%llu samples), B = %s (%llu samples)\n",
                WP_FORMAT_REPORT, da, (unsigned long long)ta, db, (unsigned long long)tb);
        fprintf(out, "%9s %9s %9s %9s  %s\n", "A stall", "B stall", "A % all", "B % all",
                "call path (largest change first)");
    }
    for (size_t i = 0; i < u.n && i < (size_t)o.top; i++) {
        const struct path *p = &u.v[(size_t)v[2 * i]];
        fprintf(out, ca ? "%15llu %15llu %8.1f%% %8.1f%%  %s " : "%9llu %9llu %8.1f%% %8.1f%%  %s ",
                (unsigned long long)p->c[0], (unsigned long long)p->c[1], wp_rep_pct(p->c[0], ta),
                wp_rep_pct(p->c[1], tb), v[2 * i + 1] > 0 ? "gained" : "lost");
        wp_rep_put_path(out, p->path, 110);
        fputc('\n', out);
    }
    if (u.n == 0)
        fprintf(out, ca ? "(no %s counts in either run)\n" : "(no MPI-Stall samples in either run)\n", o.weight);
    int rc = 0;
    if (diff_folded) {
        FILE *f = fopen(diff_folded, "w");
        if (f == NULL) {
            if (errs)
                fprintf(errs, "waitprof report: cannot write %s (%s)\n", diff_folded, strerror(errno));
            rc = -1;
        } else {
            char **s = wp_rep_xrealloc(NULL, (u.n + 1) * sizeof *s);
            size_t k = 0;
            for (size_t i = 0; i < u.n; i++)
                if (u.v[i].path[0])
                    s[k++] = u.v[i].path;
            qsort(s, k, sizeof *s, str_cmp);
            for (size_t i = 0; i < k; i++) {
                const struct path *p = wp_rep_pmap_get(&u, s[i], strlen(s[i]));
                fprintf(f, "%s %llu %llu\n", p->path, (unsigned long long)p->c[0], (unsigned long long)p->c[1]);
            }
            free(s);
            if (fclose(f) != 0)
                rc = -1;
        }
    }
    free(v);
    wp_rep_pmap_free(&u);
    int bad = A.c.bad || B.c.bad;
    wp_rep_run_free(&A);
    wp_rep_run_free(&B);
    return rc ? -1 : bad ? 1 : 0;
}
