/* tests/unit/test_dwscopes.c — the scope and symbol indexes
 * (symbols/dwname.h) against libdw's own searches.
 *
 * Checked: on every byte address of this program (built with -g; its own
 * code, the symbolizer's sources and this file, with functions inlined
 * two levels deep and lexical blocks), wp_dw_scopes() and
 * wp_dw_scopes_libdw() give the same compilation unit and the same chain
 * of scopes, DIE for DIE, and wp_dw_addrname() the same symbol name as
 * dwfl_module_addrname() (or none where it gives none); the comparison
 * covers addresses in inlined code at depth two and more than 4000 named
 * addresses.  A second pass over the same addresses, with the indexes
 * built, agrees again, and wp_dw_forget() leaves the module's user data
 * empty.
 * And the names of this program's procedure linkage table stubs
 * (wp_dw_pltname, x86-64): at the start and inside every stub that
 * binutils' objdump labels SYMBOL@plt, the same name, and none outside the
 * tables.
 */
#include <check.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/dwname.h"
#include "tests/unit/unit.h"

/* Inlined at any optimization level: two levels of DW_TAG_inlined_subroutine
 * inside scope_target, one of them in a lexical block. */
static inline __attribute__((always_inline)) int scope_inner(volatile int *v, int x)
{
    *v += x * 7;
    return *v ^ x;
}
static inline __attribute__((always_inline)) int scope_outer(volatile int *v, int x)
{
    int s = 0;
    for (int i = 0; i < x; i++) {
        volatile int t = i;
        s += scope_inner(v, t + x);
    }
    return s;
}
__attribute__((noinline)) int scope_target(int x)
{
    volatile int v = x;
    int r = scope_outer(&v, x);
    {
        volatile int w = r;
        r += scope_inner(&v, w);
    }
    return r;
}

/* The program's own DWARF only, as the symbolizer reads it: no separate
 * debug files. */
static int no_debuginfo(Dwfl_Module *m, void **ud, const char *modname, Dwarf_Addr base, const char *file,
                        const char *debuglink, GElf_Word crc, char **name)
{
    (void)m, (void)ud, (void)modname, (void)base, (void)file, (void)debuglink, (void)crc, (void)name;
    return -1;
}

static Dwfl *self_dwfl(Dwfl_Module **mod)
{
    static char *debuginfo_path;
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = no_debuginfo,
        .debuginfo_path = &debuginfo_path,
    };
    Dwfl *d = dwfl_begin(&cb);
    ck_assert_ptr_nonnull(d);
    dwfl_report_begin(d);
    ck_assert_int_eq(dwfl_linux_proc_report(d, getpid()), 0);
    ck_assert_int_eq(dwfl_report_end(d, NULL, NULL), 0);
    *mod = dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&scope_target);
    ck_assert_ptr_nonnull(*mod);
    return d;
}

struct tally {
    long with_dwarf, inlined2, mismatches, named, name_mismatches;
};

/* Both ways on every address of mod; the first mismatch is printed. */
static void compare_all(Dwfl_Module *mod, struct tally *t)
{
    Dwarf_Addr start, end;
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    for (Dwarf_Addr ip = start; ip < end; ip++) {
        Dwarf_Die *a = NULL, *b = NULL, *cua = NULL, *cub = NULL;
        int na = wp_dw_scopes(mod, (uintptr_t)ip, &a, &cua);
        int nb = wp_dw_scopes_libdw(mod, (uintptr_t)ip, &b, &cub);
        int same = na == nb && (cua == NULL) == (cub == NULL) &&
                   (cua == NULL || dwarf_dieoffset(cua) == dwarf_dieoffset(cub));
        for (int i = 0; same && i < na; i++)
            same = dwarf_dieoffset(&a[i]) == dwarf_dieoffset(&b[i]);
        if (!same && t->mismatches++ == 0)
            fprintf(stderr, "test_dwscopes: at %#llx the index gives %d scopes, libdw %d\n",
                    (unsigned long long)ip, na, nb);
        const char *sa = wp_dw_addrname(mod, (uintptr_t)ip), *sb = dwfl_module_addrname(mod, (uintptr_t)ip);
        if ((sa == NULL) != (sb == NULL) || (sa && strcmp(sa, sb) != 0)) {
            if (t->name_mismatches++ == 0)
                fprintf(stderr, "test_dwscopes: at %#llx the index names %s, libdw %s\n", (unsigned long long)ip,
                        sa ? sa : "nothing", sb ? sb : "nothing");
        }
        t->named += sa != NULL;
        if (na > 0) {
            t->with_dwarf++;
            int inl = 0;
            for (int i = 0; i < na; i++)
                inl += dwarf_tag(&a[i]) == DW_TAG_inlined_subroutine;
            t->inlined2 += inl >= 2;
        }
        free(a);
        free(b);
    }
}

START_TEST(test_every_address)
{
    ck_assert_int_gt(scope_target(3), -1000000); /* keep it linked */
    Dwfl_Module *mod;
    Dwfl *d = self_dwfl(&mod);
    Dwarf_Addr bias;
    if (dwfl_module_getdwarf(mod, &bias) == NULL) {
        fprintf(stderr, "test_dwscopes: this program has no DWARF (built without -g?)\n");
        ck_abort_msg("no DWARF in the test program");
    }
    struct tally first = {0}, again = {0};
    compare_all(mod, &first);
    compare_all(mod, &again);
    fprintf(stderr,
            "test_dwscopes: %ld addresses with DWARF scopes, %ld in code inlined two levels deep, %ld named by a "
            "symbol\n",
            first.with_dwarf, first.inlined2, first.named);
    ck_assert_int_eq(first.mismatches, 0);
    ck_assert_int_eq(first.name_mismatches, 0);
    ck_assert_int_eq(again.name_mismatches, 0);
    ck_assert_int_gt(first.named, 4000);
    ck_assert_int_eq(again.mismatches, 0);
    ck_assert_int_gt(first.with_dwarf, 4000);
    ck_assert_int_gt(first.inlined2, 0);
    ck_assert_int_eq(again.with_dwarf, first.with_dwarf);
    wp_dw_forget(d);
    void **ud = NULL;
    dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(ud);
    ck_assert_ptr_null(*ud);
    dwfl_end(d);
}
END_TEST

#if defined(__x86_64__)
START_TEST(test_plt_stubs)
{
    Dwfl_Module *mod;
    Dwfl *d = self_dwfl(&mod);
    Dwarf_Addr bias = 0;
    ck_assert_ptr_nonnull(dwfl_module_getelf(mod, &bias));
    char exe[4096], cmd[4200], line[4096], buf[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    snprintf(cmd, sizeof cmd, "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    long stubs = 0, wrong = 0;
    while (fgets(line, sizeof line, p)) {
        /* "0000000000001030 <strcmp@plt>:" */
        unsigned long long a;
        char label[1024];
        size_t len;
        if (sscanf(line, "%llx <%1000[^>]>:", &a, label) != 2 || (len = strlen(label)) < 5 ||
            strcmp(label + len - 4, "@plt") != 0)
            continue; /* also the table's head, "SYMBOL@plt-0x10" */
        stubs++;
        for (int off = 0; off < 8; off += 4) {
            const char *got = wp_dw_pltname(mod, (uintptr_t)(a + bias + (unsigned long long)off), buf, sizeof buf);
            if (got == NULL || strcmp(got, label) != 0) {
                if (wrong++ == 0)
                    fprintf(stderr, "test_dwscopes: at %s+%d objdump says %s, wp_dw_pltname %s\n", label, off, label,
                            got ? got : "nothing");
            }
        }
    }
    ck_assert_int_eq(pclose(p), 0);
    fprintf(stderr, "test_dwscopes: %ld PLT stubs named as objdump names them\n", stubs);
    /* This program calls fprintf, strcmp, free and more through its PLT. */
    ck_assert_int_gt(stubs, 5);
    ck_assert_int_eq(wrong, 0);
    ck_assert_ptr_null(wp_dw_pltname(mod, (uintptr_t)&scope_target, buf, sizeof buf));
    wp_dw_forget(d);
    dwfl_end(d);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("dwscopes");
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_address);
#if defined(__x86_64__)
    tcase_add_test(tc, test_plt_stubs);
#endif
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
