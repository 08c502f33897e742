/* report/json.c — report.json: the text report's figures and the per-rank
 * values (schema doc/report.schema.json).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"

#define JSON_SCHEMA_VERSION 2

static void json_ranges(FILE *f, const struct ranges *r)
{
    fputc('"', f);
    wp_rep_ranges_print(f, r);
    fputc('"', f);
}

/* Each frame of the paths named above (main_wait, causes,
 * top_stall_paths), once, with where its function is defined (rank.R.frames):
 * a tool can open the source of any frame it shows. */
static void frames_of(struct pmap *seen, const char *path)
{
    for (const char *p = path; p && *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len)
            wp_rep_pmap_get(seen, p, len);
        p = end ? end + 1 : NULL;
    }
}

static void write_frames(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    struct pmap seen = {0};
    if (R->main)
        frames_of(&seen, R->main->path);
    for (size_t i = 0; i < R->ncauses; i++)
        frames_of(&seen, R->causes[i].path);
    size_t n;
    const struct path **v = wp_rep_top_stall(R, &n);
    for (size_t i = 0; i < n && i < (size_t)o->top; i++)
        frames_of(&seen, v[i]->path);
    free(v);
    int first = 1;
    for (size_t i = 0; i < seen.n; i++) {
        const char *name = seen.v[i].path;
        const struct path *known = wp_rep_pmap_find(&R->frames, name, strlen(name));
        /* A name rank.R.frames does not list (an MPI function, a frame
         * named module+offset, a run without the files) is left out. */
        if (known == NULL)
            continue;
        const struct floc *l = &R->floc[known - R->frames.v];
        fprintf(f, "%s\n ", first ? "" : ",");
        first = 0;
        wp_rep_jstr(f, name);
        fprintf(f, ":{\"inlined\":%s,\"file\":", l->inlined ? "true" : "false");
        if (l->file)
            wp_rep_jstr(f, l->file);
        else
            fputs("null", f);
        fprintf(f, ",\"line\":%d}", l->line);
    }
    wp_rep_pmap_free(&seen);
}

/* The ranks' timelines on one grid of at most 1024 bins (report/model.h,
 * struct tgrid), null when no rank wrote one: seconds per bin and state,
 * and per bin an index into "paths" (the call path most of the bin's
 * MPI-Stall samples share), -1 for none. */
static void json_timeline(FILE *f, const struct run *R)
{
    struct tgrid g;
    wp_rep_timeline(R, 1024, &g);
    if (g.nrows == 0) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"origin_ns\":%llu,\"bin_s\":%.9f,\"bins\":%u,\"paths\":[", (unsigned long long)g.origin_ns,
            g.bin_ns * 1e-9, g.nbins);
    for (size_t i = 0; i < R->tl_paths.n; i++) {
        fputs(i ? "," : "", f);
        wp_rep_jstr(f, R->tl_paths.v[i].path);
    }
    fputs("],\"ranks\":[", f);
    static const char *const key[WP_STATE_COUNT] = {"not_in_mpi", "mpi_work", "mpi_stall"};
    for (size_t k = 0; k < g.nrows; k++) {
        const struct rinfo *ri = &R->r[g.row[k]];
        fprintf(f, "%s\n {\"rank\":%d,\"status\":\"%s\",\"start_s\":%.6f", k ? "," : "", ri->rank,
                !ri->has_meta ? "unknown" : ri->partial ? "partial" : "complete", g.start_s[k]);
        for (int st = 0; st < WP_STATE_COUNT; st++) {
            fprintf(f, ",\"%s\":[", key[st]);
            for (uint32_t b = 0; b < g.nbins; b++)
                fprintf(f, "%s%.4f", b ? "," : "", g.s[k * g.nbins + b][st]);
            fputc(']', f);
        }
        fputs(",\"stall_path\":[", f);
        for (uint32_t b = 0; b < g.nbins; b++)
            fprintf(f, "%s%d", b ? "," : "", (int)g.path[k * g.nbins + b]);
        fputs("]}", f);
    }
    fputs("]}", f);
    wp_rep_tgrid_free(&g);
}

void wp_rep_write_json(FILE *f, const struct run *R, const struct wp_report_opts *o)
{
    uint64_t all = wp_rep_total_samples(R, 0) + wp_rep_total_samples(R, 1) + wp_rep_total_samples(R, 2);
    fprintf(f, "{\"format\":\"waitprof-report-json\",\"schema_version\":%d,\n\"directory\":", JSON_SCHEMA_VERSION);
    wp_rep_jstr(f, R->c.dir);
    fprintf(f, ",\n\"filters\":{\"ranks\":");
    if (o->ranks)
        wp_rep_jstr(f, o->ranks);
    else
        fputs("null", f);
    fprintf(f, ",\"state\":\"%s\",\"top\":%d},\n", o->stall_only ? "stall" : "all", o->top);
    /* The CSVs begin with their header row, so their format and version
     * are told here, with what each one holds. */
    fputs("\"csv_files\":{", f);
    for (int i = 0, n = 0; i < CSV_N; i++) {
        if (!wp_rep_csv_written(R, i))
            continue;
        fputs(n++ ? ",\n " : "\n ", f);
        wp_rep_jstr(f, wp_rep_csv_files[i].name);
        fprintf(f, ":{\"format\":\"%s\",\"version\":%d,\"content\":", WP_FORMAT_CSV_NAME, WP_FORMAT_CSV_VERSION);
        wp_rep_jstr(f, wp_rep_csv_files[i].content);
        fputc('}', f);
    }
    fputs("},\n", f);
    fprintf(f, "\"run\":{\"ranks\":%d,\"sampled_ranks\":%zu,\"duration_s\":%.9f,\"source\":", R->size, R->nr,
            R->duration_max * 1e-9);
    wp_rep_jstr(f, R->source[0] ? R->source : "unknown");
    fprintf(f, ",\"hz\":%llu,\"clock\":", (unsigned long long)R->hz);
    wp_rep_jstr(f, R->clock[0] ? R->clock : "wall");
    fprintf(f, ",\"samples\":%llu,\"dropped\":%llu,\"partial_ranks\":%d,\"mpi\":", (unsigned long long)R->samples,
            (unsigned long long)R->dropped, R->nmeta_partial);
    wp_rep_jstr(f, R->mpi);
    fprintf(f, ",\"meta_extra\":{");
    for (size_t i = 0; i < R->nextra; i++) {
        char *eq = strchr(R->extra[i], '=');
        *eq = '\0';
        fputs(i ? "," : "", f);
        wp_rep_jstr(f, R->extra[i]);
        fputc(':', f);
        wp_rep_jstr(f, eq + 1);
        *eq = '=';
    }
    fprintf(f, "}},\n\"states\":[");
    for (int s = 0; s < WP_STATE_COUNT; s++) {
        struct mm m;
        wp_rep_state_mm(R, s, &m);
        double secs = wp_rep_state_s(R, s);
        fprintf(f, "%s{\"state\":\"%s\",\"samples\":%llu,\"seconds\":%.6f,\"seconds_per_rank\":%.6f,"
                   "\"share\":%.6f,\"min\":%.6f,\"min_rank\":%d,\"avg\":%.6f,\"max\":%.6f,\"max_rank\":%d}",
                s ? "," : "", wp_state_name(s), (unsigned long long)wp_rep_total_samples(R, s), secs,
                R->nr ? secs / (double)R->nr : 0, wp_rep_pct(wp_rep_total_samples(R, s), all) / 100, m.min / 100,
                m.rmin, m.n ? m.sum / (double)m.n / 100 : 0, m.max / 100, m.rmax);
    }
    fprintf(f, "],\n\"main_wait\":");
    if (R->main) {
        fprintf(f, "{\"path\":");
        wp_rep_jstr(f, R->main->path);
        fprintf(f, ",\"stall_samples\":%llu,\"cause_rank\":%d}", (unsigned long long)R->main->c[WP_STATE_STALL],
                R->cause_rank);
    } else {
        fputs("null", f);
    }
    /* Who caused the measured waits (match/match.h, match/exchange.c):
     * directly (short-term) and through ranks that waited (long-term). */
    fprintf(f, ",\n\"causes\":[");
    for (size_t i = 0; i < R->ncauses; i++) {
        const struct cause *c = &R->causes[i];
        fprintf(f, "%s{\"rank\":%d,\"path\":", i ? ",\n" : "", c->delayer);
        if (c->path)
            wp_rep_jstr(f, c->path);
        else
            fputs("null", f);
        fprintf(f, ",\"short_term_s\":%.9f,\"long_term_s\":%.9f,\"waits\":[", c->short_s, c->long_s);
        for (size_t k = 0; k < c->nw; k++) {
            fprintf(f, "%s{\"rank\":%d,\"site\":", k ? "," : "", c->w[k].rank);
            wp_rep_jstr(f, c->w[k].site);
            fprintf(f, ",\"function\":");
            wp_rep_jstr(f, c->w[k].fn);
            fprintf(f, ",\"pattern\":");
            wp_rep_jstr(f, c->w[k].pattern);
            fprintf(f, ",\"wait_s\":%.9f,\"kind\":\"%s\"}", c->w[k].wait_s,
                    c->w[k].propagated ? "propagated" : "direct");
        }
        fputs("]}", f);
    }
    fprintf(f, "],\n\"top_stall_paths\":[");
    size_t n;
    const struct path **v = wp_rep_top_stall(R, &n);
    for (size_t i = 0; i < n && i < (size_t)o->top; i++) {
        fprintf(f, "%s\n {\"path\":", i ? "," : "");
        wp_rep_jstr(f, v[i]->path);
        fprintf(f, ",\"stall\":%llu,\"work\":%llu,\"not_in_mpi\":%llu}", (unsigned long long)v[i]->c[WP_STATE_STALL],
                (unsigned long long)v[i]->c[WP_STATE_WORK], (unsigned long long)v[i]->c[WP_STATE_NOT_IN_MPI]);
    }
    free(v);
    fprintf(f, "],\n\"wait_states\":[");
    size_t nr = R->nr ? R->nr : 1;
    for (size_t i = 0, k = 0; i < R->nsites; i++) {
        const struct site *s = &R->sites[i];
        int allr = s->nranks >= R->nr;
        fprintf(f, "%s\n {\"site\":", k++ ? "," : "");
        wp_rep_jstr(f, s->site);
        fprintf(f, ",\"function\":");
        wp_rep_jstr(f, s->fn);
        fprintf(f, ",\"pattern\":");
        wp_rep_jstr(f, s->pattern);
        fprintf(f, ",\"calls\":%llu,\"time_s\":%.9f,\"wait_s\":%.9f,\"wait_min_s\":%.9f,\"wait_min_rank\":%d,"
                   "\"wait_avg_s\":%.9f,\"wait_max_s\":%.9f,\"wait_max_rank\":%d,\"time_max_s\":%.9f,"
                   "\"time_max_rank\":%d,\"imbalance_s\":%.9f}",
                (unsigned long long)s->calls, s->time_ns * 1e-9, s->wait_ns * 1e-9, allr ? s->wmin * 1e-9 : 0,
                allr ? s->wmin_r : -1, s->wait_ns * 1e-9 / (double)nr, s->wmax * 1e-9, s->wmax_r, s->tmax * 1e-9,
                s->tmax_r, s->tmax * 1e-9 - s->time_ns * 1e-9 / (double)nr);
    }
    fprintf(f, "],\n\"imbalance\":[");
    for (size_t i = 0; i < R->nisites; i++) {
        const struct site *s = &R->isites[i];
        fprintf(f, "%s\n {\"site\":", i ? "," : "");
        wp_rep_jstr(f, s->site);
        fprintf(f, ",\"function\":");
        wp_rep_jstr(f, s->fn);
        fprintf(f, ",\"time_s\":%.9f,\"time_max_s\":%.9f,\"time_max_rank\":%d,\"time_avg_s\":%.9f,"
                   "\"imbalance_s\":%.9f}",
                s->time_ns * 1e-9, s->tmax * 1e-9, s->tmax_r, s->time_ns * 1e-9 / (double)nr,
                s->tmax * 1e-9 - s->time_ns * 1e-9 / (double)nr);
    }
    fprintf(f, "],\n\"functions\":[");
    for (size_t i = 0; i < R->nfns; i++) {
        const struct fnagg *a = &R->fns[i];
        fprintf(f, "%s\n {\"function\":", i ? "," : "");
        wp_rep_jstr(f, a->name);
        fprintf(f, ",\"ranks\":");
        json_ranges(f, &a->ranks);
        fprintf(f, ",\"nranks\":%llu,\"events\":%llu,\"events_max\":%llu,\"events_max_rank\":%d,"
                   "\"events_min\":%llu,\"events_min_rank\":%d,"
                   "\"longest_s\":%.9f,\"longest_rank\":%d,\"longest_event\":%llu,"
                   "\"second_longest_s\":%.9f,\"second_longest_rank\":%d,\"second_longest_event\":%llu,"
                   "\"shortest_s\":%.9f,\"shortest_rank\":%d,\"shortest_event\":%llu,"
                   "\"total_s\":%.9f,\"total_max_s\":%.9f,\"total_max_rank\":%d,\"total_min_s\":%.9f,"
                   "\"total_min_rank\":%d,\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"requests_sent\":%llu,"
                   "\"requests_recv\":%llu,\"histograms\":[",
                (unsigned long long)a->nranks, (unsigned long long)a->events, (unsigned long long)a->ev_max,
                a->ev_max_r, (unsigned long long)(a->nranks ? a->ev_min : 0), a->ev_min_r, a->longest * 1e-9,
                a->longest_r, (unsigned long long)a->longest_ev, a->second * 1e-9, a->second_r,
                (unsigned long long)a->second_ev, (a->nranks ? a->shortest : 0) * 1e-9, a->shortest_r,
                (unsigned long long)a->shortest_ev, a->total * 1e-9, a->tot_max * 1e-9, a->tot_max_r,
                (a->nranks ? a->tot_min : 0) * 1e-9, a->tot_min_r, (unsigned long long)a->bytes_sent,
                (unsigned long long)a->bytes_recv, (unsigned long long)a->req_sent,
                (unsigned long long)a->req_recv);
        int first = 1;
        for (int mb = NBINS - 1; mb >= 0; mb--) {
            const struct hgroup *g = a->groups[mb];
            if (g == NULL)
                continue;
            fprintf(f, "%s{\"ranks\":", first ? "" : ",");
            first = 0;
            json_ranges(f, &g->ranks);
            fprintf(f, ",\"bins\":[");
            int fb = 1;
            for (int b = NBINS - 1; b >= 0; b--) {
                if (g->max[b] == 0)
                    continue;
                fprintf(f, "%s{\"low_us\":%llu,\"max\":%u,\"max_rank\":%d,\"min\":%u,\"min_rank\":%d,\"avg\":%.3f}",
                        fb ? "" : ",", (unsigned long long)wp_rep_bin_low(b), g->max[b], g->maxr[b], g->min[b],
                        g->minr[b], (double)g->sum[b] / (double)g->nranks);
                fb = 0;
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"ranks\":[");
    size_t j = 0;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rinfo *ri = &R->r[i];
        fprintf(f, "%s\n {\"rank\":%d,\"status\":\"%s\",\"samples\":%llu,\"not_in_mpi\":%llu,\"work\":%llu,"
                   "\"stall\":%llu,\"duration_s\":%.9f,\"main_wait_stall\":%llu,\"functions\":{",
                i ? "," : "", ri->rank, !ri->has_meta ? "unknown" : ri->partial ? "partial" : "complete",
                (unsigned long long)(ri->st[0] + ri->st[1] + ri->st[2]),
                (unsigned long long)ri->st[WP_STATE_NOT_IN_MPI], (unsigned long long)ri->st[WP_STATE_WORK],
                (unsigned long long)ri->st[WP_STATE_STALL], ri->duration_ns * 1e-9,
                (unsigned long long)ri->main_stall);
        /* R->rf is in rank order: the rows of this rank follow each other. */
        int first = 1;
        for (; j < R->nrf && R->rf[j].rank <= ri->rank; j++) {
            if (R->rf[j].rank != ri->rank)
                continue;
            const struct rfn *x = &R->rf[j];
            fprintf(f, "%s", first ? "" : ",");
            first = 0;
            wp_rep_jstr(f, R->fns[x->fn].name);
            fprintf(f, ":{\"calls\":%llu,\"time_s\":%.9f,\"bytes_sent\":%llu,\"bytes_recv\":%llu,"
                       "\"requests_sent\":%llu,\"requests_recv\":%llu}",
                    (unsigned long long)x->calls, x->time_ns * 1e-9, (unsigned long long)x->bytes_sent,
                    (unsigned long long)x->bytes_recv, (unsigned long long)x->req_sent,
                    (unsigned long long)x->req_recv);
        }
        fputs("}}", f);
    }
    fprintf(f, "],\n\"frames\":{");
    write_frames(f, R, o);
    fprintf(f, "},\n\"timeline\":");
    json_timeline(f, R);
    wp_rep_write_counters_json(f, R);
    fprintf(f, ",\n\"problems\":[");
    for (size_t i = 0; i < R->c.nproblems; i++) {
        fputs(i ? "," : "", f);
        wp_rep_jstr(f, R->c.problems[i]);
    }
    fprintf(f, "]}\n");
}
