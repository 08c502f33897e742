/* fallback/callpath.c — call paths as wait-state call sites
 * (WAITPROF_CALLPATH_DEPTH > 1); see fallback/stats.h.  Apart from stats.c
 * because it needs libunwind and the thread record, which the estimator's
 * unit tests do without. */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "fallback/stats.h"
#include "state/thread.h"

/* --- call paths ----------------------------------------------------------------- */

/* Per thread, the paths seen so far, by hash (open addressing; a path is
 * never removed).  Reserved on the first recorded call at depth > 1. */
#define WP_PATHS 1024
struct wp_path {
    uint64_t hash; /* 0: unused */
    int n;
    uintptr_t pc[WP_CALLPATH_MAX];
};
struct wp_paths {
    uint32_t used;
    struct wp_path p[WP_PATHS];
};
static struct wp_table_list wp_path_list;

__attribute__((noinline)) uintptr_t wp_callpath_site(uintptr_t ret)
{
    struct wp_paths *pt = wp_table_mine(WP_TABLE_PATHS, sizeof *pt, &wp_path_list, NULL);
    if (__builtin_expect(pt == NULL, 0))
        return ret;
    /* unw_backtrace from normal context, with libunwind's per-thread trace
     * cache.  The sampler's handler uses the same cache; while this thread
     * is in here the handler takes its slow path (wp_self.unwinding), which
     * does not touch the cache, so an interrupting sample cannot corrupt
     * the trace in progress.  ret is found in the trace by value: the frames
     * of this function and of the wrapper before it are not counted. */
    void *buf[WP_CALLPATH_MAX + 8];
    wp_self.unwinding = 1;
    atomic_signal_fence(memory_order_seq_cst);
    int n = unw_backtrace(buf, WP_CALLPATH_MAX + 8);
    atomic_signal_fence(memory_order_seq_cst);
    wp_self.unwinding = 0;
    int start = -1;
    for (int i = 0; i < n && i < 8; i++)
        if ((uintptr_t)buf[i] == ret) {
            start = i;
            break;
        }
    if (start < 0)
        return ret;
    int depth = wp_callpath_depth, k = n - start < depth ? n - start : depth;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < k; i++) {
        h ^= (uint64_t)(uintptr_t)buf[start + i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    h |= 1; /* never 0, the empty slot */
    for (uint32_t probe = 0, i = (uint32_t)(h >> 20) & (WP_PATHS - 1); probe < WP_PATHS;
         probe++, i = (i + 1) & (WP_PATHS - 1)) {
        struct wp_path *p = &pt->p[i];
        if (p->hash == h)
            return (uintptr_t)h;
        if (p->hash == 0) {
            if (pt->used + 1 > WP_PATHS - WP_PATHS / 4)
                return ret;
            p->n = k;
            for (int j = 0; j < k; j++)
                p->pc[j] = (uintptr_t)buf[start + j];
            p->hash = h;
            pt->used++;
            return (uintptr_t)h;
        }
    }
    return ret;
}

int wp_callpath_get(uintptr_t site, uintptr_t *pcs, int max)
{
    int nt = wp_table_count(&wp_path_list);
    for (int t = 0; t < nt; t++) {
        const struct wp_paths *pt = wp_table_at(&wp_path_list, t);
        if (pt == NULL)
            continue;
        for (uint32_t probe = 0, i = (uint32_t)((uint64_t)site >> 20) & (WP_PATHS - 1); probe < WP_PATHS;
             probe++, i = (i + 1) & (WP_PATHS - 1)) {
            const struct wp_path *p = &pt->p[i];
            if (p->hash == 0)
                break;
            if (p->hash == (uint64_t)site) {
                int n = p->n < max ? p->n : max;
                for (int j = 0; j < n; j++)
                    pcs[j] = p->pc[j];
                return n;
            }
        }
    }
    return 0;
}
