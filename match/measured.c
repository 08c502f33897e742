/* match/measured.c — the measured waits per category, and what they say
 * about every call of the category (match/match.h, wp_match_wait).
 *
 * The instances of a category fall in two strata: the first instances of
 * every channel or communicator, all recorded, and the others, of which a
 * hash chooses one in 2^bits.  A stratum's matched instances stand for all
 * of its instances (the unmatched ones, whose partner left no record, are
 * assumed to wait like the matched ones), so the category's wait is
 *     W = first_w * first_n / first_m + (calls - first_n) * samp_ww / samp_mw,
 * the second term's mean taken from the first stratum when no sampled
 * instance matched.  In the sampled stratum each instance counts with its
 * weight (match/types.h, wp_match_weight: 1, or 2^j for an instance
 * chosen at a rate thinned j times), in samp_mw and samp_ww as in the
 * block sums below, so that the mean is the stratum's and not that of
 * its early, densely chosen part; the causes a wait is split into carry
 * the same weight (wp_cause_add's callers).  Its 95 % interval is the
 * sampled term's standard error times 1.96, with the finite-population
 * correction.  The sampled
 * term is a ratio estimate from a cluster sample: the hash chooses blocks
 * of numbers, each block's instances together, so the blocks are the
 * draws, with y_i a block's matched wait and m_i its matched instances,
 * R = sum y / sum m and
 *     Var(R) = (1 - f) * sum (y_i - R m_i)^2 / ((n - 1) * n * mean(m)^2)
 * over the n blocks (Cochran, ratio estimation in cluster sampling).
 * Waits that are alike within a block, as in a program that repeats one
 * pattern, make the interval wider than a count of instances would. */
#include <math.h>
#include <stdlib.h>

#include "match/internal.h"
#include "match/measured.h"

pthread_mutex_t wp_match_mu = PTHREAD_MUTEX_INITIALIZER;
unsigned wp_match_dense_log2;
struct wp_match_counts wp_match_cnt;

#define WP_MEAS_SLOTS 8192
static struct wp_measured meas[WP_MEAS_SLOTS];
static uint64_t meas_overflow;

static uint32_t wp_cat_hash(const struct wp_mcat *c)
{
    return (uint32_t)wp_mix64((uint64_t)c->site ^ wp_mix64((uint64_t)c->fn << 16 | (uint64_t)c->sclass << 8 |
                                                           c->role));
}

static int wp_cat_eq(const struct wp_mcat *a, const struct wp_mcat *b)
{
    return a->site == b->site && a->fn == b->fn && a->sclass == b->sclass && a->role == b->role;
}

static struct wp_measured *wp_meas_find(const struct wp_mcat *c, int create)
{
    uint32_t h = wp_cat_hash(c) % WP_MEAS_SLOTS;
    for (uint32_t p = 0; p < WP_MEAS_SLOTS / 2; p++) {
        struct wp_measured *m = &meas[(h + p) % WP_MEAS_SLOTS];
        if (m->cat.site == 0) {
            if (!create)
                return NULL;
            m->cat = *c;
            return m;
        }
        if (wp_cat_eq(&m->cat, c))
            return m;
    }
    return NULL;
}

/* The matched calls' waits and durations per (function, size class,
 * role), for the share of time the category waits (wp_match_wait_share),
 * which splits its held samples (fallback/estimate.c).  Keyed without the
 * site, as the samples are.  By stratum, as the waits above: the first
 * instances (all recorded; f_n of them, f_m matched, their waits and
 * durations summed) and the sampled ones, each weighed by what it stands
 * for (s_n: the weight of all records, s_m of the matched, s_w and s_d
 * their weighed waits and durations), so that a run's early, densely
 * matched calls do not stand for the whole run. */
#define WP_TAIL_SLOTS 4096
static struct wp_tail {
    uint32_t key; /* fn << 16 | sclass << 8 | role, plus 1; 0 free */
    uint64_t f_n, f_m, f_w, f_d;
    double s_n, s_m, s_w, s_d;
} tails[WP_TAIL_SLOTS];

static uint32_t wp_tail_key(int fn, int sclass, int role)
{
    return ((uint32_t)fn << 16 | (uint32_t)sclass << 8 | (uint32_t)role) + 1;
}

static struct wp_tail *wp_tail_find(uint32_t key, int create)
{
    uint32_t h = (uint32_t)wp_mix64(key) % WP_TAIL_SLOTS;
    for (uint32_t p = 0; p < WP_TAIL_SLOTS / 2; p++) {
        uint32_t i = (h + p) % WP_TAIL_SLOTS;
        if (tails[i].key == key)
            return &tails[i];
        if (tails[i].key == 0) {
            if (!create)
                return NULL;
            tails[i].key = key;
            return &tails[i];
        }
    }
    return NULL;
}

double wp_match_wait_share(int fn, int sclass, int role)
{
    const struct wp_tail *t = wp_tail_find(wp_tail_key(fn, sclass, role), 0);
    if (t == NULL || t->f_m + t->s_m == 0)
        return -1;
    /* Each stratum's mean wait and duration per matched call, the other's
     * where it matched none, times the calls it stands for. */
    double fw = t->f_m ? (double)t->f_w / (double)t->f_m : 0, fd = t->f_m ? (double)t->f_d / (double)t->f_m : 0;
    double sw = t->s_m > 0 ? t->s_w / t->s_m : fw, sd = t->s_m > 0 ? t->s_d / t->s_m : fd;
    if (!t->f_m)
        fw = sw, fd = sd;
    double w = fw * (double)t->f_n + sw * t->s_n, d = fd * (double)t->f_n + sd * t->s_n;
    return d > 0 ? (w < d ? w / d : 1) : 0;
}

/* Fold an open block into its category's sums. */
static void wp_mblock_close(struct wp_measured *m, struct wp_mblock *b)
{
    double y = (double)b->y_ns * 1e-9 * b->wt, mm = (double)b->m * b->wt;
    if (b->m) {
        m->cl_n++;
        m->cl_y2 += y * y;
        m->cl_ym += y * mm;
        m->cl_m2 += mm * mm;
    }
    b->used = 0;
}

/* A sampled instance of block blk: into its open block, opening one (and
 * closing the lowest open block when all are taken) if needed. */
static void wp_mblock_add(struct wp_measured *m, uint64_t blk, double wt, int matched, uint64_t wait_ns)
{
    struct wp_mblock *b = NULL, *low = &m->open[0];
    for (int i = 0; i < WP_MEAS_OPEN; i++) {
        struct wp_mblock *o = &m->open[i];
        if (o->used && o->blk == blk) {
            b = o;
            break;
        }
        if (!o->used || (low->used && o->blk < low->blk))
            low = o;
    }
    if (b == NULL) {
        if (low->used)
            wp_mblock_close(m, low);
        b = low;
        *b = (struct wp_mblock){.blk = blk, .used = 1, .wt = wt};
    }
    if (matched) {
        b->m++;
        b->y_ns += wait_ns;
    }
}

void wp_measured_add(const struct wp_mcat *c, int first, uint64_t blk, int matched, uint64_t wait_ns,
                     uint64_t dur_ns)
{
    if (c->site == 0)
        return;
    pthread_mutex_lock(&wp_match_mu);
    struct wp_tail *t = wp_tail_find(wp_tail_key(c->fn, c->sclass, c->role), 1);
    if (t) {
        uint64_t w = wait_ns < dur_ns ? wait_ns : dur_ns;
        if (first) {
            t->f_n++;
            t->f_m += matched != 0;
            t->f_w += matched ? w : 0;
            t->f_d += matched ? dur_ns : 0;
        } else {
            double wt = (double)wp_match_weight(blk << WP_MATCH_BLOCK_LOG2, wp_match_dense_log2);
            t->s_n += wt;
            t->s_m += matched ? wt : 0;
            t->s_w += matched ? wt * (double)w : 0;
            t->s_d += matched ? wt * (double)dur_ns : 0;
        }
    }
    struct wp_measured *m = wp_meas_find(c, 1);
    if (m == NULL) {
        meas_overflow++;
    } else if (first) {
        m->first_n++;
        m->first_m += matched != 0;
        m->first_w += matched ? wait_ns : 0;
    } else {
        double wt = (double)wp_match_weight(blk << WP_MATCH_BLOCK_LOG2, wp_match_dense_log2);
        m->samp_n++;
        m->samp_m += matched != 0;
        m->samp_mw += matched ? wt : 0;
        m->samp_ww += matched ? wt * (double)wait_ns : 0;
        wp_mblock_add(m, blk, wt, matched, wait_ns);
    }
    if (matched)
        wp_match_cnt.matched++;
    else
        wp_match_cnt.unmatched++;
    pthread_mutex_unlock(&wp_match_mu);
}

int64_t wp_match_wait(const struct wp_mcat *c, uint64_t calls, uint64_t *ci_ns, uint64_t *matched)
{
    *ci_ns = 0;
    *matched = 0;
    struct wp_measured *m = wp_meas_find(c, 0);
    if (m == NULL || m->first_m + m->samp_m == 0)
        return -1;
    *matched = m->first_m + m->samp_m;
    double first_mean = m->first_m ? (double)m->first_w / (double)m->first_m : 0;
    double samp_mean = m->samp_mw > 0 ? m->samp_ww / m->samp_mw : first_mean;
    if (!m->first_m)
        first_mean = samp_mean;
    /* Calls beyond the first stratum; the estimator may have counted
     * fewer calls than were recorded here only if its table overflowed. */
    double rest = calls > m->first_n ? (double)(calls - m->first_n) : 0;
    double w = first_mean * (double)m->first_n + samp_mean * rest;
    /* What each matched wait stands for: its causes are scaled alike. */
    double sum = (double)m->first_w + m->samp_ww;
    m->scale = sum > 0 ? w / sum : 1;
    for (int i = 0; i < WP_MEAS_OPEN; i++)
        if (m->open[i].used)
            wp_mblock_close(m, &m->open[i]);
    if (m->cl_n >= 2 && rest > (double)m->samp_m) {
        double n = (double)m->cl_n, r = samp_mean * 1e-9, mbar = m->samp_mw / n;
        double ss = m->cl_y2 - 2 * r * m->cl_ym + r * r * m->cl_m2; /* sum (y_i - R m_i)^2 */
        if (ss < 0)
            ss = 0;
        double f = (double)m->samp_m / rest;
        double var_r = (f < 1 ? 1 - f : 0) * ss / ((n - 1) * n * mbar * mbar); /* s^2 */
        *ci_ns = (uint64_t)(1.96 * rest * sqrt(var_r) * 1e9 + 0.5);
    }
    return (int64_t)(w + 0.5);
}

/* --- causes ------------------------------------------------------------------------------ */

/* The waits of this rank's categories by who caused them; and the set of
 * this rank's computations that caused waits elsewhere. */
#define WP_CAUSE_SLOTS 8192
static struct wp_cause causes[WP_CAUSE_SLOTS];
static uint64_t cause_overflow;
/* The used slots in the order they were taken: the writer reads these
 * rows only, not the table's 8192 slots (512 KiB the run mostly never
 * wrote, each page of them a fault when read). */
static uint32_t cause_order[WP_CAUSE_SLOTS], cause_used;
#define WP_USED_SLOTS 4096
static uint64_t used[WP_USED_SLOTS];

void wp_cause_add(const struct wp_mcat *c, int pattern, int delayer, uint64_t cause, uint64_t wait_ns,
                  int propagated)
{
    if (c->site == 0 || delayer < 0)
        return;
    uint32_t h = (uint32_t)wp_mix64(wp_cat_hash(c) ^
                                    wp_mix64(cause ^ ((uint64_t)(uint32_t)delayer << 1 | (uint64_t)!!propagated))) %
                 WP_CAUSE_SLOTS;
    pthread_mutex_lock(&wp_match_mu);
    for (uint32_t p = 0; p < WP_CAUSE_SLOTS / 2; p++) {
        uint32_t i = (h + p) % WP_CAUSE_SLOTS;
        struct wp_cause *x = &causes[i];
        if (x->n == 0) {
            *x = (struct wp_cause){
                .cat = *c, .pattern = pattern, .delayer = delayer, .cause = cause, .propagated = !!propagated};
            cause_order[cause_used++] = i;
        } else if (!(wp_cat_eq(&x->cat, c) && x->delayer == delayer && x->cause == cause &&
                     x->pattern == pattern && x->propagated == !!propagated)) {
            continue;
        }
        x->n++;
        x->wait_ns += wait_ns;
        pthread_mutex_unlock(&wp_match_mu);
        return;
    }
    cause_overflow++;
    pthread_mutex_unlock(&wp_match_mu);
}

const struct wp_cause *wp_match_cause_at(size_t i)
{
    return i < cause_used ? &causes[cause_order[i]] : NULL;
}

size_t wp_match_cause_count(void)
{
    return cause_used;
}

double wp_match_scale(const struct wp_mcat *c)
{
    const struct wp_measured *m = wp_meas_find(c, 0);
    return m && m->scale > 0 ? m->scale : 1;
}

void wp_cause_used(uint64_t cause)
{
    if (cause == 0)
        return;
    uint32_t h = (uint32_t)wp_mix64(cause) % WP_USED_SLOTS;
    pthread_mutex_lock(&wp_match_mu);
    for (uint32_t p = 0; p < WP_USED_SLOTS / 2; p++) {
        uint64_t *u = &used[(h + p) % WP_USED_SLOTS];
        if (*u == cause || *u == 0) {
            *u = cause;
            break;
        }
    }
    pthread_mutex_unlock(&wp_match_mu);
}

int wp_match_cause_is_used(uint64_t cause)
{
    if (cause == 0)
        return 0;
    uint32_t h = (uint32_t)wp_mix64(cause) % WP_USED_SLOTS;
    for (uint32_t p = 0; p < WP_USED_SLOTS / 2; p++) {
        uint64_t u = used[(h + p) % WP_USED_SLOTS];
        if (u == cause)
            return 1;
        if (u == 0)
            return 0;
    }
    return 0;
}
