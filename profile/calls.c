/* profile/calls.c — see profile/calls.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "format/format.h"
#include "fallback/stats.h"
#include "wrap/traffic.h"
#include "profile/calls.h"
#include "state/clock.h"
#include "state/functions.h"

/* What the report shows per function: timing summed from the estimator's
 * categories when the file is written, traffic counted by the wrappers. */
struct wp_fncalls {
    uint64_t count, sum, min, max, max2; /* ticks */
    uint64_t min_ev, max_ev, max2_ev;    /* event numbers, from 1; 0: none */
    struct wp_traffic tr;
    uint32_t hist[WP_HIST_BINS];
};

static void wp_merge(struct wp_fncalls *into, const struct wp_fncalls *c)
{
    if (c->count) {
        /* Event numbers are per thread; the longest calls of the thread
         * that had them keep theirs. */
        if (into->count == 0 || c->min < into->min)
            into->min = c->min, into->min_ev = c->min_ev;
        uint64_t v[4] = {into->max, into->max2, c->max, c->max2};
        uint64_t e[4] = {into->count ? into->max_ev : 0, into->count ? into->max2_ev : 0, c->max_ev, c->max2_ev};
        int a = -1, b = -1;
        for (int i = 0; i < 4; i++) {
            if (e[i] == 0)
                continue;
            if (a < 0 || v[i] > v[a])
                b = a, a = i;
            else if (b < 0 || v[i] > v[b])
                b = i;
        }
        into->max = a >= 0 ? v[a] : 0, into->max_ev = a >= 0 ? e[a] : 0;
        into->max2 = b >= 0 ? v[b] : 0, into->max2_ev = b >= 0 ? e[b] : 0;
        into->count += c->count;
        into->sum += c->sum;
        for (int i = 0; i < WP_HIST_BINS; i++)
            into->hist[i] += c->hist[i];
    }
}

/* A category's calls as one function's figures: its shortest call is the
 * shorter of the calls that waited (min) and those complete on entry
 * (early_min). */
static void wp_merge_cat(struct wp_fncalls *into, const struct wp_cat *c)
{
    struct wp_fncalls one = {.count = wp_cat_calls(c), .sum = wp_cat_scaled(c, c->sum), .max = c->max, .max_ev = c->max_ev,
                             .max2 = c->max2, .max2_ev = c->max2_ev, .min = c->min, .min_ev = c->min_ev};
    if (c->early_count && (c->min == UINT64_MAX || c->early_min < c->min))
        one.min = c->early_min, one.min_ev = c->early_min_ev;
    memcpy(one.hist, c->hist, sizeof one.hist);
    wp_merge(into, &one);
}

static int wp_write_matrix(const char *dir, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_MATRIX));
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "# %s %d\npeer\tbytes_sent\trequests_sent\trecv_time_ns\n", wp_file_format(WP_FILE_MATRIX),
            wp_file_version(WP_FILE_MATRIX));
    for (int j = 0; j < wp_mx_size; j++) {
        const uint64_t *m = &wp_mx[3 * (size_t)j];
        if (m[0] || m[1] || m[2])
            fprintf(f, "%d\t%llu\t%llu\t%llu\n", j, (unsigned long long)m[0], (unsigned long long)m[1],
                    (unsigned long long)wp_ticks_duration_ns(m[2]));
    }
    return fclose(f);
}

int wp_calls_write(const char *dir, int rank)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/rank.%d.%s", dir, rank, wp_file_suffix(WP_FILE_CALLS));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "# %s %d\n", wp_file_format(WP_FILE_CALLS), wp_file_version(WP_FILE_CALLS));
    fprintf(f, "function\tcalls\ttime_ns\tmin_ns\tmin_event\tmax_ns\tmax_event\tmax2_ns\tmax2_event"
               "\tbytes_sent\tbytes_recv\trequests_sent\trequests_recv\thistogram\n");
    /* All functions at once: one pass over each thread's categories.
     * mmap, not malloc: this also runs at an abnormal exit. */
    size_t bytes = WP_FN_COUNT * sizeof(struct wp_fncalls);
    struct wp_fncalls *all = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (all == MAP_FAILED) {
        int e = errno;
        fclose(f);
        remove(tmp);
        errno = e;
        return -1;
    }
    struct wp_stats_iter it = {0};
    for (const struct wp_cat *c; (c = wp_stats_next(&it)) != NULL;)
        if (c->fn > 0 && c->fn < WP_FN_COUNT && wp_cat_calls(c))
            wp_merge_cat(&all[c->fn], c);
    int n = wp_table_count(&wp_traffic_list);
    for (int i = 0; i < n; i++) {
        const struct wp_traffic_table *ct = wp_table_at(&wp_traffic_list, i);
        for (int fn = 1; ct && fn < WP_FN_COUNT; fn++) {
            struct wp_traffic *a = &all[fn].tr;
            const struct wp_traffic *c = &ct->fn[fn];
            a->bytes_sent += c->bytes_sent, a->bytes_recv += c->bytes_recv;
            a->req_sent += c->req_sent, a->req_recv += c->req_recv;
        }
    }
    for (int fn = 1; fn < WP_FN_COUNT; fn++) {
        const struct wp_fncalls m = all[fn];
        if (m.count == 0 && m.tr.req_sent == 0 && m.tr.req_recv == 0)
            continue;
        fprintf(f, "%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t",
                wp_fn_table[fn].name, (unsigned long long)m.count,
                (unsigned long long)wp_ticks_duration_ns(m.sum), (unsigned long long)wp_ticks_duration_ns(m.min),
                (unsigned long long)m.min_ev, (unsigned long long)wp_ticks_duration_ns(m.max),
                (unsigned long long)m.max_ev, (unsigned long long)wp_ticks_duration_ns(m.max2),
                (unsigned long long)m.max2_ev, (unsigned long long)m.tr.bytes_sent,
                (unsigned long long)m.tr.bytes_recv, (unsigned long long)m.tr.req_sent,
                (unsigned long long)m.tr.req_recv);
        /* Histogram: the non-empty bins as bin:count, comma separated. */
        int any = 0;
        for (int b = 0; b < WP_HIST_BINS; b++)
            if (m.hist[b])
                fprintf(f, "%s%d:%u", any++ ? "," : "", b, m.hist[b]);
        fprintf(f, "%s\n", any ? "" : "-");
    }
    munmap(all, bytes);
    int err = 0;
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        err = errno;
        remove(tmp);
    }
    if (!err && wp_mx && wp_write_matrix(dir, rank) != 0)
        err = errno ? errno : EIO;
    errno = err;
    return err ? -1 : 0;
}
