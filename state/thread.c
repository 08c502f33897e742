/* state/thread.c — the per-thread record, the registry and the read API.
 * See state/thread.h for the contract. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/format.h"
#include "state/clock.h"
#include "state/functions.h"
#include "state/hooks.h"
#include "state/thread.h"

__thread wp_thread_t wp_self __attribute__((tls_model("initial-exec")));

/* Lean wrappers (wrap/wrap.h): set by the MPI_Init hook, read by the
 * wrappers and the handler. */
int wp_lean;
int wp_foreign;
int wp_errors_may_return;

int (*wp_hook_stalled)(void);

struct wp_slot wp_slots[WP_MAX_THREADS];
volatile int wp_nslots;

struct wp_slot *wp_registry_claim(void)
{
    int i = __atomic_fetch_add(&wp_nslots, 1, __ATOMIC_ACQ_REL);
    if (i >= WP_MAX_THREADS)
        return NULL;
    wp_slots[i].index = i;
    wp_slots[i].tid = gettid();
    wp_slots[i].ovf_fd = -1;
    return &wp_slots[i];
}

#define WP_EXPORT __attribute__((visibility("default")))

/* The three functions below read only the calling thread's initial-exec TLS
 * record, constant tables and the clock's globals (wp_ticks_to_ns is plain
 * arithmetic), so they are async-signal-safe. */
WP_EXPORT int waitprof_state(void)
{
    return wp_self.state;
}

/* The public state values are the formats' (format/format.h). */
_Static_assert(WAITPROF_STATE_NOT_IN_MPI == WP_STATE_NOT_IN_MPI && WAITPROF_STATE_WORK == WP_STATE_WORK &&
                   WAITPROF_STATE_STALL == WP_STATE_STALL,
               "include/waitprof.h and format/format.h disagree on the MPI states");

WP_EXPORT const char *waitprof_state_name(int state)
{
    return wp_state_name(state);
}

WP_EXPORT int waitprof_thread_state(struct waitprof_thread_state *out)
{
    const wp_thread_t *t = &wp_self;
    int fn = t->fn;
    out->state = t->state;
    out->function = fn;
    out->function_name = (fn > 0 && fn < WP_FN_COUNT) ? wp_fn_table[fn].name : "none";
    uint64_t ticks = t->enter_ticks;
    out->enter_ns = ticks ? wp_ticks_to_ns(ticks) : 0;
    return WAITPROF_API_VERSION;
}

const char *wp_class_name(enum wp_class c)
{
    static const char *const names[WP_CLASS_COUNT] = {
        "env", "send", "recv", "sendrecv", "probe", "wait", "test", "start",
        "nxn", "barrier", "one2n", "n2one", "rma", "file", "comm"};
    return (c >= 0 && c < WP_CLASS_COUNT) ? names[c] : "unknown";
}

int wp_fn_lookup(const char *symbol)
{
    char base[128];
    /* The lean, full and fast forms of a C wrapper (wrap/wrap.h). */
    if (strncmp(symbol, "wp_lean_", 8) == 0 || strncmp(symbol, "wp_full_", 8) == 0 ||
        strncmp(symbol, "wp_fast_", 8) == 0)
        symbol += 8;
    size_t n = strlen(symbol);
    if (n == 0 || n >= sizeof base)
        return WP_FN_NONE;
    memcpy(base, symbol, n + 1);
    /* Strip the binding decorations: f08 suffix, trailing underscores, _c. */
    if (n > 5 && strcasecmp(base + n - 5, "_f08_") == 0)
        base[n -= 5] = '\0';
    while (n > 0 && base[n - 1] == '_')
        base[--n] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 1; i < WP_FN_COUNT; i++)
            if (strcasecmp(wp_fn_table[i].name, base) == 0)
                return i;
        if (n > 2 && strcmp(base + n - 2, "_c") == 0)
            base[n -= 2] = '\0';
        else
            break;
    }
    return WP_FN_NONE;
}

void *wp_table_claim(enum wp_table_kind kind, size_t bytes, struct wp_table_list *list, void (*init)(void *))
{
    wp_thread_t *t = &wp_self;
    if (t->table_failed[kind])
        return NULL;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int i = m == MAP_FAILED ? WP_MAX_TABLES : list ? __atomic_fetch_add(&list->n, 1, __ATOMIC_ACQ_REL) : 0;
    if (i >= WP_MAX_TABLES) {
        if (m != MAP_FAILED)
            munmap(m, bytes);
        t->table_failed[kind] = 1;
        return NULL;
    }
    if (init)
        init(m);
    if (list)
        __atomic_store_n(&list->all[i], m, __ATOMIC_RELEASE);
    t->table[kind] = m;
    return m;
}

int wp_dl_busy;

void wp_dl_begin(void)
{
    __atomic_fetch_add(&wp_dl_busy, 1, __ATOMIC_ACQ_REL);
}

void wp_dl_end(void)
{
    __atomic_fetch_sub(&wp_dl_busy, 1, __ATOMIC_ACQ_REL);
}
