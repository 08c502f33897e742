/* report/counters.c — the counter profiles of a run (WAITPROF_COUNTERS):
 * every rank.R.<event>.folded of the ranks read merged into
 * all.<event>.folded.  The events are those the files name; a rank that
 * could not count one simply has no file for it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"

/* The event of a directory entry "rank.R.<event>.folded" of a rank the
 * report reads, into ev (capacity cap); 0, or -1 when it is no such file.
 * An event is a name of letters, digits and - _ : (state/config.c allows
 * '.' and '/' too, which never make a file name here). */
static int wp_rep_counter_file(const struct run *R, const char *name, char *ev, size_t cap, int *rank)
{
    int n = 0;
    if (sscanf(name, "rank.%d.%n", rank, &n) != 1 || n == 0 || *rank < 0)
        return -1;
    const char *p = name + n;
    size_t len = strlen(p), sfx = strlen(".folded");
    if (len <= sfx || strcmp(p + len - sfx, ".folded") != 0 || len - sfx >= cap)
        return -1;
    len -= sfx;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
              p[i] == '-' || p[i] == '_' || p[i] == ':'))
            return -1;
    int listed = 0;
    for (size_t i = 0; i < R->nr && !listed; i++)
        listed = R->r[i].rank == *rank;
    if (!listed)
        return -1;
    memcpy(ev, p, len);
    ev[len] = '\0';
    return 0;
}

static size_t wp_rep_counter_events(const struct run *R, const char *dir, char (*ev)[64], size_t max)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    char one[64];
    int rank;
    while ((e = readdir(d)) != NULL) {
        if (wp_rep_counter_file(R, e->d_name, one, sizeof one, &rank) != 0)
            continue;
        int seen = 0;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(ev[i], one) == 0;
        if (!seen && n < max)
            memcpy(ev[n++], one, sizeof one);
    }
    closedir(d);
    return n;
}

static int wp_rep_name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Is [p, end) the word w? */
static int wp_rep_is_word(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(end - p) == n && strncmp(p, w, n) == 0;
}

/* Whether the len characters at p name event ev as the files name it
 * ('.' and '/' made '_'), for the meta's lists of counters. */
static int wp_rep_meta_name_is(const char *p, size_t len, const char *ev)
{
    if (len != strlen(ev))
        return 0;
    for (size_t k = 0; k < len; k++)
        if ((p[k] == '.' || p[k] == '/' ? '_' : p[k]) != ev[k])
            return 0;
    return 1;
}

/* The unit of an event into unit (capacity cap): as the meta files give it
 * (counters=name:unit:backend,..., or name:unit from before the backend
 * was written), the name compared in its file form (sampler/counters.h:
 * '.' and '/' made '_', as ev, the name of a file, has it); for files
 * without it (older runs), by the name: the perf clocks count nanoseconds
 * (sampler/counters.c), every other event occurrences. */
static void wp_rep_counter_unit(const struct run *R, const char *ev, char *unit, size_t cap)
{
    for (const char *p = R->counters; *p;) {
        size_t n = strcspn(p, ",");
        /* The name itself may hold ':' (perf::TASK-CLOCK): split from the
         * end, the backend first when it is there. */
        const char *end = p + n, *last = NULL;
        for (const char *q = p; q < end; q++)
            if (*q == ':')
                last = q;
        if (last && (wp_rep_is_word(last + 1, end, "perf_event") || wp_rep_is_word(last + 1, end, "papi"))) {
            end = last;
            last = NULL;
            for (const char *q = p; q < end; q++)
                if (*q == ':')
                    last = q;
        }
        int same = last != NULL && wp_rep_meta_name_is(p, (size_t)(last - p), ev);
        size_t ul = last ? (size_t)(end - last - 1) : 0;
        if (same && ul > 0 && ul < cap) {
            memcpy(unit, last + 1, ul);
            unit[ul] = '\0';
            return;
        }
        p += n + (p[n] == ',');
    }
    snprintf(unit, cap, "%s", strcmp(ev, "task-clock") == 0 || strcmp(ev, "cpu-clock") == 0 ? "ns" : "events");
}

/* From a meta's counters_split= ("name:OUT:IN,..."; a name may hold ':'),
 * the two sums of event ev; 0 when it is there. */
static int wp_rep_split_of(const char *v, const char *ev, uint64_t out[2])
{
    size_t el = strlen(ev);
    for (const char *p = v; p && *p;) {
        size_t n = strcspn(p, ",");
        unsigned long long a, b;
        int used = 0;
        if (n > el + 1 && p[el] == ':' && wp_rep_meta_name_is(p, el, ev) &&
            sscanf(p + el + 1, "%llu:%llu%n", &a, &b, &used) == 2 && (size_t)used == n - el - 1) {
            out[0] = a;
            out[1] = b;
            return 0;
        }
        p += n + (p[n] == ',');
    }
    return -1;
}

void wp_rep_counters_read(struct run *R, const char *dir, int stall_only)
{
    char ev[WP_REP_CTR_MAX][64];
    size_t nev = wp_rep_counter_events(R, dir, ev, WP_REP_CTR_MAX);
    R->nctr = 0;
    if (nev == 0)
        return;
    qsort(ev, nev, sizeof ev[0], wp_rep_name_cmp);
    R->ctr = wp_rep_xrealloc(NULL, nev * sizeof *R->ctr);
    char path[4400];
    for (size_t k = 0; k < nev; k++) {
        struct rctr *c = &R->ctr[R->nctr++];
        memset(c, 0, sizeof *c);
        memcpy(c->name, ev[k], sizeof c->name);
        wp_rep_counter_unit(R, c->name, c->unit, sizeof c->unit);
        c->fold = wp_rep_xrealloc(NULL, sizeof *c->fold);
        memset(c->fold, 0, sizeof *c->fold);
        c->rank_total = wp_rep_xrealloc(NULL, (R->nr + 1) * sizeof *c->rank_total);
        memset(c->rank_total, 0, (R->nr + 1) * sizeof *c->rank_total);
        c->rank_st = wp_rep_xrealloc(NULL, (R->nr + 1) * sizeof *c->rank_st);
        memset(c->rank_st, 0, (R->nr + 1) * sizeof *c->rank_st);
        c->rank_split = wp_rep_xrealloc(NULL, (R->nr + 1) * sizeof *c->rank_split);
        memset(c->rank_split, 0, (R->nr + 1) * sizeof *c->rank_split);
        for (size_t i = 0; i < R->nr; i++)
            if (R->r[i].ctr_split && wp_rep_split_of(R->r[i].ctr_split, c->name, c->rank_split[i]) == 0) {
                c->split[0] += c->rank_split[i][0];
                c->split[1] += c->rank_split[i][1];
                c->nsplit++;
            }
        for (size_t i = 0; i < R->nr; i++) {
            snprintf(path, sizeof path, "%s/rank.%d.%s.folded", dir, R->r[i].rank, c->name);
            size_t len = 0;
            char *text = wp_rep_slurp(path, &len);
            if (text == NULL)
                continue;
            struct wp_folded one = {0};
            size_t bad = wp_folded_add_text(&one, text, len);
            free(text);
            if (bad)
                wp_rep_problem(&R->c, "rank.%d.%s.folded: %zu malformed line%s skipped", R->r[i].rank, c->name,
                               bad, bad == 1 ? "" : "s");
            for (size_t j = 0; j < one.n; j++) {
                const char *st = one.lines[j].stack;
                size_t root = strcspn(st, ";");
                uint64_t n = one.lines[j].count;
                /* --state stall keeps MPI-Stall lines only, as it does for
                 * the samples (report/read.c). */
                if (stall_only && (root != strlen(wp_state_name(WP_STATE_STALL)) ||
                                   strncmp(st, wp_state_name(WP_STATE_STALL), root) != 0))
                    continue;
                for (int s = 0; s < WP_STATE_COUNT; s++)
                    if (strlen(wp_state_name(s)) == root && strncmp(st, wp_state_name(s), root) == 0) {
                        c->st[s] += n;
                        c->rank_st[i][s] += n;
                    }
                c->total += n;
                c->rank_total[i] += n;
                wp_folded_add(c->fold, st, strlen(st), n);
            }
            wp_folded_free(&one);
        }
        wp_folded_finish(c->fold);
    }
}

void wp_rep_counters_free(struct run *R)
{
    for (size_t k = 0; k < R->nctr; k++) {
        wp_folded_free(R->ctr[k].fold);
        free(R->ctr[k].fold);
        free(R->ctr[k].rank_total);
        free(R->ctr[k].rank_st);
        free(R->ctr[k].rank_split);
    }
    free(R->ctr);
    R->ctr = NULL;
    R->nctr = 0;
}

/* --- derived rates ------------------------------------------------------------ */

/* The ranks' seconds in a state (the samples' estimate, report/aggregate.c),
 * or their whole profiled seconds for st < 0. */
static double wp_rep_ctr_secs(const struct run *R, int st)
{
    if (st >= 0)
        return wp_rep_state_s(R, st);
    double t = 0;
    for (size_t i = 0; i < R->nr; i++)
        t += R->r[i].duration_ns * 1e-9;
    return t;
}

/* A counter's count per second of the ranks' time in a state (st < 0: in
 * all); negative when there is no such time. */
static double wp_rep_ctr_rate(const struct run *R, const struct rctr *c, int st)
{
    double secs = wp_rep_ctr_secs(R, st);
    return secs > 0 ? (double)(st >= 0 ? c->st[st] : c->total) / secs : -1;
}

/* The counter of the run that counts one of names (perf, PAPI preset or
 * PAPI native name), or NULL. */
static const struct rctr *wp_rep_ctr_find(const struct run *R, const char *const *names)
{
    for (size_t k = 0; k < R->nctr; k++)
        for (const char *const *n = names; *n; n++)
            if (strcmp(R->ctr[k].name, *n) == 0)
                return &R->ctr[k];
    return NULL;
}

/* Instructions and cycles, when the run counted both: instructions per
 * cycle then follows, per state, from the same samples. */
static int wp_rep_ipc_pair(const struct run *R, const struct rctr **ins, const struct rctr **cyc)
{
    static const char *const in[] = {"instructions", "PAPI_TOT_INS", "perf::INSTRUCTIONS", NULL};
    static const char *const cy[] = {"cycles", "cpu-cycles", "PAPI_TOT_CYC", "perf::CYCLES", "perf::CPU-CYCLES", NULL};
    *ins = wp_rep_ctr_find(R, in);
    *cyc = wp_rep_ctr_find(R, cy);
    return *ins && *cyc;
}

static double wp_rep_ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : -1;
}

static void wp_rep_put_rate(FILE *f, double v, const char *fmt)
{
    if (v < 0)
        fprintf(f, " %16s", "-");
    else
        fprintf(f, fmt, v);
}

void wp_rep_write_counters_text(FILE *f, const struct run *R)
{
    if (R->nctr == 0)
        return;
    fprintf(f, "\n== counters per MPI state, summed over ranks (all.<event>.folded per call path)\n");
    fprintf(f, "%-18s %-6s %16s %16s %16s %16s  %s\n", "event", "unit", "Not-in-MPI", "MPI-Work", "MPI-Stall", "total",
            "max rank (total)");
    for (size_t k = 0; k < R->nctr; k++) {
        const struct rctr *c = &R->ctr[k];
        size_t mx = 0;
        for (size_t i = 1; i < R->nr; i++)
            if (c->rank_total[i] > c->rank_total[mx])
                mx = i;
        fprintf(f, "%-18s %-6s %16llu %16llu %16llu %16llu  %d (%llu)\n", c->name, c->unit,
                (unsigned long long)c->st[WP_STATE_NOT_IN_MPI], (unsigned long long)c->st[WP_STATE_WORK],
                (unsigned long long)c->st[WP_STATE_STALL], (unsigned long long)c->total,
                R->nr ? R->r[mx].rank : -1, (unsigned long long)(R->nr ? c->rank_total[mx] : 0));
    }
    /* Rates: each count over the seconds the ranks spent in the state (the
     * samples' estimate, as in the state table).  task-clock per second is
     * the share of the time a rank's threads ran on a CPU, in ns per s;
     * context switches per second in MPI-Stall show waits that yield. */
    fprintf(f, "\nper second of the ranks' time in each state (count / state seconds)\n");
    fprintf(f, "%-18s %-6s %16s %16s %16s %16s\n", "event", "unit", "Not-in-MPI", "MPI-Work", "MPI-Stall", "all");
    for (size_t k = 0; k < R->nctr; k++) {
        const struct rctr *c = &R->ctr[k];
        char unit[40];
        snprintf(unit, sizeof unit, "%s/s", c->unit);
        fprintf(f, "%-18s %-6s", c->name, unit);
        for (int st = 0; st < WP_STATE_COUNT; st++)
            wp_rep_put_rate(f, wp_rep_ctr_rate(R, c, st), " %16.4g");
        wp_rep_put_rate(f, wp_rep_ctr_rate(R, c, -1), " %16.4g");
        fputc('\n', f);
    }
    const struct rctr *ins, *cyc;
    if (wp_rep_ipc_pair(R, &ins, &cyc)) {
        fprintf(f, "%-25s", "instructions per cycle");
        for (int st = 0; st < WP_STATE_COUNT; st++)
            wp_rep_put_rate(f, wp_rep_ratio(ins->st[st], cyc->st[st]), " %16.3f");
        wp_rep_put_rate(f, wp_rep_ratio(ins->total, cyc->total), " %16.3f");
        fprintf(f, "  (%s / %s)\n", ins->name, cyc->name);
    }
    int any = 0;
    for (size_t k = 0; k < R->nctr; k++)
        any |= R->ctr[k].nsplit > 0;
    if (!any)
        return;
    /* The sampled split above blurs each state change by up to a period;
     * these are the counts read at every MPI entry and exit. */
    fprintf(f, "\ncounted exactly outside and inside MPI (WAITPROF_COUNTERS_SPLIT: read at every MPI entry and exit)\n");
    fprintf(f, "%-18s %-6s %16s %16s %16s  %s\n", "event", "unit", "outside MPI", "inside MPI", "total", "ranks");
    for (size_t k = 0; k < R->nctr; k++) {
        const struct rctr *c = &R->ctr[k];
        if (c->nsplit == 0)
            continue;
        fprintf(f, "%-18s %-6s %16llu %16llu %16llu  %zu\n", c->name, c->unit, (unsigned long long)c->split[0],
                (unsigned long long)c->split[1], (unsigned long long)(c->split[0] + c->split[1]), c->nsplit);
    }
}

/* One member of a per-state object: the state's name (WP_STATE_COUNT:
 * "all") and v, null when negative (no time, no cycles). */
static void wp_rep_json_rate(FILE *f, int st, double v)
{
    fprintf(f, "%s\"%s\":", st ? "," : "", st < WP_STATE_COUNT ? wp_state_name(st) : "all");
    if (v < 0)
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", v);
}

void wp_rep_write_counters_json(FILE *f, const struct run *R)
{
    if (R->nctr == 0)
        return;
    fprintf(f, ",\n\"counters\":[");
    for (size_t k = 0; k < R->nctr; k++) {
        const struct rctr *c = &R->ctr[k];
        fprintf(f, "%s\n {\"event\":", k ? "," : "");
        wp_rep_jstr(f, c->name);
        fprintf(f, ",\"unit\":\"%s\",\"total\":%llu,\"states\":{", c->unit, (unsigned long long)c->total);
        for (int s = 0; s < WP_STATE_COUNT; s++)
            fprintf(f, "%s\"%s\":%llu", s ? "," : "", wp_state_name(s), (unsigned long long)c->st[s]);
        fprintf(f, "},\"per_second\":{");
        for (int st = 0; st <= WP_STATE_COUNT; st++)
            wp_rep_json_rate(f, st, wp_rep_ctr_rate(R, c, st < WP_STATE_COUNT ? st : -1));
        fprintf(f, "}");
        if (c->nsplit)
            fprintf(f, ",\"split\":{\"outside_mpi\":%llu,\"inside_mpi\":%llu,\"ranks\":%zu}",
                    (unsigned long long)c->split[0], (unsigned long long)c->split[1], c->nsplit);
        fprintf(f, ",\"ranks\":[");
        for (size_t i = 0; i < R->nr; i++) {
            fprintf(f, "%s{\"rank\":%d,\"total\":%llu", i ? "," : "", R->r[i].rank,
                    (unsigned long long)c->rank_total[i]);
            if (c->nsplit && R->r[i].ctr_split)
                fprintf(f, ",\"outside_mpi\":%llu,\"inside_mpi\":%llu", (unsigned long long)c->rank_split[i][0],
                        (unsigned long long)c->rank_split[i][1]);
            fprintf(f, "}");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]");
    const struct rctr *ins, *cyc;
    if (wp_rep_ipc_pair(R, &ins, &cyc)) {
        fprintf(f, ",\n\"ipc\":{\"instructions\":");
        wp_rep_jstr(f, ins->name);
        fprintf(f, ",\"cycles\":");
        wp_rep_jstr(f, cyc->name);
        fprintf(f, ",\"states\":{");
        for (int st = 0; st <= WP_STATE_COUNT; st++)
            wp_rep_json_rate(f, st, st < WP_STATE_COUNT ? wp_rep_ratio(ins->st[st], cyc->st[st])
                                                        : wp_rep_ratio(ins->total, cyc->total));
        fprintf(f, "}}");
    }
}

void wp_rep_write_counters_csv(FILE *f, const struct run *R)
{
    /* Column names from the event and the state, in the style of the
     * other tables' not_in_mpi_s: lower case, '_' for '-'. */
    static const char *const st[WP_STATE_COUNT] = {"not_in_mpi", "mpi_work", "mpi_stall"};
    fputs("rank", f);
    for (size_t k = 0; k < R->nctr; k++) {
        for (int s = 0; s < WP_STATE_COUNT; s++) {
            fputc(',', f);
            char col[96];
            snprintf(col, sizeof col, "%s_%s", R->ctr[k].name, st[s]);
            wp_rep_cstr(f, col);
        }
        char col[96];
        snprintf(col, sizeof col, "%s_total", R->ctr[k].name);
        fputc(',', f);
        wp_rep_cstr(f, col);
        snprintf(col, sizeof col, "%s_per_s", R->ctr[k].name);
        fputc(',', f);
        wp_rep_cstr(f, col);
        for (int x = 0; x < 2 && R->ctr[k].nsplit; x++) {
            snprintf(col, sizeof col, "%s_%s", R->ctr[k].name, x ? "inside_mpi_exact" : "outside_mpi_exact");
            fputc(',', f);
            wp_rep_cstr(f, col);
        }
    }
    fputc('\n', f);
    for (size_t i = 0; i < R->nr; i++) {
        fprintf(f, "%d", R->r[i].rank);
        for (size_t k = 0; k < R->nctr; k++) {
            for (int s = 0; s < WP_STATE_COUNT; s++)
                fprintf(f, ",%llu", (unsigned long long)R->ctr[k].rank_st[i][s]);
            fprintf(f, ",%llu", (unsigned long long)R->ctr[k].rank_total[i]);
            /* Per second of the rank's profiled time; empty without one. */
            if (R->r[i].duration_ns)
                fprintf(f, ",%.6g", (double)R->ctr[k].rank_total[i] / (R->r[i].duration_ns * 1e-9));
            else
                fputc(',', f);
            if (R->ctr[k].nsplit)
                fprintf(f, ",%llu,%llu", (unsigned long long)R->ctr[k].rank_split[i][0],
                        (unsigned long long)R->ctr[k].rank_split[i][1]);
        }
        fputc('\n', f);
    }
}
