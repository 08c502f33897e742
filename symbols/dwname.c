/* symbols/dwname.c — see symbols/dwname.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/folded.h"
#include "symbols/dwname.h"
#include "symbols/names.h"

static int wp_left_out(const char *name)
{
    static const char *const noise[] = {"_start", "__libc_start_main", "__libc_start_main_impl",
                                        "__libc_start_call_main", "start_thread", "clone",
                                        "clone3", "__clone", "__clone3", NULL};
    for (int i = 0; noise[i]; i++)
        if (strcmp(name, noise[i]) == 0)
            return 1;
    return 0;
}

/* The DWARF scopes that contain ip, innermost first, as libdw finds them
 * (symbols/dwname.h, wp_dw_scopes_libdw): dwarf_getscopes() alone leaves
 * the inlined levels after the innermost out, because from an inlined
 * subroutine it goes on with the scopes of its abstract definition; the
 * innermost scope's own parents (dwarf_getscopes_die) are the concrete
 * chain. */
int wp_dw_scopes_libdw(Dwfl_Module *mod, uintptr_t ip, Dwarf_Die **scopes, Dwarf_Die **cu)
{
    Dwarf_Addr bias = 0;
    *cu = dwfl_module_addrdie(mod, ip, &bias);
    *scopes = NULL;
    Dwarf_Die *found = NULL;
    int n = *cu ? dwarf_getscopes(*cu, ip - bias, &found) : 0;
    if (n <= 0) {
        free(found);
        return 0;
    }
    Dwarf_Die inner = found[0];
    free(found);
    n = dwarf_getscopes_die(&inner, scopes);
    if (n <= 0) {
        free(*scopes);
        *scopes = NULL;
        return 0;
    }
    return n;
}

/* --- the scope index -------------------------------------------------------
 *
 * Both libdw calls above walk the compilation unit from its first DIE:
 * dwarf_getscopes() tests every function of the unit for the address, and
 * dwarf_getscopes_die() visits every scope before the one it is given.  In
 * a unit of 20 000 functions a frame cost about 8 ms (the mean over frames
 * spread across it), and the finalize step names each frame several times:
 * MPI_Finalize took seconds (doc/performance.md, "Naming frames in a large
 * program").  The index makes it one binary search per frame: for each
 * unit a frame fell in, the address ranges of the unit's children, sorted,
 * built on the unit's first frame and kept with the module (its Dwfl_Module
 * user data) until wp_dw_forget().
 *
 * The answer is libdw's.  dwarf_getscopes() prunes every DIE whose ranges
 * do not contain the address and reports the deepest DIE it reaches first
 * in DIE order, descending only into the tags that may own scopes; the
 * index finds the first child of the unit (in DIE order) whose ranges
 * contain the address, and from there the same descent runs over that one
 * function's DIEs.  The path it took is the chain dwarf_getscopes_die()
 * reports.  A unit or function that imports another (DW_TAG_imported_unit,
 * whose children libdw walks as if they were the importer's) goes to libdw
 * instead; tests/unit/test_dwscopes.c compares the two on every address of
 * a program. */

struct wp_dw_range {
    Dwarf_Addr lo, hi;
    size_t child; /* the child's place among the unit's children */
    Dwarf_Die die;
};
struct wp_dw_unit {
    Dwarf_Off off; /* the unit DIE's offset; (Dwarf_Off)-1: an empty slot */
    int libdw;     /* the unit imports another: ask libdw */
    size_t n;
    struct wp_dw_range *r; /* sorted by lo */
    Dwarf_Addr *reach;     /* reach[i]: the largest hi of r[0..i] */
};
/* The symbol index of wp_dw_addrname(): the module's sized symbols as
 * libdw's search considers them, for each of its two passes (0: the global
 * symbols, 1: the local ones, searched only when no global one names the
 * address), sorted by address, with reach[] as in struct wp_dw_unit, and
 * the addresses of the first pass's sizeless symbols. */
struct wp_dw_sym {
    Dwarf_Addr value;
    uint32_t size, ndx;
};
struct wp_dw_syms {
    int libdw; /* ask libdw for every address (see wp_dw_syms_build) */
    int passes;
    size_t n[2];
    struct wp_dw_sym *s[2];
    Dwarf_Addr *reach[2];
    size_t nlabels[2];
    Dwarf_Addr *labels[2]; /* the sizeless symbols' addresses, sorted */
};
struct wp_dw_module {
    size_t cap, n; /* open addressing by off */
    struct wp_dw_unit *units;
    struct wp_dw_syms *syms;
};

static pthread_mutex_t wp_dw_mu = PTHREAD_MUTEX_INITIALIZER;

/* How many of the n elements at base, each size bytes and sorted by the
 * address at offset key within it, have that address at or below addr:
 * the one binary search of both indexes (ranges by start, symbols by
 * value, labels). */
static size_t wp_dw_upto(const void *base, size_t n, size_t size, size_t key, Dwarf_Addr addr)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        Dwarf_Addr v;
        memcpy(&v, (const char *)base + m * size + key, sizeof v);
        if (v <= addr)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static int wp_dw_owns_scopes(int tag)
{
    switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_module:
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
        return 1;
    default:
        return 0;
    }
}

static int wp_dw_range_cmp(const void *a, const void *b)
{
    const struct wp_dw_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->child < y->child ? -1 : x->child > y->child;
}

/* The ranges of cu's children into u; -1 when memory ran out. */
static int wp_dw_unit_build(Dwarf_Die *cu, struct wp_dw_unit *u)
{
    Dwarf_Die c;
    size_t cap = 0, child = 0;
    if (dwarf_child(cu, &c) != 0)
        return 0; /* no children: nothing contains any address */
    do {
        if (dwarf_tag(&c) == DW_TAG_imported_unit) {
            u->libdw = 1;
            return 0;
        }
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0) {
            if (u->n == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                struct wp_dw_range *r = realloc(u->r, ncap * sizeof *r);
                if (r == NULL)
                    return -1;
                u->r = r;
                cap = ncap;
            }
            u->r[u->n++] = (struct wp_dw_range){lo, hi, child, c};
        }
        child++;
    } while (dwarf_siblingof(&c, &c) == 0);
    if (u->n == 0)
        return 0;
    qsort(u->r, u->n, sizeof *u->r, wp_dw_range_cmp);
    u->reach = malloc(u->n * sizeof *u->reach);
    if (u->reach == NULL)
        return -1;
    for (size_t i = 0; i < u->n; i++)
        u->reach[i] = i && u->reach[i - 1] > u->r[i].hi ? u->reach[i - 1] : u->r[i].hi;
    return 0;
}

static void wp_dw_unit_free(struct wp_dw_unit *u)
{
    free(u->r);
    free(u->reach);
}

/* mod's indexes, in its user data; NULL when memory ran out.  Called
 * under wp_dw_mu. */
static struct wp_dw_module *wp_dw_module_of(Dwfl_Module *mod)
{
    void **ud = NULL;
    dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
    if (ud == NULL)
        return NULL;
    if (*ud == NULL)
        *ud = calloc(1, sizeof(struct wp_dw_module));
    return *ud;
}

/* cu's index in mod's table, built on first use; NULL when memory ran
 * out.  Called under wp_dw_mu. */
static struct wp_dw_unit *wp_dw_unit_of(Dwfl_Module *mod, Dwarf_Die *cu)
{
    struct wp_dw_module *m = wp_dw_module_of(mod);
    if (m == NULL)
        return NULL;
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        struct wp_dw_unit *t = malloc(cap * sizeof *t);
        if (t == NULL)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            t[i].off = (Dwarf_Off)-1;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->units[i].off == (Dwarf_Off)-1)
                continue;
            size_t j = (m->units[i].off * 11400714819323198485ull) & (cap - 1);
            while (t[j].off != (Dwarf_Off)-1)
                j = (j + 1) & (cap - 1);
            t[j] = m->units[i];
        }
        free(m->units);
        m->units = t;
        m->cap = cap;
    }
    Dwarf_Off off = dwarf_dieoffset(cu);
    size_t j = (off * 11400714819323198485ull) & (m->cap - 1);
    while (m->units[j].off != (Dwarf_Off)-1) {
        if (m->units[j].off == off)
            return &m->units[j];
        j = (j + 1) & (m->cap - 1);
    }
    struct wp_dw_unit u = {.off = off};
    if (wp_dw_unit_build(cu, &u) != 0) {
        wp_dw_unit_free(&u);
        return NULL;
    }
    m->units[j] = u;
    m->n++;
    return &m->units[j];
}

/* The first child of cu, in DIE order, whose ranges contain pc, into *top:
 * 1 if there is one, 0 if none, -1 to ask libdw. */
static int wp_dw_top(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *top)
{
    pthread_mutex_lock(&wp_dw_mu);
    const struct wp_dw_unit *u = wp_dw_unit_of(mod, cu);
    int rc = u == NULL || u->libdw ? -1 : 0;
    if (rc == 0 && u->n > 0) {
        /* The last range starting at or below pc, then back while an
         * earlier range may still reach past pc (nested or overlapping
         * ranges are rare), keeping the first child in DIE order. */
        size_t a = wp_dw_upto(u->r, u->n, sizeof *u->r, offsetof(struct wp_dw_range, lo), pc);
        size_t best = (size_t)-1;
        for (size_t i = a; i-- > 0 && u->reach[i] > pc;)
            if (pc < u->r[i].hi && (best == (size_t)-1 || u->r[i].child < u->r[best].child))
                best = i;
        if (best != (size_t)-1) {
            *top = u->r[best].die;
            rc = 1;
        }
    }
    pthread_mutex_unlock(&wp_dw_mu);
    return rc;
}

int wp_dw_scopes(Dwfl_Module *mod, uintptr_t ip, Dwarf_Die **scopes, Dwarf_Die **cu)
{
    Dwarf_Addr bias = 0;
    *cu = dwfl_module_addrdie(mod, ip, &bias);
    *scopes = NULL;
    if (*cu == NULL)
        return 0;
    Dwarf_Addr pc = ip - bias;
    Dwarf_Die top;
    int rc = wp_dw_top(mod, *cu, pc, &top);
    if (rc < 0)
        return wp_dw_scopes_libdw(mod, ip, scopes, cu);
    if (rc == 0)
        return 0;
    /* Down from the unit's child, as dwarf_getscopes() descends: at each
     * level into the first child whose ranges contain pc. */
    size_t n = 1, cap = 16;
    Dwarf_Die *path = malloc(cap * sizeof *path);
    if (path == NULL)
        return wp_dw_scopes_libdw(mod, ip, scopes, cu);
    path[0] = top;
    for (;;) {
        Dwarf_Die *d = &path[n - 1], c;
        if (!wp_dw_owns_scopes(dwarf_tag(d)) || !dwarf_haschildren(d) || dwarf_child(d, &c) != 0)
            break;
        int found = 0;
        do {
            if (dwarf_tag(&c) == DW_TAG_imported_unit) {
                free(path);
                return wp_dw_scopes_libdw(mod, ip, scopes, cu);
            }
            if (dwarf_haspc(&c, pc) > 0) {
                found = 1;
                break;
            }
        } while (dwarf_siblingof(&c, &c) == 0);
        if (!found)
            break;
        if (n == cap) {
            Dwarf_Die *p = realloc(path, 2 * cap * sizeof *p);
            if (p == NULL) {
                free(path);
                return wp_dw_scopes_libdw(mod, ip, scopes, cu);
            }
            path = p;
            cap *= 2;
        }
        path[n++] = c;
    }
    /* Innermost first, the unit last, as dwarf_getscopes_die() gives them. */
    *scopes = malloc((n + 1) * sizeof **scopes);
    if (*scopes == NULL) {
        free(path);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        (*scopes)[i] = path[n - 1 - i];
    (*scopes)[n] = **cu;
    free(path);
    return (int)n + 1;
}

/* --- the symbol index ------------------------------------------------------
 *
 * dwfl_module_addrname() reads the module's whole symbol table for each
 * address: in a program of 20 000 functions, about 0.9 ms per address
 * (the mean over 623 addresses spread across it).
 * wp_dw_addrname() gives the same name from an index built once per
 * module, for the addresses that a sized symbol contains (every function
 * a compiler emitted into a table that keeps it), and asks libdw for the
 * rest, where its answer depends on the order of the sizeless symbols
 * (assembly labels) and of the sections they lie in.
 *
 * libdw (elfutils 0.188, __libdwfl_addrsym) searches the global symbols,
 * then, when none of a nonzero size contains the address and no sizeless
 * global one is at it, the local ones.  Within a pass, symbols are taken
 * in table order, skipping unnamed, undefined, section, file and TLS
 * symbols and those above the address; a sized symbol that contains the
 * address replaces the one kept when it starts closer to the address or
 * binds more strongly (global, then weak, then local), or, starting at
 * the same address, is smaller without binding more weakly.  The index
 * finds the sized symbols that contain the address and applies that rule
 * to them in table order, so sized answers are libdw's
 * (tests/unit/test_dwscopes.c compares the two on every address of a
 * program).  Where libdw would read a function symbol's value through a
 * descriptor (64-bit PowerPC ELFv1, IA-64, PA-RISC: the machine this was
 * built for, the one whose processes and files it reads) or the module is
 * relocatable, libdw answers every address. */
#if (defined(__powerpc64__) && (!defined(_CALL_ELF) || _CALL_ELF == 1)) || defined(__ia64__) || defined(__hppa__)
#define WP_DW_DESCRIPTORS 1
#else
#define WP_DW_DESCRIPTORS 0
#endif

static void wp_dw_syms_free(struct wp_dw_syms *y)
{
    if (y == NULL)
        return;
    for (int p = 0; p < 2; p++) {
        free(y->s[p]);
        free(y->reach[p]);
        free(y->labels[p]);
    }
    free(y);
}

static int wp_dw_sym_cmp(const void *a, const void *b)
{
    const struct wp_dw_sym *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}
static int wp_dw_addr_cmp(const void *a, const void *b)
{
    const Dwarf_Addr *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static int wp_dw_sym_push(struct wp_dw_sym **s, size_t *n, size_t *cap, struct wp_dw_sym v)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 256;
        struct wp_dw_sym *t = realloc(*s, ncap * sizeof *t);
        if (t == NULL)
            return -1;
        *s = t;
        *cap = ncap;
    }
    (*s)[(*n)++] = v;
    return 0;
}

/* The symbol libdw's search considers, or NULL. */
static const char *wp_dw_getsym(Dwfl_Module *mod, int ndx, GElf_Sym *sym, Dwarf_Addr *value)
{
    GElf_Word shndx;
    Elf *elf;
    Dwarf_Addr bias;
    const char *name = dwfl_module_getsym_info(mod, ndx, sym, value, &shndx, &elf, &bias);
    if (name == NULL || name[0] == '\0' || sym->st_shndx == SHN_UNDEF)
        return NULL;
    int type = GELF_ST_TYPE(sym->st_info);
    return type == STT_SECTION || type == STT_FILE || type == STT_TLS ? NULL : name;
}

static struct wp_dw_syms *wp_dw_syms_build(Dwfl_Module *mod)
{
    struct wp_dw_syms *y = calloc(1, sizeof *y);
    if (y == NULL)
        return NULL;
    int syments = dwfl_module_getsymtab(mod);
    int first_global = dwfl_module_getsymtab_first_global(mod);
    /* More than one relocation base: a relocatable file, whose symbol
     * values libdw relocates section by section. */
    if (WP_DW_DESCRIPTORS || dwfl_module_relocations(mod) > 1 || syments < 0 || first_global < 0) {
        y->libdw = 1;
        return y;
    }
    y->passes = first_global > 1 ? 2 : 1;
    size_t cap[2] = {0, 0}, lcap[2] = {0, 0};
    for (int i = 1; i < syments; i++) {
        GElf_Sym sym;
        Dwarf_Addr value;
        if (wp_dw_getsym(mod, i, &sym, &value) == NULL)
            continue;
        int p = first_global > 1 && i < first_global;
        if (sym.st_size > UINT32_MAX) {
            y->libdw = 1;
            return y;
        }
        if (sym.st_size != 0) {
            if (wp_dw_sym_push(&y->s[p], &y->n[p], &cap[p], (struct wp_dw_sym){value, (uint32_t)sym.st_size,
                                                                              (uint32_t)i}) != 0)
                goto fail;
        } else {
            if (y->nlabels[p] == lcap[p]) {
                size_t ncap = lcap[p] ? 2 * lcap[p] : 64;
                Dwarf_Addr *t = realloc(y->labels[p], ncap * sizeof *t);
                if (t == NULL)
                    goto fail;
                y->labels[p] = t;
                lcap[p] = ncap;
            }
            y->labels[p][y->nlabels[p]++] = value;
        }
    }
    for (int p = 0; p < 2; p++) {
        if (y->n[p] == 0)
            continue;
        qsort(y->s[p], y->n[p], sizeof *y->s[p], wp_dw_sym_cmp);
        if ((y->reach[p] = malloc(y->n[p] * sizeof *y->reach[p])) == NULL)
            goto fail;
        for (size_t i = 0; i < y->n[p]; i++) {
            Dwarf_Addr end = y->s[p][i].value + y->s[p][i].size;
            y->reach[p][i] = i && y->reach[p][i - 1] > end ? y->reach[p][i - 1] : end;
        }
    }
    for (int p = 0; p < 2; p++)
        if (y->nlabels[p])
            qsort(y->labels[p], y->nlabels[p], sizeof *y->labels[p], wp_dw_addr_cmp);
    return y;
fail:
    wp_dw_syms_free(y);
    return NULL;
}

static int wp_dw_bind(const GElf_Sym *s)
{
    switch (GELF_ST_BIND(s->st_info)) {
    case STB_GLOBAL:
        return 3;
    case STB_WEAK:
        return 2;
    case STB_LOCAL:
        return 1;
    default:
        return 0;
    }
}

static int wp_dw_ndx_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* Pass p's answer for addr: 1 with *name when a sized symbol contains
 * addr, 0 when none does, -1 when memory ran out. */
static int wp_dw_syms_pass(Dwfl_Module *mod, const struct wp_dw_syms *y, int p, Dwarf_Addr addr, const char **name)
{
    const struct wp_dw_sym *s = y->s[p];
    size_t a = wp_dw_upto(s, y->n[p], sizeof *s, offsetof(struct wp_dw_sym, value), addr);
    uint32_t few[16], *ndx = few;
    size_t k = 0, cap = 16;
    for (size_t i = a; i-- > 0 && y->reach[p][i] > addr;) {
        if (addr - s[i].value >= s[i].size)
            continue;
        if (k == cap) {
            uint32_t *t = malloc(2 * cap * sizeof *t);
            if (t == NULL) {
                if (ndx != few)
                    free(ndx);
                return -1;
            }
            memcpy(t, ndx, k * sizeof *t);
            if (ndx != few)
                free(ndx);
            ndx = t;
            cap *= 2;
        }
        ndx[k++] = s[i].ndx;
    }
    qsort(ndx, k, sizeof *ndx, wp_dw_ndx_cmp);
    const char *best = NULL;
    GElf_Sym bsym;
    Dwarf_Addr bvalue = 0;
    for (size_t i = 0; i < k; i++) {
        GElf_Sym sym;
        Dwarf_Addr value;
        const char *nm = wp_dw_getsym(mod, (int)ndx[i], &sym, &value);
        if (nm == NULL)
            continue;
        if (best == NULL || bvalue < value || wp_dw_bind(&bsym) < wp_dw_bind(&sym) ||
            (bvalue == value && ((bsym.st_size > sym.st_size && wp_dw_bind(&bsym) <= wp_dw_bind(&sym)) ||
                                 (bsym.st_size >= sym.st_size && wp_dw_bind(&bsym) < wp_dw_bind(&sym))))) {
            best = nm;
            bsym = sym;
            bvalue = value;
        }
    }
    if (ndx != few)
        free(ndx);
    *name = best;
    return best != NULL;
}

/* When no sized symbol contains addr: 0 if libdw names nothing there,
 * -1 if it may name a sizeless symbol.  Its candidate must lie at or above
 * the end of every symbol below addr in the passes searched, sizeless ones
 * included, so it can only be the highest sizeless symbol below addr, and
 * only when that is not below the end of a sized one. */
static int wp_dw_syms_none(const struct wp_dw_syms *y, Dwarf_Addr addr)
{
    Dwarf_Addr end = 0, label = 0;
    int any = 0;
    for (int p = 0; p < y->passes; p++) {
        size_t k = wp_dw_upto(y->labels[p], y->nlabels[p], sizeof *y->labels[p], 0, addr);
        if (k > 0 && (!any || y->labels[p][k - 1] > label))
            label = y->labels[p][k - 1], any = 1;
        size_t a = wp_dw_upto(y->s[p], y->n[p], sizeof *y->s[p], offsetof(struct wp_dw_sym, value), addr);
        if (a > 0 && y->reach[p][a - 1] > end)
            end = y->reach[p][a - 1];
    }
    return any && label >= end ? -1 : 0;
}

const char *wp_dw_addrname(Dwfl_Module *mod, uintptr_t ip)
{
    Dwarf_Addr addr = ip;
    const char *name = NULL;
    int rc = -1;
    pthread_mutex_lock(&wp_dw_mu);
    struct wp_dw_module *m = wp_dw_module_of(mod);
    if (m != NULL && m->syms == NULL)
        m->syms = wp_dw_syms_build(mod);
    const struct wp_dw_syms *y = m ? m->syms : NULL;
    if (y != NULL && !y->libdw) {
        rc = wp_dw_syms_pass(mod, y, 0, addr, &name);
        if (rc == 0 && y->passes == 2) {
            /* libdw searches the locals unless a sizeless global symbol
             * is at addr; whether it is depends on the labels' order and
             * sections, which libdw weighs. */
            size_t k = wp_dw_upto(y->labels[0], y->nlabels[0], sizeof *y->labels[0], 0, addr);
            rc = k > 0 && y->labels[0][k - 1] == addr ? -1 : wp_dw_syms_pass(mod, y, 1, addr, &name);
        }
        if (rc == 0)
            rc = wp_dw_syms_none(y, addr);
    }
    pthread_mutex_unlock(&wp_dw_mu);
    if (rc < 0)
        return dwfl_module_addrname(mod, ip);
    return rc > 0 ? name : NULL;
}

/* --- PLT stubs ------------------------------------------------------------
 *
 * A call to another object's function goes through a stub in the caller's
 * procedure linkage table, and a sample can land on it; no symbol table
 * covers it.  On x86-64 every stub that reaches a function jumps through
 * its GOT slot with "jmp *disp32(%rip)" (ff 25, after an endbr64 and a bnd
 * prefix in the tables of IBT-enabled objects), and the slot is the
 * offset of a relocation of that function's dynamic symbol (JUMP_SLOT in
 * .rela.plt, GLOB_DAT in .rela.dyn for .plt.got).  So the stub is named
 * by decoding its jump, as binutils does for its synthetic symbols,
 * without assuming an order of the stubs.  Looked up on each use: only
 * addresses inside a PLT section get that far, and the symbolizers cache
 * every frame's name. */
#if defined(__x86_64__)
static int wp_plt_section(const char *nm)
{
    return strcmp(nm, ".plt") == 0 || strcmp(nm, ".plt.sec") == 0 || strcmp(nm, ".plt.got") == 0;
}

/* The name of the dynamic symbol whose relocation is at GOT address slot,
 * or NULL. */
static const char *wp_plt_slot_symbol(Elf *elf, GElf_Addr slot)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
            continue;
        Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
        GElf_Shdr symsh;
        Elf_Data *rd = elf_getdata(scn, NULL), *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
        if (rd == NULL || sd == NULL || gelf_getshdr(symscn, &symsh) == NULL)
            continue;
        for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
            GElf_Rela r;
            GElf_Sym sym;
            if (gelf_getrela(rd, (int)i, &r) == NULL || r.r_offset != slot)
                continue;
            size_t k = GELF_R_SYM(r.r_info);
            if (k == 0 || gelf_getsym(sd, (int)k, &sym) == NULL)
                return NULL;
            const char *nm = elf_strptr(elf, symsh.sh_link, sym.st_name);
            return nm && nm[0] ? nm : NULL;
        }
    }
    return NULL;
}
#endif

const char *wp_dw_pltname(Dwfl_Module *mod, uintptr_t ip, char *buf, size_t cap)
{
#if defined(__x86_64__)
    Dwarf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t shstrndx;
    if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    GElf_Addr addr = (GElf_Addr)(ip - bias);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
        GElf_Shdr sh;
        const char *nm;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
            addr - sh.sh_addr >= sh.sh_size || (nm = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL ||
            !wp_plt_section(nm))
            continue;
        /* Stubs are sh_entsize apart (16 in .plt and .plt.sec; 8 or 16
         * in .plt.got); the jump lies within the stub. */
        GElf_Xword size = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
        GElf_Addr stub = sh.sh_addr + (addr - sh.sh_addr) / size * size;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d == NULL || d->d_buf == NULL || d->d_size < sh.sh_size)
            return NULL;
        const unsigned char *b = (const unsigned char *)d->d_buf + (stub - sh.sh_addr);
        size_t len = sh.sh_addr + sh.sh_size - stub < size ? (size_t)(sh.sh_addr + sh.sh_size - stub) : (size_t)size;
        for (size_t i = 0; i + 6 <= len; i++) {
            if (b[i] != 0xff || b[i + 1] != 0x25)
                continue;
            int32_t disp;
            memcpy(&disp, b + i + 2, sizeof disp);
            /* The slot: the address after the instruction plus disp. */
            const char *sym = wp_plt_slot_symbol(elf, stub + i + 6 + (GElf_Addr)(int64_t)disp);
            if (sym == NULL)
                return NULL;
            snprintf(buf, cap, "%s@plt", sym);
            return buf;
        }
        return NULL;
    }
#else
    (void)mod, (void)ip, (void)buf, (void)cap;
#endif
    return NULL;
}

static int wp_dw_module_free(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
    (void)mod, (void)name, (void)start, (void)arg;
    struct wp_dw_module *m = *ud;
    if (m != NULL) {
        for (size_t i = 0; i < m->cap; i++)
            if (m->units[i].off != (Dwarf_Off)-1)
                wp_dw_unit_free(&m->units[i]);
        free(m->units);
        wp_dw_syms_free(m->syms);
        free(m);
        *ud = NULL;
    }
    return DWARF_CB_OK;
}

void wp_dw_forget(Dwfl *dwfl)
{
    if (dwfl == NULL)
        return;
    pthread_mutex_lock(&wp_dw_mu);
    dwfl_getmodules(dwfl, wp_dw_module_free, NULL, 0);
    pthread_mutex_unlock(&wp_dw_mu);
}

/* A Fortran main program's source name ("program NAME"): the compilers
 * call its function MAIN__ (or _QQmain) and keep NAME only in the DWARF,
 * on the subprogram marked DW_AT_main_subprogram.  0 when the module has
 * no DWARF for ip or no such subprogram contains it. */
static int wp_program_name(Dwfl_Module *mod, uintptr_t ip, char *out, size_t cap)
{
    Dwarf_Die *scopes = NULL, *cu;
    int n = wp_dw_scopes(mod, ip, &scopes, &cu);
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        Dwarf_Attribute a;
        bool main_sub = false;
        if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram ||
            dwarf_attr(&scopes[i], DW_AT_main_subprogram, &a) == NULL || dwarf_formflag(&a, &main_sub) != 0 ||
            !main_sub)
            continue;
        const char *name = dwarf_diename(&scopes[i]);
        if (name && name[0]) {
            snprintf(out, cap, "%s", name);
            found = 1;
        }
    }
    free(scopes);
    return found;
}

/* A function symbol as the program's source names it: C++ demangled
 * (when the process carries libstdc++'s demangler), a Fortran module
 * procedure as module::procedure, a Fortran main program by its name. */
static void wp_source_name(wp_demangler demangle, Dwfl_Module *mod, uintptr_t ip, const char *sym, char *out,
                           size_t cap)
{
    if (demangle && sym[0] == '_' && sym[1] == 'Z') {
        int status = -1;
        char *dem = demangle(sym, NULL, NULL, &status);
        if (dem && status == 0)
            snprintf(out, cap, "%s", dem);
        free(dem);
        if (status == 0)
            return;
    }
    if (wp_name_is_fortran_main(sym) && wp_program_name(mod, ip, out, cap))
        return;
    if (!wp_name_fortran(sym, out, cap))
        snprintf(out, cap, "%s", sym);
}

/* The functions inlined at ip, outermost first, each as ";NAME_[i]" (the
 * annotation flamegraph.pl colours as inlined; wp_frame_sanitize() keeps
 * it out of every other name), appended to out (len bytes used, cap in
 * all).  From the DWARF scopes that contain ip: each
 * DW_TAG_inlined_subroutine names its function through its abstract
 * origin, by its linkage name where it has one (C++ and Fortran module
 * procedures, named as wp_source_name() names symbols), else by its
 * name.  Nothing is appended when the module has no DWARF for ip. */
static void wp_inlined(wp_demangler demangle, Dwfl_Module *mod, uintptr_t ip, char *out, size_t len, size_t cap)
{
    Dwarf_Die *scopes = NULL, *cu;
    int n = wp_dw_scopes(mod, ip, &scopes, &cu);
    for (int i = n - 1; i >= 0; i--) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        Dwarf_Attribute a;
        const char *nm = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a));
        if (nm == NULL)
            nm = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &a));
        if (nm == NULL)
            nm = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &a));
        if (nm == NULL || nm[0] == '\0')
            continue;
        char raw[512], part[512];
        wp_source_name(demangle, mod, ip, nm, raw, sizeof raw);
        wp_frame_sanitize(part, sizeof part, raw);
        int w = snprintf(out + len, cap - len, ";%s_[i]", part);
        if (w < 0 || (size_t)w >= cap - len) {
            out[len] = '\0'; /* no room: the chain ends at the last whole frame */
            break;
        }
        len += (size_t)w;
    }
    free(scopes);
}

int wp_dw_name(Dwfl_Module *mod, uintptr_t ip, const char *sym, wp_demangler demangle, char *buf, size_t cap)
{
    if (wp_left_out(sym))
        return 0;
    char raw[1024];
    wp_source_name(demangle, mod, ip, sym, raw, sizeof raw);
    wp_frame_sanitize(buf, cap, raw);
    wp_inlined(demangle, mod, ip, buf, strlen(buf), cap);
    return 1;
}
