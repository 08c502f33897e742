/* profile/partial.c — see profile/partial.h.  Everything reachable from
 * wp_meta_write_sig(), wp_partial_write_folded_sig() and
 * wp_timeline_write_sig() (with a NULL namer) is async-signal-safe:
 * open, write, close, rename and unlink (POSIX's list), and this file's own
 * formatting on stack buffers.  No stdio, no malloc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fallback/estimate.h"
#include "format/format.h"
#include "mpit/requests.h"
#include "mpit/source.h"
#include "state/run.h"
#include "profile/partial.h"
#include "match/figures.h"
#include "match/match.h"
#include "sampler/counters.h"
#include "sampler/sampler.h"
#include "sampler/store.h"
#include "sampler/timeline.h"
#include "sampler/unwind.h"
#include "state/clock.h"
#include "state/functions.h"

/* --- formatting on a stack buffer ------------------------------------------ */

struct wp_out {
    int fd, err;
    size_t n, cap;
    char *buf;          /* small[] for a file, or a preallocated region */
    char small[8192];
    char path[4200];    /* the file, and the temporary name it is written */
    char tmp[4208];     /* under until wp_close renames it */
};

/* A file writer flushes when its buffer fills; a memory writer (fd < 0)
 * has nowhere to flush to and records the overflow in err instead. */
static void wp_flush(struct wp_out *o)
{
    if (o->fd < 0) {
        o->err = 1;
        return;
    }
    size_t done = 0;
    while (done < o->n && !o->err) {
        ssize_t w = write(o->fd, o->buf + done, o->n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            o->err = 1;
        else
            done += (size_t)w;
    }
    o->n = 0;
}

static void wp_puts(struct wp_out *o, const char *s)
{
    for (; *s; s++) {
        if (o->n == o->cap)
            wp_flush(o);
        if (o->n == o->cap)
            return;
        o->buf[o->n++] = *s;
    }
}

static void wp_putu(struct wp_out *o, uint64_t v)
{
    char d[24];
    int k = 0;
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    char s[24];
    for (int i = 0; i < k; i++)
        s[i] = d[k - 1 - i];
    s[k] = '\0';
    wp_puts(o, s);
}

static void wp_putx(struct wp_out *o, uint64_t v)
{
    char s[24] = "0x";
    int k = 2;
    int shift = 60;
    while (shift > 0 && ((v >> shift) & 0xf) == 0)
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        s[k++] = "0123456789abcdef"[(v >> shift) & 0xf];
    s[k] = '\0';
    wp_puts(o, s);
}

static void wp_kv(struct wp_out *o, const char *key, uint64_t v)
{
    wp_puts(o, key);
    wp_puts(o, "=");
    wp_putu(o, v);
    wp_puts(o, "\n");
}

static void wp_ks(struct wp_out *o, const char *key, const char *v)
{
    wp_puts(o, key);
    wp_puts(o, "=");
    for (; *v; v++) {
        char c[2] = {(*v == '\n') ? ' ' : *v, '\0'};
        wp_puts(o, c);
    }
    wp_puts(o, "\n");
}

static int wp_open(struct wp_out *o, const char *dir, int rank, const char *suffix)
{
    char path[4200];
    /* Build "dir/rank.R.suffix" by hand: snprintf is not on POSIX's list. */
    size_t k = 0;
    for (const char *p = dir; *p && k < 4096; p++)
        path[k++] = *p;
    const char *mid = "/rank.";
    for (const char *p = mid; *p; p++)
        path[k++] = *p;
    char d[16];
    int nd = 0;
    unsigned r = (unsigned)rank;
    do
        d[nd++] = (char)('0' + r % 10);
    while ((r /= 10) != 0);
    while (nd)
        path[k++] = d[--nd];
    path[k++] = '.';
    for (const char *p = suffix; *p; p++)
        path[k++] = *p;
    path[k] = '\0';
    /* Written under a temporary name and renamed when complete (rename is
     * async-signal-safe), so that a process killed while it writes (the
     * launcher's SIGKILL after its SIGTERM) leaves the previous file whole,
     * never half a file. */
    for (size_t i = 0; i <= k; i++)
        o->path[i] = o->tmp[i] = path[i];
    const char *ext = ".tmp";
    for (size_t i = 0; ext[i]; i++)
        o->tmp[k + i] = ext[i];
    o->tmp[k + 4] = '\0';
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    o->n = 0;
    o->buf = o->small;
    o->cap = sizeof o->small;
    o->err = o->fd < 0;
    return o->fd < 0 ? -1 : 0;
}

static int wp_close(struct wp_out *o)
{
    wp_flush(o);
    if (close(o->fd) != 0)
        o->err = 1;
    if (!o->err && rename(o->tmp, o->path) != 0)
        o->err = 1;
    if (o->err)
        unlink(o->tmp);
    return o->err ? -1 : 0;
}

/* --- counters ------------------------------------------------------------------ */

void wp_totals_collect_sig(struct wp_totals *t)
{
    memset(t, 0, sizeof *t);
    struct wp_store merged;
    memset(&merged, 0, sizeof merged);
    int n = wp_slots_used();
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        t->threads++;
        t->samples += s->samples;
        t->dropped_full += s->dropped_full;
        t->dropped_dl += s->dropped_dl;
        t->unwind_fail += s->unwind_fail;
        t->truncated += s->truncated;
        t->lib_unwinds += s->lib_unwinds;
        t->slow_unwinds += s->slow_unwinds;
        t->by_source += s->by_source;
        t->by_estimate += s->by_estimate;
        t->paused_signals += s->paused_signals;
        t->unselected_signals += s->unselected_signals;
        t->handler_calls += s->handler_calls;
        t->handler_ns += s->handler_ns;
        t->merged += s->merged;
        /* Samples still held for a call in progress (only at an abnormal
         * end: a call's end settles its samples): the partial folded file
         * writes them, so they are counted as samples, classified by the
         * estimator's rule (wp_partial_write_folded_sig). */
        if (s->pending) {
            uint64_t stall, held = wp_pending_split(s->pending, 0, UINT64_MAX, &stall);
            t->samples += held;
            t->by_estimate += held;
        }
        if (s->stride > t->stride_max)
            t->stride_max = s->stride;
        for (int b = 0; b < WP_HANDLER_BINS; b++)
            merged.handler_hist[b] += s->handler_hist[b];
    }
    if (t->stride_max == 0)
        t->stride_max = 1;
    merged.handler_calls = t->handler_calls;
    t->handler_median_ns = wp_store_handler_median_ns(&merged);
}

/* v/1000 with three decimals. */
static void wp_putmilli(struct wp_out *o, uint64_t v)
{
    wp_putu(o, v / 1000);
    wp_puts(o, ".");
    char d[4] = {(char)('0' + v / 100 % 10), (char)('0' + v / 10 % 10), (char)('0' + v % 10), 0};
    wp_puts(o, d);
}

/* The sampled intervals in seconds since MPI_Init, "a-b,c-d", the first 64. */
struct wp_ivout {
    struct wp_out *o;
    int n;
};

static void wp_iv_put(uint64_t a, uint64_t b, void *arg)
{
    struct wp_ivout *v = arg;
    if (v->n < 64) {
        if (v->n)
            wp_puts(v->o, ",");
        wp_putmilli(v->o, a / 1000000);
        wp_puts(v->o, "-");
        wp_putmilli(v->o, b / 1000000);
    }
    v->n++;
}

/* Keys of rank and time selection and of the memory budget;
 * wp_sampler_intervals is arithmetic on fixed arrays, safe here too. */
static void wp_meta_selection(struct wp_out *o, const struct wp_totals *t)
{
    wp_kv(o, wp_meta_key(WP_MK_selected), (uint64_t)wp_run.selected);
    wp_ks(o, wp_meta_key(WP_MK_ranks), wp_run.cfg.ranks_spec);
    wp_kv(o, wp_meta_key(WP_MK_memory), wp_run.cfg.memory);
    wp_kv(o, wp_meta_key(WP_MK_memory_pool), wp_sampler_pool_bytes());
    wp_kv(o, wp_meta_key(WP_MK_merged), t->merged);
    wp_kv(o, wp_meta_key(WP_MK_threads_unsampled), wp_sampler_unsampled_threads());
    uint32_t halvings = 0;
    while ((1u << halvings) < t->stride_max)
        halvings++;
    wp_kv(o, wp_meta_key(WP_MK_rate_halvings), halvings);
    wp_puts(o, wp_meta_key(WP_MK_hz_final));
    wp_puts(o, "=");
    wp_putmilli(o, (uint64_t)wp_run.cfg.hz * 1000 / t->stride_max);
    wp_puts(o, "\n");
    wp_puts(o, wp_meta_key(WP_MK_sampled_intervals));
    wp_puts(o, "=");
    struct wp_ivout v = {o, 0};
    uint64_t lost = 0, end = wp_run.end_ns ? wp_run.end_ns : wp_now_ns();
    uint64_t ns = wp_run.sampling ? wp_sampler_intervals(end, wp_iv_put, &v, &lost) : 0;
    if (v.n > 64) {
        wp_puts(o, ",+");
        wp_putu(o, (uint64_t)(v.n - 64));
        wp_puts(o, " more");
    } else if (v.n == 0) {
        wp_puts(o, "none");
    }
    wp_puts(o, "\n");
    wp_kv(o, wp_meta_key(WP_MK_sampled_ns), ns);
    wp_kv(o, wp_meta_key(WP_MK_pcontrol_toggles_lost), lost);
}

int wp_meta_write_sig(const char *dir, int rank, enum wp_end end)
{
    struct wp_out o;
    if (wp_open(&o, dir, rank, wp_file_suffix(WP_FILE_META)) != 0)
        return -1;
    struct wp_totals t;
    wp_totals_collect_sig(&t);
    wp_puts(&o, wp_meta_key(WP_MK_format));
    wp_puts(&o, "=");
    wp_puts(&o, wp_file_format(WP_FILE_META));
    wp_puts(&o, " ");
    wp_putu(&o, (uint64_t)wp_file_version(WP_FILE_META));
    wp_puts(&o, "\n");
    wp_ks(&o, wp_meta_key(WP_MK_status), wp_end_status(end));
    wp_kv(&o, wp_meta_key(WP_MK_rank), (uint64_t)rank);
    wp_kv(&o, wp_meta_key(WP_MK_size), (uint64_t)wp_run.size);
    wp_ks(&o, wp_meta_key(WP_MK_host), wp_run.host);
    wp_ks(&o, wp_meta_key(WP_MK_mpi), wp_run.mpi_version);
    /* The stall source is chosen at MPI_Init and never changes (mpit/). */
    wp_ks(&o, wp_meta_key(WP_MK_source), wp_src->name);
    wp_kv(&o, wp_meta_key(WP_MK_hz), (uint64_t)wp_run.cfg.hz);
    /* Whether MPI_T was initialised (none: the chosen source does not
     * use it), before or after PMPI_Init, and how long that took; and
     * all of waitprof's own time in MPI_Init (mpit/source.h). */
    wp_ks(&o, wp_meta_key(WP_MK_mpit_init),
          wp_mpit_when == WP_MPIT_BEFORE ? "before" : wp_mpit_when == WP_MPIT_AFTER ? "after" : "none");
    wp_kv(&o, wp_meta_key(WP_MK_mpit_init_ns), wp_mpit_init_ns);
    wp_kv(&o, wp_meta_key(WP_MK_init_ns), wp_run.init_ns);
    /* full: the wrappers time every call and keep per-call figures; lean:
     * no clock, no figures (WAITPROF_LEAN, wrap/wrap.h). */
    wp_ks(&o, wp_meta_key(WP_MK_wrappers), wp_run.cfg.lean ? "lean" : "full");
    wp_ks(&o, wp_meta_key(WP_MK_clock), wp_run.cfg.cpu_clock ? "cpu" : "wall");
    /* tick: expirations on the kernel's tick of tick_ns (sampler/timers.c); free:
     * free-running timers (WAITPROF_TIMER=free, a CPU clock, or no usable
     * tick); overflow: a sample every overflow_period counts of the
     * thread's overflow_event (sampler/overflow.c), where hz above sets no
     * rate (only the timeline's bins); none: this rank took no samples.
     * Reading the sampler's globals is async-signal-safe. */
    uint64_t ovf_period = 0;
    const char *ovf = wp_run.sampling ? wp_sampler_overflow(&ovf_period) : NULL;
    wp_ks(&o, wp_meta_key(WP_MK_timer),
          !wp_run.sampling ? "none" : ovf ? "overflow" : wp_sampler_tick_ns() ? "tick" : "free");
    wp_kv(&o, wp_meta_key(WP_MK_tick_ns), wp_sampler_tick_ns());
    if (ovf) {
        wp_ks(&o, wp_meta_key(WP_MK_overflow_event), ovf);
        wp_kv(&o, wp_meta_key(WP_MK_overflow_period), ovf_period);
    }
    wp_kv(&o, wp_meta_key(WP_MK_start_ns), wp_run.start_ns);
    wp_kv(&o, wp_meta_key(WP_MK_end_ns), wp_run.end_ns);
    wp_kv(&o, wp_meta_key(WP_MK_duration_ns), wp_run.end_ns > wp_run.start_ns ? wp_run.end_ns - wp_run.start_ns : 0);
    wp_kv(&o, wp_meta_key(WP_MK_threads), (uint64_t)t.threads);
    wp_kv(&o, wp_meta_key(WP_MK_samples), t.samples);
    wp_kv(&o, wp_meta_key(WP_MK_dropped_full), t.dropped_full);
    wp_kv(&o, wp_meta_key(WP_MK_dropped_loader), t.dropped_dl);
    wp_kv(&o, wp_meta_key(WP_MK_unwind_failures), t.unwind_fail);
    wp_kv(&o, wp_meta_key(WP_MK_truncated), t.truncated);
    wp_kv(&o, wp_meta_key(WP_MK_libunwind_unwinds), t.lib_unwinds);
    wp_kv(&o, wp_meta_key(WP_MK_slow_unwinds), t.slow_unwinds);
    wp_kv(&o, wp_meta_key(WP_MK_samples_by_source), t.by_source);
    wp_kv(&o, wp_meta_key(WP_MK_samples_by_estimate), t.by_estimate);
    /* Signals during MPI_Pcontrol(0): one per thread per pause when the
     * timers stop as they should (sampler.h). */
    wp_kv(&o, wp_meta_key(WP_MK_paused_signals), t.paused_signals);
    /* Signals in time START/STOP/WINDOW leave out: about one per thread
     * and unselected stretch with a wall clock (sampler/timers.c,
     * wp_skip_unselected_sig); every period with a CPU clock. */
    wp_kv(&o, wp_meta_key(WP_MK_unselected_signals), t.unselected_signals);
    wp_kv(&o, wp_meta_key(WP_MK_untracked_requests), wp_req_untracked);
    wp_kv(&o, wp_meta_key(WP_MK_handler_calls), t.handler_calls);
    wp_kv(&o, wp_meta_key(WP_MK_handler_ns_total), t.handler_ns);
    wp_kv(&o, wp_meta_key(WP_MK_handler_ns_median), t.handler_median_ns);
    /* The counters of rank.R.<event>.folded, each with the unit of its
     * weights and the backend that counted it (perf_event or papi,
     * sampler/counters.h): "counters=task-clock:ns:perf_event,
     * PAPI_TOT_CYC:events:papi".  The name is the one the user gave (its
     * file: '.' and '/' made '_'); it may hold ':' itself
     * (perf::TASK-CLOCK), so readers split from the end.  Names, units and
     * backends are strings sampler/counters.c set up. */
    if (wp_ctr_count() > 0) {
        wp_puts(&o, wp_meta_key(WP_MK_counters));
        for (int c = 0; c < wp_ctr_count(); c++) {
            wp_puts(&o, c ? "," : "=");
            wp_puts(&o, wp_ctr_name(c));
            wp_puts(&o, ":");
            wp_puts(&o, wp_ctr_unit(c));
            wp_puts(&o, ":");
            wp_puts(&o, wp_ctr_backend(c));
        }
        wp_puts(&o, "\n");
    }
    /* The perf_event groups' time enabled and time counting: a
     * difference means the kernel multiplexed them (the report says so). */
    if (wp_ctr_count() > 0) {
        uint64_t en, run;
        wp_ctr_times_sig(&en, &run);
        wp_kv(&o, wp_meta_key(WP_MK_counters_enabled_ns), en);
        wp_kv(&o, wp_meta_key(WP_MK_counters_running_ns), run);
    }
    /* WAITPROF_COUNTERS_SPLIT (sampler/ctr_split.h): each counter's counts
     * outside and inside MPI, summed over the threads' stores:
     * "counters_split=task-clock:OUT:IN,...".  Plain loads of sums the
     * threads write; a torn value is only a count. */
    if (wp_ctr_count() > 0 && wp_run.cfg.counters_split) {
        wp_puts(&o, wp_meta_key(WP_MK_counters_split));
        int nt = wp_slots_used();
        for (int c = 0; c < wp_ctr_count(); c++) {
            uint64_t sum[2] = {0, 0};
            for (int i = 0; i < nt; i++) {
                const struct wp_store *s = wp_slots[i].store;
                if (s != NULL && (uint32_t)c < s->nctr) {
                    sum[0] += s->split[0][c];
                    sum[1] += s->split[1][c];
                }
            }
            wp_puts(&o, c ? "," : "=");
            wp_puts(&o, wp_ctr_name(c));
            wp_puts(&o, ":");
            wp_putu(&o, sum[0]);
            wp_puts(&o, ":");
            wp_putu(&o, sum[1]);
        }
        wp_puts(&o, "\n");
    }
    wp_meta_selection(&o, &t);
    /* Matched instances (match/match.h): plain loads of counters the
     * wrappers and the finalize step write; a torn value is only a count. */
    if (wp_match_on) {
        wp_kv(&o, wp_meta_key(WP_MK_match_rate), 1ull << wp_match_bits);
        wp_kv(&o, wp_meta_key(WP_MK_match_matched), wp_match_cnt.matched);
        wp_kv(&o, wp_meta_key(WP_MK_match_unmatched), wp_match_cnt.unmatched);
        wp_kv(&o, wp_meta_key(WP_MK_match_dropped), wp_match_cnt.dropped);
        wp_kv(&o, wp_meta_key(WP_MK_match_unnumbered), wp_match_cnt.unnumbered);
        wp_kv(&o, wp_meta_key(WP_MK_match_rounds), wp_match_cnt.rounds);
        /* Instances recorded during the run (point-to-point and
         * collective), and what the finalize step held, received and took
         * (match/figures.h); the latter only once it has run, so that a
         * partial profile does not claim a step that never happened. */
        wp_kv(&o, wp_meta_key(WP_MK_match_records), wp_match_cnt.p2p_records + wp_match_cnt.coll_records);
        if (wp_match_fig.finalize_ns) {
            wp_kv(&o, wp_meta_key(WP_MK_match_held), wp_match_fig.held);
            wp_kv(&o, wp_meta_key(WP_MK_match_received), wp_match_fig.received);
            wp_kv(&o, wp_meta_key(WP_MK_match_finalize_ns), wp_match_fig.finalize_ns);
            wp_kv(&o, wp_meta_key(WP_MK_match_clock_ns), wp_match_fig.clock_ns);
            wp_kv(&o, wp_meta_key(WP_MK_match_gathered), wp_match_fig.gathered);
        }
        double o1, o2, err;
        int syncs;
        wp_match_clock_offsets(&o1, &o2, &err, &syncs);
        double off = syncs >= 2 ? o2 : o1;
        wp_puts(&o, wp_meta_key(WP_MK_clock_offset_ns));
        wp_puts(&o, off < 0 ? "=-" : "=");
        wp_putu(&o, (uint64_t)((off < 0 ? -off : off) * 1e9 + 0.5));
        wp_puts(&o, "\n");
        wp_kv(&o, wp_meta_key(WP_MK_clock_error_ns), (uint64_t)(err * 1e9 + 0.5));
        wp_kv(&o, wp_meta_key(WP_MK_clock_syncs), (uint64_t)syncs);
    }
    int n = wp_slots_used();
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        wp_puts(&o, "thread.");
        wp_putu(&o, (uint64_t)i);
        wp_puts(&o, ".samples=");
        wp_putu(&o, s->samples);
        wp_puts(&o, "\nthread.");
        wp_putu(&o, (uint64_t)i);
        wp_puts(&o, ".tid=");
        wp_putu(&o, (uint64_t)wp_slots[i].tid);
        wp_puts(&o, "\nthread.");
        wp_putu(&o, (uint64_t)i);
        wp_puts(&o, ".stride=");
        wp_putu(&o, s->stride ? s->stride : 1);
        wp_puts(&o, "\n");
    }
    return wp_close(&o);
}

/* --- module map and the symbol-less folded writer ------------------------------- */

/* A module's name as frames carry it: ';' and ' ' would break the folded
 * line, so they become '_' (rank.R.modules names it the same way). */
static void wp_put_name(struct wp_out *o, const char *name)
{
    for (; *name; name++) {
        char c[2] = {(*name == ';' || *name == ' ' || *name == '\t') ? '_' : *name, '\0'};
        wp_puts(o, c);
    }
}

/* A frame as "module+0xOFFSET", from the unwinder's table of loaded objects
 * (sampler/unwind.h), or the bare address when no object holds it. */
static void wp_put_frame(struct wp_out *o, uintptr_t ip)
{
    char name[WP_CFI_NAME];
    uintptr_t base;
    if (wp_cfi_object_sig(ip, &base, name, sizeof name) == 0) {
        wp_put_name(o, name);
        wp_puts(o, "+");
        wp_putx(o, ip - base);
    } else {
        wp_putx(o, ip);
    }
}

/* rank.R.modules (format/format.h): the table of loaded objects, copied
 * entry by entry with wp_cfi_module_sig (atomic loads), each row formatted
 * here.  Objects with no file on disk are left out: nothing could name
 * their frames afterwards. */
static int wp_partial_write_modules_sig(const char *dir, int rank)
{
    struct wp_out o;
    if (wp_open(&o, dir, rank, wp_file_suffix(WP_FILE_MODULES)) != 0)
        return -1;
    wp_puts(&o, "# ");
    wp_puts(&o, wp_file_format(WP_FILE_MODULES));
    wp_puts(&o, " ");
    wp_putu(&o, (uint64_t)wp_file_version(WP_FILE_MODULES));
    wp_puts(&o, "\nstart_ns\t");
    wp_putu(&o, wp_run.start_ns);
    wp_puts(&o, "\n" WP_MODULES_COLUMNS "\n");
    struct wp_cfi_module m;
    for (int i = 0; wp_cfi_module_sig(i, &m) == 0; i++) {
        if (m.path[0] == '\0')
            continue;
        wp_put_name(&o, m.name);
        wp_puts(&o, "\t");
        wp_putx(&o, m.base);
        wp_puts(&o, "\t");
        if (m.build_id_len == 0)
            wp_puts(&o, "-");
        for (int b = 0; b < m.build_id_len; b++) {
            char h[3] = {"0123456789abcdef"[m.build_id[b] >> 4], "0123456789abcdef"[m.build_id[b] & 15], 0};
            wp_puts(&o, h);
        }
        wp_puts(&o, "\t");
        wp_putu(&o, m.size);
        wp_puts(&o, "\t");
        wp_putu(&o, m.mtime_ns);
        wp_puts(&o, m.self ? "\t1\t" : "\t0\t");
        /* A tab or newline in a path would break the row: written as '?',
         * such a file is then not found, and the report says so. */
        m.path[sizeof m.path - 1] = '\0';
        for (char *p = m.path; *p; p++)
            if (*p == '\t' || *p == '\n')
                *p = '?';
        wp_puts(&o, m.path);
        wp_puts(&o, "\n");
    }
    return wp_close(&o);
}

/* Room for sorting the lines of a partial profile, reserved in normal
 * context by wp_partial_reserve() so that the signal-time writer allocates
 * nothing.  Lines that do not fit are written after the sorted ones. */
#define WP_PARTIAL_TEXT (16u << 20)
#define WP_PARTIAL_LINES (256u << 10)
struct wp_pline {
    uint32_t off, len;
    uint64_t count;
};
static char *wp_ptext;
static struct wp_pline *wp_plines;

void wp_partial_reserve(void)
{
    if (wp_ptext)
        return;
    void *t = mmap(NULL, WP_PARTIAL_TEXT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *l = mmap(NULL, WP_PARTIAL_LINES * sizeof(struct wp_pline), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED || l == MAP_FAILED) {
        if (t != MAP_FAILED)
            munmap(t, WP_PARTIAL_TEXT);
        if (l != MAP_FAILED)
            munmap(l, WP_PARTIAL_LINES * sizeof(struct wp_pline));
        return;
    }
    wp_ptext = t;
    wp_plines = l;
}

/* The frames ips[0..e->depth) (leaf first), root first, after the state. */
static void wp_put_ips(struct wp_out *o, const struct wp_stack_entry *e, const uintptr_t *ips)
{
    /* A held sample: by its category's share where MPI_Finalize found it
     * (an entry in the dividing bucket takes the state of its larger
     * part), else against the process-local minimum.  Memory reads only. */
    wp_puts(o, wp_state_name(wp_estimate_entry_state(e)));
    for (int k = e->depth - 1; k >= 0; k--) {
        uintptr_t ip = ips[k];
        wp_puts(o, ";");
        /* A wrapper frame whose call is unknown is "MPI", as the
         * symbolizer names it: a module+offset frame inside waitprof would
         * be left out when the report names the frames afterwards. */
        if (wp_is_wrapper_ip(ip))
            wp_puts(o, e->fn > 0 && e->fn < WP_FN_COUNT ? wp_fn_table[e->fn].name : "MPI");
        else
            wp_put_frame(o, ip);
    }
}

static void wp_put_stack(struct wp_out *o, const struct wp_store *s, const struct wp_stack_entry *e)
{
    wp_put_ips(o, e, &s->arena[e->off]);
}

/* Byte order, as strcmp and the folded readers sort. */
static int wp_pline_cmp(const struct wp_pline *a, const struct wp_pline *b)
{
    uint32_t n = a->len < b->len ? a->len : b->len;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)wp_ptext[a->off + i], y = (unsigned char)wp_ptext[b->off + i];
        if (x != y)
            return x < y ? -1 : 1;
    }
    return a->len < b->len ? -1 : a->len > b->len;
}

/* Heapsort: in place, O(n log n), no recursion and no allocation. */
static void wp_sift(struct wp_pline *v, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && wp_pline_cmp(&v[c], &v[c + 1]) < 0)
            c++;
        if (wp_pline_cmp(&v[root], &v[c]) >= 0)
            return;
        struct wp_pline t = v[root];
        v[root] = v[c];
        v[c] = t;
        root = c;
    }
}

static void wp_heapsort(struct wp_pline *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        wp_sift(v, i, n);
    for (size_t end = n; end-- > 1;) {
        struct wp_pline t = v[0];
        v[0] = v[end];
        v[end] = t;
        wp_sift(v, 0, end);
    }
}

/* One folded file of raw frames, "rank.R.suffix": weighted by the samples
 * (c < 0, rank.R.folded) or by counter c's deltas (rank.R.<event>.folded,
 * the same lines as the normal writer's counter files). */
static int wp_partial_write_weights_sig(const char *dir, int rank, const char *suffix, int c)
{
    struct wp_out o;
    if (wp_open(&o, dir, rank, suffix) != 0)
        return -1;
    struct wp_out mem = {.fd = -1, .buf = wp_ptext, .cap = wp_ptext ? WP_PARTIAL_TEXT : 0};
    size_t nl = 0;
    int n = wp_slots_used();
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        for (uint32_t j = 0, nj = wp_store_count(s); j < nj; j++) {
            const struct wp_stack_entry *e = wp_store_entry(s, j);
            if (e->count == 0)
                continue;
            const uint64_t *sum = c >= 0 ? wp_entry_ctr(s, e) : NULL;
            if (c >= 0 && (sum == NULL || (uint32_t)c >= s->nctr))
                continue;
            uint64_t weight = c < 0 ? e->count : sum[c];
            if (weight == 0)
                continue;
            size_t start = mem.n;
            if (nl < WP_PARTIAL_LINES && wp_ptext) {
                wp_put_stack(&mem, s, e);
                if (!mem.err) {
                    wp_plines[nl].off = (uint32_t)start;
                    wp_plines[nl].len = (uint32_t)(mem.n - start);
                    wp_plines[nl].count = weight;
                    nl++;
                    continue;
                }
                mem.n = start;
                mem.err = 0;
            }
            /* No room to sort this one: write it as it is. */
            wp_put_stack(&o, s, e);
            wp_puts(&o, " ");
            wp_putu(&o, weight);
            wp_puts(&o, "\n");
        }
        /* Samples of a call still in progress were never settled: those
         * taken more than the function's minimum ago waited
         * (fallback/estimate.h), the rest are MPI-Work.  wp_ticks: a TSC
         * or vDSO clock read. */
        const struct wp_pending *p = s->pending;
        uint64_t stall, all = wp_estimate_pending_split_ctr(p, wp_ticks(), s->nctr, c, &stall);
        for (int part = 0; part < 2 && all > 0; part++) {
            uint64_t count = part == 0 ? stall : all - stall;
            if (count == 0)
                continue;
            struct wp_stack_entry pe = {.depth = p->depth,
                                        .fn = p->fn,
                                        .state = part == 0 ? WAITPROF_STATE_STALL : WAITPROF_STATE_WORK};
            size_t start = mem.n;
            if (nl < WP_PARTIAL_LINES && wp_ptext) {
                wp_put_ips(&mem, &pe, p->ips);
                if (!mem.err) {
                    wp_plines[nl].off = (uint32_t)start;
                    wp_plines[nl].len = (uint32_t)(mem.n - start);
                    wp_plines[nl].count = count;
                    nl++;
                    continue;
                }
                mem.n = start;
                mem.err = 0;
            }
            wp_put_ips(&o, &pe, p->ips);
            wp_puts(&o, " ");
            wp_putu(&o, count);
            wp_puts(&o, "\n");
        }
    }
    wp_heapsort(wp_plines, nl);
    for (size_t i = 0; i < nl;) {
        uint64_t count = wp_plines[i].count;
        size_t j = i + 1;
        while (j < nl && wp_pline_cmp(&wp_plines[i], &wp_plines[j]) == 0)
            count += wp_plines[j++].count;
        for (uint32_t k = 0; k < wp_plines[i].len; k++) {
            if (o.n == o.cap)
                wp_flush(&o);
            o.buf[o.n++] = wp_ptext[wp_plines[i].off + k];
        }
        wp_puts(&o, " ");
        wp_putu(&o, count);
        wp_puts(&o, "\n");
        i = j;
    }
    return wp_close(&o);
}

int wp_partial_write_folded_sig(const char *dir, int rank)
{
    /* The module table first: a folded file with raw frames always has the
     * table that names them beside it. */
    wp_partial_write_modules_sig(dir, rank);
    int rc = wp_partial_write_weights_sig(dir, rank, wp_file_suffix(WP_FILE_FOLDED), -1);
    /* Then one file per counter, "<event>.folded" put together by hand
     * (snprintf is not on POSIX's list), the event in its file form
     * (wp_ctr_file_name: a plain loop over a string sampler/counters.c
     * holds), at most WP_CTR_NAME_MAX bytes. */
    for (int c = 0; c < wp_ctr_count(); c++) {
        char suffix[WP_CTR_NAME_MAX + 16], file[WP_CTR_NAME_MAX];
        size_t k = 0;
        wp_ctr_file_name(wp_ctr_name(c), file, sizeof file);
        for (const char *q = file; *q && k < WP_CTR_NAME_MAX; q++)
            suffix[k++] = *q;
        suffix[k++] = '.';
        for (const char *q = wp_file_suffix(WP_FILE_FOLDED); *q && k < sizeof suffix - 1; q++)
            suffix[k++] = *q;
        suffix[k] = '\0';
        if (wp_partial_write_weights_sig(dir, rank, suffix, c) != 0)
            rc = -1;
    }
    return rc;
}

/* --- the timeline ------------------------------------------------------------------ */

/* The rank's timeline, the threads' summed, and the stack ids its bins
 * voted for, sorted, with the entry (or call in progress) that has each:
 * static, because the signal-time writer allocates nothing.  The normal
 * writer uses the same memory; it runs once, before any termination
 * handler could. */
static struct wp_timeline wp_tl_rank;
struct wp_tl_cand {
    uint64_t id;
    const struct wp_store *s;
    const struct wp_stack_entry *e; /* NULL: s's call in progress */
    int found;
};
static struct wp_tl_cand wp_tl_cands[WP_TL_BINS];

static void wp_tl_cand_sort(struct wp_tl_cand *v, size_t n)
{
    /* Insertion sort would be quadratic in 1024; a heapsort keyed by id. */
    for (size_t i = n / 2; i-- > 0;)
        for (size_t r = i;;) {
            size_t c = 2 * r + 1;
            if (c >= n)
                break;
            if (c + 1 < n && v[c].id < v[c + 1].id)
                c++;
            if (v[r].id >= v[c].id)
                break;
            struct wp_tl_cand t = v[r];
            v[r] = v[c], v[c] = t, r = c;
        }
    for (size_t end = n; end-- > 1;) {
        struct wp_tl_cand t = v[0];
        v[0] = v[end], v[end] = t;
        for (size_t r = 0;;) {
            size_t c = 2 * r + 1;
            if (c >= end)
                break;
            if (c + 1 < end && v[c].id < v[c + 1].id)
                c++;
            if (v[r].id >= v[c].id)
                break;
            t = v[r];
            v[r] = v[c], v[c] = t, r = c;
        }
    }
}

static struct wp_tl_cand *wp_tl_cand_find(size_t n, uint64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wp_tl_cands[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && wp_tl_cands[lo].id == id ? &wp_tl_cands[lo] : NULL;
}

/* Sum the threads' timelines into wp_tl_rank (held samples split by each
 * thread's own held entries, calls in progress classified as the folded
 * writers do) and find the stack of every bin's vote.  Returns the number
 * of candidates. */
static size_t wp_tl_collect_sig(uint64_t now)
{
    int n = wp_slots_used();
    uint64_t width = 0, t0 = wp_run.start_ns;
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s && s->tl && s->tl->width_ns > width) {
            width = s->tl->width_ns;
            t0 = s->tl->t0_ns;
        }
    }
    /* No timeline at all (no thread sampled): an empty one of one period. */
    wp_tl_init(&wp_tl_rank, t0, width ? width : 1000000000ull / (uint64_t)(wp_run.cfg.hz > 0 ? wp_run.cfg.hz : 1));
    for (int i = 0; i < n; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL || s->tl == NULL)
            continue;
        /* The share of Stall per class of time to the call's end among this
         * thread's held entries, as they are classified now. */
        uint64_t stall[WP_TL_HELD] = {0}, all[WP_TL_HELD] = {0};
        for (uint32_t j = 0, nj = wp_store_count(s); j < nj; j++) {
            const struct wp_stack_entry *e = wp_store_entry(s, j);
            if (e->count == 0 || !e->held)
                continue;
            int c = wp_tl_held_class(wp_ticks_duration_ns(wp_held_ticks(e->held)));
            all[c] += e->count;
            stall[c] += wp_estimate_entry_stall(e, e->count);
        }
        wp_tl_sum_sig(&wp_tl_rank, s->tl, stall, all);
        if (s->pending && s->pending->n)
            wp_pending_timeline_sig(s->pending, now, wp_estimate_pending_min_ns(s->pending), &wp_tl_rank);
    }
    size_t nc = 0;
    for (uint32_t b = 0; b < wp_tl_rank.nbins; b++)
        if (wp_tl_rank.bin[b].vote_n && wp_tl_rank.bin[b].w[WAITPROF_STATE_STALL] && nc < WP_TL_BINS)
            wp_tl_cands[nc++] = (struct wp_tl_cand){.id = wp_tl_rank.bin[b].vote};
    wp_tl_cand_sort(wp_tl_cands, nc);
    /* One pass over every entry that can hold a waiting sample's stack. */
    for (int i = 0; i < n && nc; i++) {
        const struct wp_store *s = wp_slots[i].store;
        if (s == NULL)
            continue;
        for (uint32_t j = 0, nj = wp_store_count(s); j < nj; j++) {
            const struct wp_stack_entry *e = wp_store_entry(s, j);
            if (e->count == 0 || (e->state != WAITPROF_STATE_STALL && !e->held))
                continue;
            struct wp_tl_cand *c = wp_tl_cand_find(nc, wp_tl_stack_id(e->fn, &s->arena[e->off], e->depth));
            if (c && !c->found)
                *c = (struct wp_tl_cand){c->id, s, e, 1};
        }
        const struct wp_pending *p = s->pending;
        if (p && p->n) {
            struct wp_tl_cand *c = wp_tl_cand_find(nc, wp_tl_stack_id(p->fn, p->ips, p->depth));
            if (c && !c->found)
                *c = (struct wp_tl_cand){c->id, s, NULL, 1};
        }
    }
    return nc;
}

int wp_timeline_write_sig(const char *dir, int rank, wp_tl_namer name, void *arg)
{
    struct wp_out o;
    if (wp_open(&o, dir, rank, wp_file_suffix(WP_FILE_TIMELINE)) != 0)
        return -1;
    size_t nc = wp_tl_collect_sig(wp_ticks());
    const struct wp_timeline *t = &wp_tl_rank;
    wp_puts(&o, "# ");
    wp_puts(&o, wp_file_format(WP_FILE_TIMELINE));
    wp_puts(&o, " ");
    wp_putu(&o, (uint64_t)wp_file_version(WP_FILE_TIMELINE));
    wp_puts(&o, "\n");
    wp_kv(&o, wp_timeline_key(WP_TK_origin_ns), t->t0_ns);
    wp_kv(&o, wp_timeline_key(WP_TK_bin_ns), t->width_ns);
    wp_kv(&o, wp_timeline_key(WP_TK_period_ns), 1000000000ull / (uint64_t)(wp_run.cfg.hz > 0 ? wp_run.cfg.hz : 1));
    wp_kv(&o, wp_timeline_key(WP_TK_bins), t->nbins);
    wp_puts(&o, WP_TIMELINE_HEADER "\n");
    for (uint32_t b = 0; b < t->nbins; b++) {
        const struct wp_tl_bin *x = &t->bin[b];
        if (x->w[0] == 0 && x->w[1] == 0 && x->w[2] == 0)
            continue;
        wp_putu(&o, b);
        for (int k = 0; k < 3; k++) {
            wp_puts(&o, "\t");
            wp_putu(&o, x->w[k]);
        }
        wp_puts(&o, "\t");
        const struct wp_tl_cand *c = x->vote_n && x->w[WAITPROF_STATE_STALL] ? wp_tl_cand_find(nc, x->vote) : NULL;
        if (c && c->found) {
            const char *named = name && c->e ? name(arg, c->s, c->e) : NULL;
            if (named) {
                wp_puts(&o, named);
            } else {
                /* Unsymbolized, as in the partial folded file. */
                const struct wp_pending *p = c->s->pending;
                struct wp_stack_entry pe = {.depth = p->depth, .fn = p->fn};
                const struct wp_stack_entry *e = c->e ? c->e : &pe;
                const uintptr_t *ips = c->e ? &c->s->arena[e->off] : p->ips;
                for (int k = e->depth - 1; k >= 0; k--) {
                    if (k != e->depth - 1)
                        wp_puts(&o, ";");
                    if (wp_is_wrapper_ip(ips[k]) && e->fn > 0 && e->fn < WP_FN_COUNT)
                        wp_puts(&o, wp_fn_table[e->fn].name);
                    else
                        wp_put_frame(&o, ips[k]);
                }
            }
        }
        wp_puts(&o, "\n");
    }
    return wp_close(&o);
}
