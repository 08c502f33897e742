/* symbols/dwname.c — see symbols/dwname.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
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

/* The DWARF scopes that contain ip, innermost first, as the code is laid
 * out (symbols/dwname.h): dwarf_getscopes() alone leaves the inlined
 * levels after the innermost out, because from an inlined subroutine it
 * goes on with the scopes of its abstract definition; the innermost
 * scope's own parents (dwarf_getscopes_die) are the concrete chain. */
int wp_dw_scopes(Dwfl_Module *mod, uintptr_t ip, Dwarf_Die **scopes, Dwarf_Die **cu)
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
