/* sampler/objects.c — the table of loaded objects, and the dynamic
 * loader's calls that change it.
 *
 * The table lists every executable segment with its object's
 * .eh_frame_hdr, for the unwinder (sampler/unwind.c), and its object's name
 * and load address, for the partial writer's module+offset frames
 * (wp_cfi_object_sig).  dlopen and dlclose are interposed so that the table is
 * rebuilt before samples are let in again; all three loader calls below
 * are bracketed by the loader-lock guard (state/thread.h, wp_dl_begin), so
 * samples that land while a thread may hold the loader's lock are dropped.
 * See sampler/unwind.h for the contract. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler/unwind.h"
#include "state/thread.h"

#define WP_EXPORT __attribute__((visibility("default")))

typedef void *(*wp_dlopen_t)(const char *, int);
typedef int (*wp_dlclose_t)(void *);
typedef int (*wp_dl_iterate_phdr_t)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
static wp_dl_iterate_phdr_t real_dl_iterate_phdr;
static wp_dlopen_t real_dlopen;
static wp_dlclose_t real_dlclose;

/* Resolve the interposed functions before anything can need them (and long
 * before a timer exists), so no handler ever runs while dlsym does. */
__attribute__((constructor)) static void wp_objects_resolve(void)
{
    real_dlopen = (wp_dlopen_t)dlsym(RTLD_NEXT, "dlopen");
    real_dlclose = (wp_dlclose_t)dlsym(RTLD_NEXT, "dlclose");
    real_dl_iterate_phdr = (wp_dl_iterate_phdr_t)dlsym(RTLD_NEXT, "dl_iterate_phdr");
}

/* The table was built once (the sampler started): from then on every
 * dlopen and dlclose rebuilds it, until the sampler stops for good
 * (wp_cfi_retire_sig). */
static int wp_objects_built;

void wp_cfi_retire_sig(void)
{
    __atomic_store_n(&wp_objects_built, 0, __ATOMIC_RELEASE);
}

/* --- the table of loaded objects ------------------------------------------ */

#define WP_CFI_SEGS 2048
struct wp_cfi_seg {
    uintptr_t lo, hi;  /* an executable PT_LOAD segment */
    const uint8_t *hdr; /* its object's .eh_frame_hdr, or NULL */
};
/* Written by wp_cfi_refresh under the mutex; read by handlers under the
 * sequence count (odd while a rebuild runs).  Every field is accessed
 * atomically (relaxed), so a reader that races a rebuild reads stale or new
 * values, never torn ones, and then sees the count changed and declines. */
static struct wp_cfi_seg wp_segs[WP_CFI_SEGS];
/* For wp_cfi_object_sig (the partial writer's module+offset frames), apart from
 * wp_segs so that the handler's search touches only the ranges. */
static uintptr_t wp_seg_base[WP_CFI_SEGS];
static char wp_seg_name[WP_CFI_SEGS][WP_CFI_NAME];
static int wp_nsegs;
/* The objects themselves, for wp_cfi_module_sig: what the report needs to
 * find each one on disk afterwards and to tell whether it is still the
 * file that was loaded. */
static struct wp_cfi_module wp_mods[WP_CFI_MODS];
static int wp_nmods;
static unsigned wp_seq;
unsigned wp_cfi_gen = 1;
static pthread_mutex_t wp_cfi_lock = PTHREAD_MUTEX_INITIALIZER;

struct wp_cfi_fill {
    struct wp_cfi_seg seg[WP_CFI_SEGS];
    uintptr_t base[WP_CFI_SEGS];
    char name[WP_CFI_SEGS][WP_CFI_NAME]; /* copied in the callback, under the loader's lock */
    int n;
    struct wp_cfi_module mod[WP_CFI_MODS];
    int nmod;
};

/* The GNU build-id note among an object's loaded notes: length, or 0. */
static int wp_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + 12 <= end) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&type, p + 8, 4);
            const uint8_t *name = p + 12, *desc = name + ((namesz + 3) & ~3u);
            if (desc + descsz > end)
                break;
            if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 && descsz > 0) {
                size_t n = descsz < WP_CFI_BUILD_ID ? descsz : WP_CFI_BUILD_ID;
                memcpy(out, desc, n);
                return (int)n;
            }
            p = desc + ((descsz + 3) & ~3u);
        }
    }
    return 0;
}

/* The file of the running program: the loader gives it no name. */
static char wp_exe_path[WP_CFI_PATH];

/* One object's entry of the module table: its file's absolute path, size,
 * modification time and build-id, read now (normal context) so that the
 * signal-time writer only copies them.  Objects with no file (the vDSO)
 * get an empty path. */
static void wp_module_fill(struct wp_cfi_fill *f, const struct dl_phdr_info *info, const char *name)
{
    if (f->nmod == WP_CFI_MODS)
        return;
    struct wp_cfi_module *m = &f->mod[f->nmod++];
    memset(m, 0, sizeof *m);
    m->base = info->dlpi_addr;
    snprintf(m->name, sizeof m->name, "%s", name);
    const char *file = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (file == NULL) {
        if (wp_exe_path[0] == '\0') {
            ssize_t k = readlink("/proc/self/exe", wp_exe_path, sizeof wp_exe_path - 1);
            wp_exe_path[k > 0 ? k : 0] = '\0';
        }
        file = wp_exe_path;
    }
    struct stat st;
    if (file[0] == '/' && stat(file, &st) == 0) {
        snprintf(m->path, sizeof m->path, "%s", file);
        m->size = (uint64_t)st.st_size;
        m->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    }
    m->build_id_len = wp_build_id(info, m->build_id);
    /* waitprof's own object: the symbolizer leaves its frames out (its
     * thread trampoline), and so does the report afterwards. */
    uintptr_t self = (uintptr_t)&wp_module_fill;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && self >= info->dlpi_addr + ph->p_vaddr &&
            self < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            m->self = 1;
    }
}

static int wp_cfi_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct wp_cfi_fill *f = arg;
    const uint8_t *hdr = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : program_invocation_name;
    const char *slash = strrchr(name, '/');
    int mod = -1;
    for (int i = 0; i < info->dlpi_phnum && f->n < WP_CFI_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        f->seg[f->n] = (struct wp_cfi_seg){info->dlpi_addr + ph->p_vaddr,
                                           info->dlpi_addr + ph->p_vaddr + ph->p_memsz, hdr};
        /* Offsets are printed from the load address, as addr2line wants. */
        f->base[f->n] = info->dlpi_addr;
        snprintf(f->name[f->n], WP_CFI_NAME, "%s", slash ? slash + 1 : name);
        if (mod < 0) {
            wp_module_fill(f, info, f->name[f->n]);
            mod = f->nmod;
        }
        f->n++;
    }
    return 0;
}

static struct wp_cfi_fill wp_fill; /* static, not on the stack: 260 KiB; under the mutex */

static int wp_seg_cmp(const void *a, const void *b)
{
    uintptr_t x = wp_fill.seg[*(const int *)a].lo, y = wp_fill.seg[*(const int *)b].lo;
    return x < y ? -1 : x > y;
}

void wp_cfi_refresh(void)
{
    static int order[WP_CFI_SEGS];
    struct wp_cfi_fill *f = &wp_fill;
    pthread_mutex_lock(&wp_cfi_lock);
    f->n = 0;
    f->nmod = 0;
    dl_iterate_phdr(wp_cfi_cb, f);
    for (int i = 0; i < f->n; i++)
        order[i] = i;
    qsort(order, (size_t)f->n, sizeof order[0], wp_seg_cmp);
    __atomic_fetch_add(&wp_seq, 1, __ATOMIC_ACQ_REL); /* odd: rebuilding */
    for (int i = 0; i < f->n; i++) {
        int j = order[i];
        __atomic_store_n(&wp_segs[i].lo, f->seg[j].lo, __ATOMIC_RELAXED);
        __atomic_store_n(&wp_segs[i].hi, f->seg[j].hi, __ATOMIC_RELAXED);
        __atomic_store_n(&wp_segs[i].hdr, f->seg[j].hdr, __ATOMIC_RELAXED);
        __atomic_store_n(&wp_seg_base[i], f->base[j], __ATOMIC_RELAXED);
        for (int c = 0; c < WP_CFI_NAME; c++)
            __atomic_store_n(&wp_seg_name[i][c], f->name[j][c], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&wp_nsegs, f->n, __ATOMIC_RELAXED);
    /* Byte by byte with relaxed atomics, as the names above: a reader
     * racing this copy reads old or new bytes and then declines. */
    for (int i = 0; i < f->nmod; i++) {
        const unsigned char *src = (const unsigned char *)&f->mod[i];
        unsigned char *dst = (unsigned char *)&wp_mods[i];
        for (size_t c = 0; c < sizeof wp_mods[i]; c++)
            __atomic_store_n(&dst[c], src[c], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&wp_nmods, f->nmod, __ATOMIC_RELAXED);
    __atomic_fetch_add(&wp_cfi_gen, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&wp_seq, 1, __ATOMIC_RELEASE); /* even: done */
    pthread_mutex_unlock(&wp_cfi_lock);
    __atomic_store_n(&wp_objects_built, 1, __ATOMIC_RELEASE);
}

/* The index of the segment holding pc, or -1; read under the caller's
 * sequence count. */
static int wp_cfi_seg_of(uintptr_t pc)
{
    int lo = 0, hi = __atomic_load_n(&wp_nsegs, __ATOMIC_RELAXED) - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (pc < __atomic_load_n(&wp_segs[mid].lo, __ATOMIC_RELAXED))
            hi = mid - 1;
        else if (pc >= __atomic_load_n(&wp_segs[mid].hi, __ATOMIC_RELAXED))
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

/* A reader's check that no rebuild overlapped what it read since s0. */
static int wp_cfi_unchanged(unsigned s0)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&wp_seq, __ATOMIC_RELAXED) == s0;
}

/* The .eh_frame_hdr of the object whose code holds pc, or NULL. */
const uint8_t *wp_cfi_hdr_sig(uintptr_t pc)
{
    unsigned s0 = __atomic_load_n(&wp_seq, __ATOMIC_ACQUIRE);
    if (s0 & 1)
        return NULL;
    int i = wp_cfi_seg_of(pc);
    const uint8_t *hdr = i < 0 ? NULL : __atomic_load_n(&wp_segs[i].hdr, __ATOMIC_RELAXED);
    return wp_cfi_unchanged(s0) ? hdr : NULL;
}

int wp_cfi_object_sig(uintptr_t pc, uintptr_t *base, char *name, size_t cap)
{
    if (cap == 0)
        return -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned s0 = __atomic_load_n(&wp_seq, __ATOMIC_ACQUIRE);
        if (s0 & 1)
            continue;
        int i = wp_cfi_seg_of(pc);
        if (i < 0)
            return -1;
        *base = __atomic_load_n(&wp_seg_base[i], __ATOMIC_RELAXED);
        size_t c = 0;
        while (c + 1 < cap && c < WP_CFI_NAME && (name[c] = __atomic_load_n(&wp_seg_name[i][c], __ATOMIC_RELAXED)))
            c++;
        name[c] = '\0';
        if (wp_cfi_unchanged(s0))
            return 0;
    }
    return -1;
}

int wp_cfi_module_sig(int i, struct wp_cfi_module *m)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned s0 = __atomic_load_n(&wp_seq, __ATOMIC_ACQUIRE);
        if (s0 & 1)
            continue;
        if (i < 0 || i >= __atomic_load_n(&wp_nmods, __ATOMIC_RELAXED))
            return -1;
        const unsigned char *src = (const unsigned char *)&wp_mods[i];
        unsigned char *dst = (unsigned char *)m;
        for (size_t c = 0; c < sizeof *m; c++)
            dst[c] = __atomic_load_n(&src[c], __ATOMIC_RELAXED);
        if (wp_cfi_unchanged(s0))
            return 0;
    }
    return -1;
}

/* --- the loader's calls ---------------------------------------------------- */

WP_EXPORT void *dlopen(const char *file, int mode)
{
    if (real_dlopen == NULL)
        wp_objects_resolve();
    wp_dl_begin();
    void *h = real_dlopen(file, mode);
    /* New objects are unwound by waitprof's unwinder (and named by the
     * partial writer) only once its table lists them; rebuilt before
     * samples are let in again. */
    if (h && __atomic_load_n(&wp_objects_built, __ATOMIC_ACQUIRE))
        wp_cfi_refresh();
    wp_dl_end();
    return h;
}

/* dl_iterate_phdr holds the loader's write lock while it runs its callback.
 * libunwind calls it from the handler when an address is not yet cached,
 * while holding a lock of its own; if the handler ran on a thread that holds
 * the loader lock, the two would wait for each other.  So a thread in
 * dl_iterate_phdr (the program's, libgcc's, or waitprof's own) counts as
 * busy and its samples are dropped.  The handler's own nested calls pass
 * through here too, harmlessly. */
WP_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    if (real_dl_iterate_phdr == NULL)
        wp_objects_resolve();
    wp_dl_begin();
    int rc = real_dl_iterate_phdr(cb, data);
    wp_dl_end();
    return rc;
}

WP_EXPORT int dlclose(void *handle)
{
    if (real_dlclose == NULL)
        wp_objects_resolve();
    wp_dl_begin();
    int rc = real_dlclose(handle);
    /* An unloaded object's address range may be reused: the table and
     * every thread's rules are renewed before samples come in again. */
    if (__atomic_load_n(&wp_objects_built, __ATOMIC_ACQUIRE))
        wp_cfi_refresh();
    wp_dl_end();
    return rc;
}
