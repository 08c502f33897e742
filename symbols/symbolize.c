/* symbols/symbolize.c — see symbols/symbolize.h.  Uses elfutils' libdwfl on
 * the live process: it reads /proc/self/maps and each module's symbol table
 * (.symtab where the file has one, .dynsym otherwise), and the module's own
 * DWARF for file:line and a Fortran main program's name.  Separate debug
 * files are not searched, so no debuginfod server is ever contacted. */
#include <dlfcn.h>
#include <dwarf.h>
#include <limits.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/folded.h"
#include "state/thread.h"
#include "symbols/dwname.h"
#include "symbols/symbolize.h"
#include "state/functions.h"

struct wp_sym_entry {
    uintptr_t ip;
    char *name; /* NULL: left out */
    int used;
    int located; /* wp_symbolizer_frame_locs() has reported it */
    int symbol;  /* its module's symbol table names the function at ip */
};

struct wp_symbolizer {
    Dwfl *dwfl;
    int shared; /* dwfl is the shared module list (wp_mods) */
    Dwfl_Module *self;
    wp_demangler demangle;
    struct wp_sym_entry *tab;
    size_t cap, n;
};

static int wp_no_debuginfo(Dwfl_Module *m, void **ud, const char *modname, Dwarf_Addr base,
                           const char *file, const char *debuglink, GElf_Word crc, char **name)
{
    (void)m, (void)ud, (void)modname, (void)base, (void)file, (void)debuglink, (void)crc, (void)name;
    return -1;
}

static char *wp_debuginfo_path;
static const Dwfl_Callbacks wp_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = wp_no_debuginfo,
    .debuginfo_path = &wp_debuginfo_path,
};

/* The loader's counts of objects loaded and unloaded so far (glibc's
 * dlpi_adds and dlpi_subs, the same in every entry): while they stay the
 * same, so does the list of modules. */
static int wp_load_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1;
}

/* One module list for every symbolizer while no object is loaded or
 * unloaded.  Reporting the modules of /proc/self/maps costs about 1 ms in
 * a process with Open MPI's components loaded (136 modules here), and the
 * steps of MPI_Finalize make four symbolizers one after another
 * (doc/performance.md, "Start-up and finalize"); the symbols and line
 * tables libdwfl reads, and the indexes of symbols/dwname.h, stay loaded
 * with the list, for the next one.  A list
 * that has gone stale while a symbolizer still uses it is left to that
 * symbolizer, and the next one reports a fresh list. */
static struct {
    pthread_mutex_t mu;
    Dwfl *dwfl;
    Dwfl_Module *self;
    unsigned long long counts[2];
    int users; /* symbolizers that use dwfl */
} wp_mods = {.mu = PTHREAD_MUTEX_INITIALIZER};

static Dwfl *wp_report(Dwfl_Module **self)
{
    Dwfl *d = dwfl_begin(&wp_callbacks);
    if (d == NULL)
        return NULL;
    dwfl_report_begin(d);
    if (dwfl_linux_proc_report(d, getpid()) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
        dwfl_end(d);
        return NULL;
    }
    *self = dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&wp_symbolizer_new);
    return d;
}

struct wp_symbolizer *wp_symbolizer_new(void)
{
    struct wp_symbolizer *sy = calloc(1, sizeof *sy);
    if (sy == NULL)
        return NULL;
    unsigned long long counts[2] = {0, 0};
    dl_iterate_phdr(wp_load_counts, counts);
    pthread_mutex_lock(&wp_mods.mu);
    int fresh = wp_mods.dwfl && counts[0] && counts[0] == wp_mods.counts[0] && counts[1] == wp_mods.counts[1];
    if (!fresh && wp_mods.users == 0) {
        if (wp_mods.dwfl) {
            wp_dw_forget(wp_mods.dwfl);
            dwfl_end(wp_mods.dwfl);
        }
        wp_mods.dwfl = wp_report(&wp_mods.self);
        wp_mods.counts[0] = counts[0];
        wp_mods.counts[1] = counts[1];
        fresh = wp_mods.dwfl != NULL;
    }
    if (fresh) {
        sy->dwfl = wp_mods.dwfl;
        sy->self = wp_mods.self;
        sy->shared = 1;
        wp_mods.users++;
    }
    pthread_mutex_unlock(&wp_mods.mu);
    if (!fresh)
        sy->dwfl = wp_report(&sy->self);
    sy->demangle = (wp_demangler)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    sy->cap = 4096;
    sy->tab = calloc(sy->cap, sizeof *sy->tab);
    if (sy->tab == NULL) {
        wp_symbolizer_free(sy);
        return NULL;
    }
    return sy;
}

static char *wp_lookup(struct wp_symbolizer *sy, uintptr_t ip, int fn, int *symbol)
{
    char buf[1024], raw[1024];
    Dwfl_Module *mod = sy->dwfl ? dwfl_addrmodule(sy->dwfl, ip) : NULL;
    const char *sym = mod ? wp_dw_addrname(mod, ip) : NULL;
    *symbol = sym != NULL;

    if (wp_is_wrapper_ip(ip)) {
        int id = sym ? wp_fn_lookup(sym) : fn;
        if (id <= 0 || id >= WP_FN_COUNT)
            id = fn;
        snprintf(raw, sizeof raw, "%s", (id > 0 && id < WP_FN_COUNT) ? wp_fn_table[id].name : "MPI");
    } else if (mod && mod == sy->self) {
        return NULL; /* waitprof's own thread trampoline */
    } else if (sym) {
        return wp_dw_name(mod, ip, sym, sy->demangle, buf, sizeof buf) ? strdup(buf) : NULL;
    } else if (mod && wp_dw_pltname(mod, ip, raw, sizeof raw)) {
        /* A stub of the procedure linkage table, named below as a
         * symbol's name is. */
    } else if (mod) {
        Dwarf_Addr start;
        const char *path = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
        const char *base = path ? strrchr(path, '/') : NULL;
        snprintf(raw, sizeof raw, "%s+0x%llx", base ? base + 1 : (path ? path : "?"),
                 (unsigned long long)(ip - start));
    } else {
        snprintf(raw, sizeof raw, "0x%llx", (unsigned long long)ip);
    }
    wp_frame_sanitize(buf, sizeof buf, raw);
    return strdup(buf);
}

static int wp_grow(struct wp_symbolizer *sy)
{
    size_t cap = sy->cap * 2;
    struct wp_sym_entry *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    for (size_t i = 0; i < sy->cap; i++)
        if (sy->tab[i].used) {
            size_t j = (sy->tab[i].ip * 11400714819323198485ull) & (cap - 1);
            while (t[j].used)
                j = (j + 1) & (cap - 1);
            t[j] = sy->tab[i];
        }
    free(sy->tab);
    sy->tab = t;
    sy->cap = cap;
    return 0;
}

/* ip's entry in the cache, named on first use; NULL when memory ran out. */
static struct wp_sym_entry *wp_entry(struct wp_symbolizer *sy, uintptr_t ip, int fn)
{
    if (sy->n * 2 >= sy->cap && wp_grow(sy) != 0)
        return NULL;
    /* Wrapper frames depend on fn only when symbols are missing; key them
     * apart so that such a frame never takes another call's name. */
    uintptr_t key = wp_is_wrapper_ip(ip) ? ip ^ ((uintptr_t)fn << 48) : ip;
    size_t j = (key * 11400714819323198485ull) & (sy->cap - 1);
    while (sy->tab[j].used) {
        if (sy->tab[j].ip == key)
            return &sy->tab[j];
        j = (j + 1) & (sy->cap - 1);
    }
    sy->tab[j].used = 1;
    sy->tab[j].ip = key;
    sy->tab[j].name = wp_lookup(sy, ip, fn, &sy->tab[j].symbol);
    sy->n++;
    return &sy->tab[j];
}

const char *wp_symbolizer_name(struct wp_symbolizer *sy, uintptr_t ip, int fn)
{
    struct wp_sym_entry *e = wp_entry(sy, ip, fn);
    return e ? e->name : "??";
}

void wp_symbolizer_free(struct wp_symbolizer *sy)
{
    if (sy == NULL)
        return;
    for (size_t i = 0; i < sy->cap && sy->tab; i++)
        free(sy->tab[i].name);
    free(sy->tab);
    if (sy->shared) {
        pthread_mutex_lock(&wp_mods.mu);
        wp_mods.users--;
        pthread_mutex_unlock(&wp_mods.mu);
    } else if (sy->dwfl) {
        wp_dw_forget(sy->dwfl);
        dwfl_end(sy->dwfl);
    }
    free(sy);
}

void wp_symbolizer_site(struct wp_symbolizer *sy, uintptr_t ret, char *buf, size_t cap)
{
    uintptr_t ip = ret ? ret - 1 : 0; /* inside the call instruction */
    const char *name = wp_symbolizer_name(sy, ip, 0);
    if (name == NULL)
        name = "?";
    /* A call made in inlined code: the site is the innermost function,
     * whose file and line the line table gives. */
    char inner[512];
    const char *last = strrchr(name, ';');
    if (last) {
        snprintf(inner, sizeof inner, "%s", last + 1);
        size_t l = strlen(inner);
        if (l >= 4 && strcmp(inner + l - 4, "_[i]") == 0)
            inner[l - 4] = '\0';
        name = inner;
    }
    Dwfl_Module *mod = sy->dwfl ? dwfl_addrmodule(sy->dwfl, ip) : NULL;
    Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, ip) : NULL;
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (file && lineno > 0) {
        const char *base = strrchr(file, '/');
        char raw[1200];
        snprintf(raw, sizeof raw, "%s (%s:%d)", name, base ? base + 1 : file, lineno);
        wp_frame_sanitize(buf, cap, raw);
    } else {
        snprintf(buf, cap, "%s", name);
    }
}

/* The file and line where die's function is declared: on the DIE, or on
 * what it refers to (an inlined or out-of-line instance's abstract origin,
 * a C++ member's declaration in its class).  A relative file name is
 * joined to the compilation directory, and made canonical when the file is
 * still there.  out is "" and *line 0 when DWARF does not say. */
static void wp_decl(Dwarf_Die *cu, Dwarf_Die *die, char *out, size_t cap, int *line)
{
    Dwarf_Die d = *die, ref;
    const char *file = NULL;
    for (int hops = 0; hops < 4; hops++) {
        file = dwarf_decl_file(&d);
        if (file != NULL)
            break;
        Dwarf_Attribute a;
        if ((dwarf_attr(&d, DW_AT_abstract_origin, &a) == NULL && dwarf_attr(&d, DW_AT_specification, &a) == NULL) ||
            dwarf_formref_die(&a, &ref) == NULL)
            break;
        d = ref;
    }
    out[0] = '\0';
    *line = 0;
    if (file == NULL || dwarf_decl_line(&d, line) != 0) {
        *line = 0;
        return;
    }
    Dwarf_Attribute a;
    const char *dir = file[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
    char joined[PATH_MAX];
    snprintf(joined, sizeof joined, "%s%s%s", dir ? dir : "", dir ? "/" : "", file);
    if (realpath(joined, out) == NULL || strlen(out) >= cap)
        snprintf(out, cap, "%s", joined);
}

void wp_symbolizer_frame_locs(struct wp_symbolizer *sy, uintptr_t ip, wp_frame_loc_fn *cb, void *arg)
{
    /* Each address once: the callers pass every frame of every stack. */
    struct wp_sym_entry *e = wp_entry(sy, ip, 0);
    if (e == NULL || e->located)
        return;
    e->located = 1;
    const char *chain = e->name;
    Dwfl_Module *mod = sy->dwfl ? dwfl_addrmodule(sy->dwfl, ip) : NULL;
    if (chain == NULL || mod == NULL || mod == sy->self || wp_is_wrapper_ip(ip) || !e->symbol)
        return;
    Dwarf_Die *scopes = NULL, *cu;
    int n = wp_dw_scopes(mod, ip, &scopes, &cu);
    /* The name's frames, outermost first, are the function and then the
     * inlined scopes from the outermost in (wp_inlined): walk both
     * together, so each frame gets its own scope's declaration. */
    const char *p = chain;
    int i = n - 1;
    while (i >= 0 && dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
        i--;
    for (int first = 1; *p; first = 0) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        Dwarf_Die *die = NULL;
        if (first) {
            die = i >= 0 ? &scopes[i] : NULL;
        } else {
            while (--i >= 0 && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
                ;
            die = i >= 0 ? &scopes[i] : NULL;
        }
        char file[PATH_MAX];
        int line = 0;
        file[0] = '\0';
        if (die)
            wp_decl(cu, die, file, sizeof file, &line);
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        cb(arg, name, file[0] ? file : NULL, line, !first);
        p += len;
        if (*p == ';')
            p++;
    }
    free(scopes);
}
