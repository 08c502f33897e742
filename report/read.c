/* report/read.c — a run directory into the model (report/model.h).
 *
 * One pass over the ranks' files builds every reduction that fits in
 * O(ranks x functions + call paths): the merged call paths (one hash table
 * keyed by the path without its state frame, with a count per state), the
 * per-rank state counts, the per-MPI-function call statistics (events,
 * longest, shortest and average calls, totals) with the histograms grouped
 * by their max bin, and the wait-state sums per call site.  A second pass
 * over the folded files finds, per rank, the samples at the main waiting
 * call path (known only after the first pass).  A missing, truncated,
 * corrupted, foreign or newer file is named with wp_rep_problem() and the
 * rest is still read.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "report/model.h"

/* Which of a rank's files exist, one bit per file of format/format.h. */
enum {
    F_META = 1u << WP_FILE_META,
    F_FOLDED = 1u << WP_FILE_FOLDED,
    F_CALLS = 1u << WP_FILE_CALLS,
    F_WAITS = 1u << WP_FILE_WAITS,
    F_MATRIX = 1u << WP_FILE_MATRIX,
    F_CAUSES = 1u << WP_FILE_CAUSES,
    F_PATHS = 1u << WP_FILE_PATHS,
    F_FRAMES = 1u << WP_FILE_FRAMES,
    F_TIMELINE = 1u << WP_FILE_TIMELINE
};

static int rank_cmp(const void *a, const void *b)
{
    const struct rinfo *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The ranks that have a meta or folded file, sorted. */
static int list_ranks(struct run *R, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int rank, n = 0;
        if (sscanf(e->d_name, "rank.%d.%n", &rank, &n) != 1 || n == 0 || rank < 0)
            continue;
        const char *suf = e->d_name + n;
        unsigned bit = 0;
        for (int b = 0; b < WP_FILE_COUNT; b++)
            if (strcmp(suf, wp_file_suffix((enum wp_rank_file)b)) == 0)
                bit = 1u << b;
        if (bit == 0)
            continue;
        if (R->have_want && !wp_ranks_has(&R->want, rank))
            continue;
        if (R->nr == R->rcap)
            R->r = wp_rep_xrealloc(R->r, (R->rcap = R->rcap ? 2 * R->rcap : 64) * sizeof *R->r);
        memset(&R->r[R->nr], 0, sizeof *R->r);
        R->r[R->nr].rank = rank;
        R->r[R->nr++].files = bit;
    }
    closedir(d);
    /* One entry per rank with the union of its files.  A rank with only a
     * calls, waits or matrix file is listed too: its missing meta and
     * folded files are then named. */
    qsort(R->r, R->nr, sizeof *R->r, rank_cmp);
    size_t k = 0;
    for (size_t i = 0; i < R->nr; i++) {
        if (k && R->r[k - 1].rank == R->r[i].rank)
            R->r[k - 1].files |= R->r[i].files;
        else
            R->r[k++] = R->r[i];
    }
    R->nr = k;
    return 0;
}

/* A text file: no NUL byte.  A binary file is foreign. */
static int is_text(const char *buf, size_t len)
{
    return memchr(buf, '\0', len) == NULL;
}

/* The first line "# NAME V" (or "format=NAME V" for meta); the version or
 * -1 when the file is not of that format. */
long wp_rep_format_version(const char *buf, const char *prefix, const char *name)
{
    size_t pl = strlen(prefix), nl = strlen(name);
    if (strncmp(buf, prefix, pl) != 0 || strncmp(buf + pl, name, nl) != 0 || buf[pl + nl] != ' ')
        return -1;
    char *end;
    long v = strtol(buf + pl + nl + 1, &end, 10);
    return (end == buf + pl + nl + 1 || (*end != '\n' && *end != '\0')) ? -1 : v;
}

static void read_meta(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    size_t len;
    char *buf = wp_rep_slurp(path, &len);
    if (buf == NULL) {
        if (errno != ENOENT)
            wp_rep_problem(&R->c, "%s: cannot read (%s)", name, strerror(errno));
        else
            wp_rep_problem(&R->c, "%s: missing; the rank's run figures are unknown", name);
        return;
    }
    long v = is_text(buf, len) ? wp_rep_format_version(buf, "format=", wp_file_format(WP_FILE_META)) : -1;
    if (v < 0) {
        wp_rep_problem(&R->c, "%s: not a waitprof meta file (first line is not \"format=%s N\"); skipped", name,
                       wp_file_format(WP_FILE_META));
        free(buf);
        return;
    }
    if (v > wp_file_version(WP_FILE_META)) {
        wp_rep_problem(&R->c, "%s: format %s %ld is newer than this report tool reads (%d); skipped", name,
                       wp_file_format(WP_FILE_META), v, wp_file_version(WP_FILE_META));
        free(buf);
        return;
    }
    if (len == 0 || buf[len - 1] != '\n')
        wp_rep_problem(&R->c, "%s: truncated (no newline at the end); the last line is ignored", name);
    ri->has_meta = 1;
    int first = R->nextra == 0 && ri == &R->r[0];
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL)
            break;
        *nl = '\0';
        char *eq = strchr(line, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        const char *k = line, *val = eq + 1;
        if (strcmp(k, wp_meta_key(WP_MK_status)) == 0) {
            ri->partial = !wp_end_is_complete(val);
            if (strcmp(val, wp_end_status(WP_END_KILLED)) == 0)
                wp_rep_problem(&R->c, "%s: %s; only its settings are known", name,
                               val + strlen("partial: "));
        }
        else if (strcmp(k, wp_meta_key(WP_MK_size)) == 0 && atoi(val) > R->size)
            R->size = atoi(val);
        else if (strcmp(k, wp_meta_key(WP_MK_samples)) == 0)
            ri->samples = strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_dropped_full)) == 0 || strcmp(k, wp_meta_key(WP_MK_dropped_loader)) == 0)
            ri->dropped += strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_duration_ns)) == 0)
            ri->duration_ns = strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_host)) == 0)
            snprintf(ri->host, sizeof ri->host, "%s", val);
        else if (strcmp(k, wp_meta_key(WP_MK_clock_offset_ns)) == 0)
            ri->clock_offset_ns = strtoll(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_hz)) == 0)
            ri->hz = strtoull(val, NULL, 10), R->hz = R->hz ? R->hz : ri->hz;
        else if (strcmp(k, wp_meta_key(WP_MK_counters_enabled_ns)) == 0)
            ri->ctr_enabled_ns = strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_counters_running_ns)) == 0)
            ri->ctr_running_ns = strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_counters_split)) == 0 && ri->ctr_split == NULL) {
            size_t n = strlen(val) + 1;
            ri->ctr_split = wp_rep_xrealloc(NULL, n);
            memcpy(ri->ctr_split, val, n);
        }
        else if (strcmp(k, wp_meta_key(WP_MK_counters)) == 0 && !R->counters[0])
            snprintf(R->counters, sizeof R->counters, "%s", val);
        else if (strcmp(k, wp_meta_key(WP_MK_overflow_event)) == 0 && !R->overflow_event[0])
            snprintf(R->overflow_event, sizeof R->overflow_event, "%s", val);
        else if (strcmp(k, wp_meta_key(WP_MK_overflow_period)) == 0 && !R->overflow_period)
            R->overflow_period = strtoull(val, NULL, 10);
        else if (strcmp(k, wp_meta_key(WP_MK_clock)) == 0 && !R->clock[0])
            snprintf(R->clock, sizeof R->clock, "%s", val);
        else if (strcmp(k, wp_meta_key(WP_MK_mpi)) == 0 && !R->mpi[0])
            snprintf(R->mpi, sizeof R->mpi, "%s", val);
        else if (strcmp(k, wp_meta_key(WP_MK_wrappers)) == 0 && strcmp(val, "lean") == 0)
            R->lean = 1;
        else if (strcmp(k, wp_meta_key(WP_MK_source)) == 0) {
            if (!R->source[0])
                snprintf(R->source, sizeof R->source, "%s", val);
            else if (strcmp(R->source, val) != 0)
                R->mixed_source = 1;
        }
        int known = wp_meta_key_in_run(k);
        /* Keys added by other parts of waitprof (or later versions) are
         * shown as they are, from the first rank's file. */
        if (!known && first && strncmp(k, "thread.", 7) != 0) {
            R->extra = wp_rep_xrealloc(R->extra, (R->nextra + 1) * sizeof *R->extra);
            size_t n = strlen(k) + strlen(val) + 2;
            R->extra[R->nextra] = wp_rep_xrealloc(NULL, n);
            snprintf(R->extra[R->nextra++], n, "%s=%s", k, val);
        }
    }
    if (ri->partial)
        R->nmeta_partial++;
    /* Multiplexed counters (the kernel shared the PMU among more events
     * than it has counters) counted only part of the time, unscaled. */
    if (ri->ctr_enabled_ns > 0 && ri->ctr_running_ns < ri->ctr_enabled_ns - ri->ctr_enabled_ns / 1000)
        wp_rep_problem(&R->c,
                       "%s: its perf_event counters counted %.1f %% of the time they were on (the kernel "
                       "multiplexed them); their counts are not scaled: count fewer hardware events at once",
                       name, 100.0 * (double)ri->ctr_running_ns / (double)ri->ctr_enabled_ns);
    free(buf);
}

static int split_tab(char *line, char **f, int n);
static int all_digits(const char *s);

/* rank.R.timeline (format/format.h): the format line, the keys, the
 * header row, then one row per bin with samples. */
static void read_timeline(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    size_t len;
    char *buf = wp_rep_slurp(path, &len);
    if (buf == NULL)
        return;
    const char *format = wp_file_format(WP_FILE_TIMELINE);
    int version = wp_file_version(WP_FILE_TIMELINE);
    long v = is_text(buf, len) ? wp_rep_format_version(buf, "# ", format) : -1;
    if (v != version) {
        wp_rep_problem(&R->c, "%s: not a waitprof timeline file of version %d (first line is not \"# %s %d\"); "
                       "skipped", name, version, format, version);
        free(buf);
        return;
    }
    uint64_t key[WP_TK_COUNT] = {0};
    int have[WP_TK_COUNT] = {0}, header = 0;
    struct tline *t = NULL;
    size_t lineno = 0, bad = 0;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL) {
            wp_rep_problem(&R->c, "%s: truncated (the last line has no newline); that line is left out", name);
            break;
        }
        *nl = '\0';
        if (lineno++ == 0)
            continue;
        if (!header) {
            char *eq = strchr(line, '=');
            if (strcmp(line, WP_TIMELINE_HEADER) == 0) {
                header = 1;
                if (!have[WP_TK_bin_ns] || !have[WP_TK_bins] || key[WP_TK_bin_ns] == 0 ||
                    key[WP_TK_bins] > (1u << 20)) {
                    bad++;
                    break;
                }
                t = wp_rep_xrealloc(NULL, sizeof *t);
                t->origin_ns = key[WP_TK_origin_ns];
                t->bin_ns = key[WP_TK_bin_ns];
                t->period_ns = key[WP_TK_period_ns] ? key[WP_TK_period_ns] : 10000000;
                t->nbins = (uint32_t)key[WP_TK_bins];
                t->w = wp_rep_xrealloc(NULL, (t->nbins ? t->nbins : 1) * sizeof *t->w);
                t->path = wp_rep_xrealloc(NULL, (t->nbins ? t->nbins : 1) * sizeof *t->path);
                memset(t->w, 0, (t->nbins ? t->nbins : 1) * sizeof *t->w);
                memset(t->path, 0xff, (t->nbins ? t->nbins : 1) * sizeof *t->path);
                continue;
            }
            if (eq == NULL) {
                bad++;
                continue;
            }
            *eq = '\0';
            for (int k = 0; k < WP_TK_COUNT; k++)
                if (strcmp(line, wp_timeline_key((enum wp_timeline_key)k)) == 0)
                    key[k] = strtoull(eq + 1, NULL, 10), have[k] = 1;
            continue;
        }
        char *f[5];
        if (split_tab(line, f, 5) != 5 || !all_digits(f[0]) || !all_digits(f[1]) || !all_digits(f[2]) ||
            !all_digits(f[3])) {
            bad++;
            continue;
        }
        unsigned long b = strtoul(f[0], NULL, 10);
        if (b >= t->nbins) {
            bad++;
            continue;
        }
        for (int k = 0; k < WP_STATE_COUNT; k++)
            t->w[b][k] = strtoull(f[1 + k], NULL, 10);
        if (f[4][0])
            t->path[b] = (int32_t)(wp_rep_pmap_get(&R->tl_paths, f[4], strlen(f[4])) - R->tl_paths.v);
    }
    if (bad)
        wp_rep_problem(&R->c, "%s: %zu line(s) are malformed (corrupted); they are left out", name, bad);
    if (t && !header)
        t = NULL;
    ri->tl = t;
    free(buf);
}

/* Read a folded file: each line into the path table (pass 1), or only the
 * samples at the main path (pass 2, main != NULL). */
static void read_folded(struct run *R, struct rinfo *ri, const char *path, const char *name, int stall_only,
                        const struct path *main)
{
    size_t len;
    char *buf = wp_rep_slurp(path, &len);
    if (buf == NULL) {
        if (main == NULL)
            wp_rep_problem(&R->c, "%s: %s; the rank's samples are left out", name,
                    errno == ENOENT ? "missing" : strerror(errno));
        return;
    }
    if (!is_text(buf, len)) {
        if (main == NULL)
            wp_rep_problem(&R->c, "%s: not a folded-stack file (binary data); skipped", name);
        free(buf);
        return;
    }
    size_t bad = 0, first_bad = 0, lineno = 0, good = 0;
    int truncated = len > 0 && buf[len - 1] != '\n';
    size_t mainlen = main ? strlen(main->path) : 0;
    for (char *p = buf, *end = buf + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break; /* the truncated last line */
        size_t l = (size_t)(nl - p), sl;
        uint64_t count;
        lineno++;
        if (l == 0) {
            p = nl + 1;
            continue;
        }
        const char *semi = memchr(p, ';', l);
        int st = -1;
        if (wp_folded_parse(p, l, &sl, &count) == 0)
            st = wp_state_parse(p, semi && (size_t)(semi - p) < sl ? (size_t)(semi - p) : sl);
        if (st < 0) {
            if (bad++ == 0)
                first_bad = lineno;
            p = nl + 1;
            continue;
        }
        good++;
        const char *ps = semi && (size_t)(semi - p) < sl ? semi + 1 : p + sl;
        size_t pl = (size_t)(p + sl - ps);
        if (main) {
            if (pl == mainlen && memcmp(ps, main->path, pl) == 0) {
                ri->main_all += count;
                if (st == WP_STATE_STALL)
                    ri->main_stall += count;
            }
        } else {
            ri->st[st] += count;
            if (!stall_only || st == WP_STATE_STALL)
                wp_rep_pmap_get(&R->paths, ps, pl)->c[st] += count;
        }
        p = nl + 1;
    }
    if (main == NULL) {
        ri->has_folded = good > 0 || len == 0;
        if (bad && good == 0)
            wp_rep_problem(&R->c, "%s: not a folded-stack file (no line is \"state;frames count\"); skipped", name);
        else if (bad)
            wp_rep_problem(&R->c, "%s: %zu line(s) are not \"state;frames count\" (corrupted), the first is line %zu; "
                           "they are left out", name, bad, first_bad);
        if (truncated)
            wp_rep_problem(&R->c, "%s: truncated (the last line has no newline); that line is left out", name);
    }
    free(buf);
}

static struct fnagg *fn_get(struct run *R, const char *name)
{
    for (size_t i = 0; i < R->nfns; i++)
        if (strcmp(R->fns[i].name, name) == 0)
            return &R->fns[i];
    R->fns = wp_rep_xrealloc(R->fns, (R->nfns + 1) * sizeof *R->fns);
    struct fnagg *f = &R->fns[R->nfns++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->ev_min = f->shortest = f->tot_min = UINT64_MAX;
    f->avg_min = 1e300;
    return f;
}

/* Split a TSV line in place into at most n fields; the number found. */
static int split_tab(char *line, char **f, int n)
{
    int k = 0;
    f[k++] = line;
    for (char *p = line; *p && k < n; p++)
        if (*p == '\t') {
            *p = '\0';
            f[k++] = p + 1;
        }
    return k;
}

static int all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* One data line of a rank.R.calls file into the per-function aggregates;
 * 0 when it is malformed. */
static int calls_row(struct run *R, struct rinfo *ri, char *line)
{
    char *f[15];
    int n = split_tab(line, f, 15);
    int ok = n == 14 && f[0][0] == 'M';
    for (int i = 1; ok && i < 13; i++)
        ok = all_digits(f[i]);
    if (!ok)
        return 0;
    uint64_t x[13];
    for (int i = 1; i < 13; i++)
        x[i] = strtoull(f[i], NULL, 10);
    uint64_t calls = x[1], time = x[2], mn = x[3], mn_ev = x[4], mx = x[5], mx_ev = x[6], mx2 = x[7],
             mx2_ev = x[8];
    struct fnagg *a = fn_get(R, f[0]);
    a->bytes_sent += x[9], a->bytes_recv += x[10], a->req_sent += x[11], a->req_recv += x[12];
    if (R->nrf == R->rfcap)
        R->rf = wp_rep_xrealloc(R->rf, (R->rfcap = R->rfcap ? 2 * R->rfcap : 256) * sizeof *R->rf);
    R->rf[R->nrf++] = (struct rfn){ri->rank, (int)(a - R->fns), calls, time, x[9], x[10], x[11], x[12]};
    if (calls == 0)
        return 1;
    wp_rep_ranges_add(&a->ranks, ri->rank);
    a->nranks++;
    a->events += calls;
    a->total += time;
    if (calls > a->ev_max || a->nranks == 1)
        a->ev_max = calls, a->ev_max_r = ri->rank;
    if (calls < a->ev_min)
        a->ev_min = calls, a->ev_min_r = ri->rank;
    if (mx > a->longest || a->nranks == 1) {
        a->longest = mx, a->longest_r = ri->rank, a->longest_ev = mx_ev;
    }
    if (mx2_ev && (mx2 > a->second || a->second_ev == 0))
        a->second = mx2, a->second_r = ri->rank, a->second_ev = mx2_ev;
    if (mn < a->shortest)
        a->shortest = mn, a->shortest_r = ri->rank, a->shortest_ev = mn_ev;
    double avg = (double)time / (double)calls;
    if (avg > a->avg_max || a->nranks == 1)
        a->avg_max = avg, a->avg_max_r = ri->rank, a->avg_max_n = calls;
    if (avg < a->avg_min)
        a->avg_min = avg, a->avg_min_r = ri->rank, a->avg_min_n = calls;
    if (time > a->tot_max || a->nranks == 1)
        a->tot_max = time, a->tot_max_r = ri->rank, a->tot_max_n = calls;
    if (time < a->tot_min)
        a->tot_min = time, a->tot_min_r = ri->rank, a->tot_min_n = calls;
    /* The histogram: grouped with the ranks whose fullest bin is the same. */
    uint32_t h[NBINS];
    memset(h, 0, sizeof h);
    int hb = 1;
    if (strcmp(f[13], "-") != 0)
        for (char *p = f[13]; *p;) {
            char *e1, *e2;
            long b = strtol(p, &e1, 10);
            if (*e1 != ':' || b < 0 || b >= NBINS) {
                hb = 0;
                break;
            }
            unsigned long cnt = strtoul(e1 + 1, &e2, 10);
            h[b] += (uint32_t)cnt;
            p = *e2 == ',' ? e2 + 1 : e2;
            if (*e2 != ',' && *e2 != '\0') {
                hb = 0;
                break;
            }
        }
    if (!hb)
        return 0;
    int mb = 0;
    for (int b = 1; b < NBINS; b++)
        if (h[b] > h[mb])
            mb = b;
    struct hgroup *g = a->groups[mb];
    if (g == NULL) {
        g = a->groups[mb] = wp_rep_xrealloc(NULL, sizeof *g);
        memset(g, 0, sizeof *g);
        for (int b = 0; b < NBINS; b++)
            g->min[b] = UINT32_MAX;
    }
    wp_rep_ranges_add(&g->ranks, ri->rank);
    g->nranks++;
    for (int b = 0; b < NBINS; b++) {
        if (h[b] > g->max[b] || g->nranks == 1)
            g->max[b] = h[b], g->maxr[b] = ri->rank;
        if (h[b] < g->min[b])
            g->min[b] = h[b], g->minr[b] = ri->rank;
        g->sum[b] += h[b];
    }
    return 1;
}

static struct site *site_get(struct site **v, size_t *n, const char *site, const char *fn, const char *pat)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].site, site) == 0 && strcmp((*v)[i].fn, fn) == 0 && strcmp((*v)[i].pattern, pat) == 0)
            return &(*v)[i];
    *v = wp_rep_xrealloc(*v, (*n + 1) * sizeof **v);
    struct site *s = &(*v)[(*n)++];
    memset(s, 0, sizeof *s);
    s->site = strdup(site);
    snprintf(s->fn, sizeof s->fn, "%s", fn);
    snprintf(s->pattern, sizeof s->pattern, "%s", pat);
    s->last_rank = -1;
    s->wmin = UINT64_MAX;
    return s;
}

/* One data line of a rank.R.waits file into the site aggregates; 0 when it
 * is malformed. */
static int waits_row(struct run *R, struct rinfo *ri, char *line)
{
    char *f[32];
    int n = split_tab(line, f, 32);
    /* site function pattern size_class role calls time_ns min max max2 wait early plain, then
     * any columns a later writer of version 1 added at the end (completes, ...): the format
     * grows only there, so the first 13 keep their meaning. */
    if (n < 13 || !all_digits(f[5]) || !all_digits(f[6]) || !all_digits(f[10]))
        return 0;
    uint64_t calls = strtoull(f[5], NULL, 10), t = strtoull(f[6], NULL, 10), w = strtoull(f[10], NULL, 10);
    /* Columns 15 and 16 (after completes): method and matched.  A row
     * without them comes from a version that only estimated. */
    int measured = n >= 16 && strcmp(f[14], "measured") == 0 && all_digits(f[15]);
    int by_source = n >= 15 && strcmp(f[14], "source") == 0;
    uint64_t matched = measured ? strtoull(f[15], NULL, 10) : 0;
    /* Per (site, function, pattern) for the wait states, and per (site,
     * function) for the imbalance of the time in the call. */
    for (int k = 0; k < 2; k++) {
        struct site *s = k ? site_get(&R->isites, &R->nisites, f[0], f[1], "")
                           : site_get(&R->sites, &R->nsites, f[0], f[1], f[2]);
        if (s->last_rank != ri->rank) {
            s->last_rank = ri->rank;
            s->cur_wait = s->cur_time = 0;
            s->nranks++;
        }
        s->calls += calls, s->time_ns += t, s->wait_ns += w;
        s->cur_wait += w, s->cur_time += t;
        if (measured)
            s->matched += matched;
        else if (by_source)
            s->src_calls += calls;
        else
            s->est_calls += calls;
    }
    return 1;
}

/* This rank's figure per site, once all its rows are in (a site may have
 * rows per size class). */
static void waits_rank_done(struct run *R, struct rinfo *ri)
{
    for (size_t i = 0; i < R->nsites + R->nisites; i++) {
        struct site *s = i < R->nsites ? &R->sites[i] : &R->isites[i - R->nsites];
        if (s->last_rank != ri->rank)
            continue;
        if (s->cur_wait > s->wmax || s->nranks == 1)
            s->wmax = s->cur_wait, s->wmax_r = ri->rank;
        if (s->cur_wait < s->wmin)
            s->wmin = s->cur_wait, s->wmin_r = ri->rank;
        if (s->cur_time > s->tmax || s->nranks == 1)
            s->tmax = s->cur_time, s->tmax_r = ri->rank;
    }
}

/* A TSV file of one rank (rank.R.calls, rank.R.waits): its first line must be
 * "# <format> 1"; from the third line on (after the header), each line is
 * handed to row(), which returns 0 for a malformed one; lines starting with
 * '#' are skipped when comments is set.  A missing file is not a problem
 * (older runs, ranks that ended early); a foreign, newer, truncated or partly
 * malformed one is reported once.  Returns 1 when the file was read. */
static int read_rank_tsv(struct run *R, struct rinfo *ri, const char *path, const char *name,
                         enum wp_rank_file file, int comments, int (*row)(struct run *, struct rinfo *, char *))
{
    const char *format = wp_file_format(file), *what = wp_file_suffix(file);
    int version = wp_file_version(file);
    size_t len;
    char *buf = wp_rep_slurp(path, &len);
    if (buf == NULL)
        return 0;
    long v = is_text(buf, len) ? wp_rep_format_version(buf, "# ", format) : -1;
    if (v != version) {
        if (v > version)
            wp_rep_problem(&R->c, "%s: format %s %ld is newer than this report tool reads (%d); skipped", name,
                           format, v, version);
        else
            wp_rep_problem(&R->c, "%s: not a waitprof %s file (first line is not \"# %s %d\"); skipped", name,
                           what, format, version);
        free(buf);
        return 0;
    }
    size_t lineno = 0, bad = 0, first_bad = 0;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL) {
            wp_rep_problem(&R->c, "%s: truncated (the last line has no newline); that line is left out", name);
            break;
        }
        *nl = '\0';
        lineno++;
        if (lineno <= 2 || (comments && line[0] == '#'))
            continue; /* format line, header */
        if (!row(R, ri, line) && bad++ == 0)
            first_bad = lineno;
    }
    if (bad)
        wp_rep_problem(&R->c, "%s: %zu line(s) are malformed (corrupted), the first is line %zu; they are left out",
                name, bad, first_bad);
    free(buf);
    return 1;
}

static void read_calls(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    read_rank_tsv(R, ri, path, name, WP_FILE_CALLS, 0, calls_row);
}

static void read_waits(struct run *R, struct rinfo *ri, const char *path, const char *name)
{
    if (read_rank_tsv(R, ri, path, name, WP_FILE_WAITS, 1, waits_row))
        waits_rank_done(R, ri);
}

/* --- causes (rank.R.causes, rank.R.paths) ----------------------------------------------- */

static struct cause *cause_get(struct run *R, int delayer, uint64_t hash)
{
    for (size_t i = 0; i < R->ncauses; i++)
        if (R->causes[i].delayer == delayer && R->causes[i].hash == hash)
            return &R->causes[i];
    R->causes = wp_rep_xrealloc(R->causes, (R->ncauses + 1) * sizeof *R->causes);
    struct cause *c = &R->causes[R->ncauses++];
    memset(c, 0, sizeof *c);
    c->delayer = delayer;
    c->hash = hash;
    return c;
}

static void cause_add_wait(struct cause *c, int rank, const char *site, const char *fn, const char *pat, double w,
                           int propagated)
{
    if (propagated)
        c->long_s += w;
    else
        c->short_s += w;
    for (size_t i = 0; i < c->nw; i++)
        if (c->w[i].rank == rank && strcmp(c->w[i].site, site) == 0 && strcmp(c->w[i].fn, fn) == 0 &&
            strcmp(c->w[i].pattern, pat) == 0 && c->w[i].propagated == propagated) {
            c->w[i].wait_s += w;
            return;
        }
    c->w = wp_rep_xrealloc(c->w, (c->nw + 1) * sizeof *c->w);
    struct cwait *x = &c->w[c->nw++];
    memset(x, 0, sizeof *x);
    x->rank = rank;
    x->site = strdup(site);
    snprintf(x->fn, sizeof x->fn, "%s", fn);
    snprintf(x->pattern, sizeof x->pattern, "%s", pat);
    x->wait_s = w;
    x->propagated = propagated;
}

/* site function pattern delayer cause instances wait_ns [kind] (kind:
 * direct or propagated; files without it hold direct waits only) */
static int causes_row(struct run *R, struct rinfo *ri, char *line)
{
    char *f[16];
    int n = split_tab(line, f, 16);
    int propagated = n >= 8 && strcmp(f[7], "propagated") == 0;
    if (n < 7 || !all_digits(f[5]) || !all_digits(f[6]))
        return 0;
    char *end;
    long d = strtol(f[3], &end, 10);
    if (*end || d < 0)
        return 0;
    uint64_t hash = strtoull(f[4], &end, 16);
    if (*end)
        return 0;
    cause_add_wait(cause_get(R, (int)d, hash), ri->rank, f[0], f[1], f[2], strtoull(f[6], NULL, 10) * 1e-9,
                   propagated);
    return 1;
}

/* cause path */
/* The rank whose rank.R.paths is being read (read_rank_tsv's row has no
 * argument for it). */
static int paths_rank;
static int paths_row(struct run *R, struct rinfo *ri, char *line)
{
    (void)ri;
    char *f[4];
    if (split_tab(line, f, 4) < 2)
        return 0;
    char *end;
    uint64_t hash = strtoull(f[0], &end, 16);
    if (*end)
        return 0;
    for (size_t i = 0; i < R->ncauses; i++)
        if (R->causes[i].delayer == paths_rank && R->causes[i].hash == hash && R->causes[i].path == NULL)
            R->causes[i].path = strdup(f[1]);
    return 1;
}

static int cause_cmp(const void *a, const void *b)
{
    const struct cause *x = a, *y = b;
    double sx = x->short_s + x->long_s, sy = y->short_s + y->long_s;
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return (x->delayer > y->delayer) - (x->delayer < y->delayer);
}

static int cwait_cmp(const void *a, const void *b)
{
    const struct cwait *x = a, *y = b;
    return x->wait_s < y->wait_s ? 1 : x->wait_s > y->wait_s ? -1 : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Every rank's causes, named by the delaying ranks' paths; causes with the
 * same delayer and path (different leaf addresses in one function) are
 * merged. */
static void load_causes(struct run *R, const char *dir)
{
    char path[4400];
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].files & F_CAUSES) {
            snprintf(path, sizeof path, "%s/rank.%d.%s", dir, R->r[i].rank, wp_file_suffix(WP_FILE_CAUSES));
            read_rank_tsv(R, &R->r[i], path, path, WP_FILE_CAUSES, 1, causes_row);
        }
    for (size_t i = 0; i < R->nr; i++)
        if (R->r[i].files & F_PATHS) {
            paths_rank = R->r[i].rank;
            snprintf(path, sizeof path, "%s/rank.%d.%s", dir, R->r[i].rank, wp_file_suffix(WP_FILE_PATHS));
            read_rank_tsv(R, &R->r[i], path, path, WP_FILE_PATHS, 1, paths_row);
        }
    for (size_t i = 0; i < R->ncauses; i++) {
        struct cause *c = &R->causes[i];
        for (size_t j = 0; j < i; j++) {
            struct cause *d = &R->causes[j];
            if (d->nw == 0 || d->delayer != c->delayer || !d->path || !c->path || strcmp(d->path, c->path))
                continue;
            for (size_t k = 0; k < c->nw; k++) {
                cause_add_wait(d, c->w[k].rank, c->w[k].site, c->w[k].fn, c->w[k].pattern, c->w[k].wait_s,
                               c->w[k].propagated);
                free(c->w[k].site);
            }
            free(c->w);
            c->w = NULL;
            c->nw = 0;
            c->short_s = c->long_s = 0;
            break;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < R->ncauses; i++) {
        if (R->causes[i].nw)
            R->causes[k++] = R->causes[i];
        else
            free(R->causes[i].path);
    }
    R->ncauses = k;
    qsort(R->causes, R->ncauses, sizeof *R->causes, cause_cmp);
    for (size_t i = 0; i < R->ncauses; i++)
        qsort(R->causes[i].w, R->causes[i].nw, sizeof *R->causes[i].w, cwait_cmp);
}

/* frame, inlined (0 or 1), file ("" when unknown), line.  The first rank
 * that gives a frame a file names it: the same function's definition on
 * every rank, unless two functions share a name (C static functions in
 * different files), where the lowest rank's is kept. */
static int frames_row(struct run *R, struct rinfo *ri, char *line)
{
    (void)ri;
    char *f[5];
    if (split_tab(line, f, 5) != 4 || f[0][0] == '\0' || (strcmp(f[1], "0") && strcmp(f[1], "1")))
        return 0;
    char *end;
    long ln = strtol(f[3], &end, 10);
    if (*end || ln < 0 || ln > INT_MAX)
        return 0;
    size_t before = R->frames.n;
    struct path *p = wp_rep_pmap_get(&R->frames, f[0], strlen(f[0]));
    size_t i = (size_t)(p - R->frames.v);
    if (R->frames.n > before) {
        R->floc = wp_rep_xrealloc(R->floc, R->frames.cap * sizeof *R->floc);
        R->floc[i] = (struct floc){NULL, 0, f[1][0] == '1'};
    }
    if (R->floc[i].file == NULL && f[2][0]) {
        R->floc[i].file = strdup(f[2]);
        R->floc[i].line = (int)ln;
    }
    return 1;
}

static void load(struct run *R, const char *dir, const struct wp_report_opts *o)
{
    char path[4400], name[4400];
    for (size_t i = 0; i < R->nr; i++) {
        struct rinfo *ri = &R->r[i];
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_META));
        snprintf(name, sizeof name, "%s", path);
        read_meta(R, ri, path, name);
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_FOLDED));
        snprintf(name, sizeof name, "%s", path);
        read_folded(R, ri, path, name, o->stall_only, NULL);
        /* Older runs and ranks that ended early have no calls or waits
         * file: only the files the directory lists are opened. */
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_CALLS));
        snprintf(name, sizeof name, "%s", path);
        if (ri->files & F_CALLS)
            read_calls(R, ri, path, name);
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_WAITS));
        snprintf(name, sizeof name, "%s", path);
        if (ri->files & F_WAITS)
            read_waits(R, ri, path, name);
        if (ri->files & F_MATRIX)
            R->have_matrix = 1;
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_FRAMES));
        if (ri->files & F_FRAMES)
            read_rank_tsv(R, ri, path, path, WP_FILE_FRAMES, 0, frames_row);
        snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_TIMELINE));
        if (ri->files & F_TIMELINE)
            read_timeline(R, ri, path, path);
        if (ri->duration_ns > R->duration_max)
            R->duration_max = ri->duration_ns;
        R->samples += ri->samples ? ri->samples : ri->st[0] + ri->st[1] + ri->st[2];
        R->dropped += ri->dropped;
    }
    load_causes(R, dir);
    /* The main waiting call path, then who causes it: the rank that stalls
     * least there and, among those, computes most. */
    R->main = NULL;
    R->cause_rank = -1;
    for (size_t i = 0; i < R->paths.n; i++) {
        const struct path *p = &R->paths.v[i];
        uint64_t st = p->c[WP_STATE_STALL], best = R->main ? R->main->c[WP_STATE_STALL] : 0;
        if (st && (R->main == NULL || st > best || (st == best && strcmp(p->path, R->main->path) < 0)))
            R->main = p;
    }
    if (R->main) {
        double best_stall = 2, best_nim = -1;
        for (size_t i = 0; i < R->nr; i++) {
            struct rinfo *ri = &R->r[i];
            if (!ri->has_folded)
                continue;
            snprintf(path, sizeof path, "%s/rank.%d.%s", dir, ri->rank, wp_file_suffix(WP_FILE_FOLDED));
            read_folded(R, ri, path, path, 0, R->main);
            uint64_t all = ri->st[0] + ri->st[1] + ri->st[2];
            double s = all ? (double)ri->main_stall / (double)all : 1, nim = all ? (double)ri->st[0] / all : 0;
            if (s < best_stall - 1e-12 || (s < best_stall + 1e-12 && nim > best_nim))
                best_stall = s, best_nim = nim, R->cause_rank = ri->rank;
        }
    }
}

/* --- opening and freeing a run ------------------------------------------------------------ */

static int site_cmp(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns < y->wait_ns ? 1 : -1;
    return strcmp(x->site, y->site);
}

/* Largest imbalance (max over ranks minus average) first; qsort has no
 * context argument, so the number of ranks is passed through this. */
static size_t imb_nr = 1;

static int imb_cmp(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    double ix = (double)x->tmax - (double)x->time_ns / (double)imb_nr;
    double iy = (double)y->tmax - (double)y->time_ns / (double)imb_nr;
    if (ix != iy)
        return ix < iy ? 1 : -1;
    return site_cmp(a, b);
}

void wp_rep_run_free(struct run *R)
{
    wp_rep_pmap_free(&R->paths);
    for (size_t i = 0; i < R->frames.n; i++)
        free(R->floc[i].file);
    free(R->floc);
    wp_rep_pmap_free(&R->frames);
    for (size_t i = 0; i < R->nfns; i++) {
        free(R->fns[i].ranks.lo);
        free(R->fns[i].ranks.hi);
        for (int b = 0; b < NBINS; b++)
            if (R->fns[i].groups[b]) {
                free(R->fns[i].groups[b]->ranks.lo);
                free(R->fns[i].groups[b]->ranks.hi);
                free(R->fns[i].groups[b]);
            }
    }
    free(R->fns);
    for (size_t i = 0; i < R->nsites; i++)
        free(R->sites[i].site);
    free(R->sites);
    for (size_t i = 0; i < R->ncauses; i++) {
        for (size_t k = 0; k < R->causes[i].nw; k++)
            free(R->causes[i].w[k].site);
        free(R->causes[i].w);
        free(R->causes[i].path);
    }
    free(R->causes);
    for (size_t i = 0; i < R->nisites; i++)
        free(R->isites[i].site);
    free(R->isites);
    free(R->rf);
    for (size_t i = 0; i < R->nr; i++) {
        if (R->r[i].tl) {
            free(R->r[i].tl->w);
            free(R->r[i].tl->path);
            free(R->r[i].tl);
        }
        free(R->r[i].ctr_split);
    }
    wp_rep_pmap_free(&R->tl_paths);
    wp_rep_counters_free(R);
    free(R->r);
    for (size_t i = 0; i < R->nextra; i++)
        free(R->extra[i]);
    free(R->extra);
    for (size_t i = 0; i < R->c.nproblems; i++)
        free(R->c.problems[i]);
    free(R->c.problems);
}

int wp_rep_open_run(struct run *R, const char *dir, const struct wp_report_opts *o, FILE *errs)
{
    memset(R, 0, sizeof *R);
    R->c.dir = dir;
    R->c.errs = errs;
    if (o->ranks) {
        char why[128];
        if (wp_ranks_parse(o->ranks, &R->want, why, sizeof why) != 0 || R->want.kind == WP_RANKS_RANDOM) {
            if (errs)
                fprintf(errs, "waitprof report: --ranks %s: give ranks and ranges, e.g. 0-3,7\n", o->ranks);
            return -1;
        }
        R->have_want = 1;
    }
    if (list_ranks(R, dir) != 0) {
        if (errs)
            fprintf(errs, "waitprof report: cannot read the directory %s (%s)\n", dir, strerror(errno));
        return -1;
    }
    if (R->nr == 0) {
        if (errs)
            fprintf(errs, "waitprof report: %s holds no rank.R.meta or rank.R.folded file%s\n", dir,
                    o->ranks ? " of the selected ranks" : "");
        return -1;
    }
    load(R, dir, o);
    qsort(R->sites, R->nsites, sizeof *R->sites, site_cmp);
    imb_nr = R->nr ? R->nr : 1;
    qsort(R->isites, R->nisites, sizeof *R->isites, imb_cmp);
    if (R->size == 0)
        R->size = R->r[R->nr - 1].rank + 1;
    return 0;
}
