/* symbols/dwname.h — one function symbol of one module as a frame name.
 *
 * Contract: the naming rules both symbolizers share, the live one of the
 * process (symbols/symbolize.h) and the one that names a partial
 * profile's frames afterwards from the files on disk (symbols/offline.h),
 * so that a frame gets the same name either way.  Normal context: it
 * reads the module's DWARF and allocates.
 * wp_dw_name() names the code at ip (an address of the Dwfl the module
 * belongs to) whose function symbol is sym: 0 when the frame is left out
 * (start-up frames below main and a thread's start routine); else 1 and
 * buf holds the source's name (C++ demangled with demangle when it is not
 * NULL; Fortran names as symbols/names.h reads them; a Fortran main
 * program by its name from the DWARF), sanitized (format/folded.h),
 * followed by the chain of functions inlined at ip, each ";NAME_[i]",
 * outermost first, as far as cap allows whole frames.
 */
#ifndef WP_SYMBOLS_DWNAME_H
#define WP_SYMBOLS_DWNAME_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

/* libstdc++'s __cxa_demangle, looked up at run time. */
typedef char *(*wp_demangler)(const char *, char *, size_t *, int *);

int wp_dw_name(Dwfl_Module *mod, uintptr_t ip, const char *sym, wp_demangler demangle, char *buf, size_t cap);

/* The DWARF scopes that contain ip, innermost first, as the code is laid
 * out: every level of inlined calls, then the function they were inlined
 * into, then its compilation unit (*cu).  Returns how many (0 without
 * DWARF for ip); the caller frees *scopes.  wp_dw_scopes() finds them
 * through an index of each compilation unit's functions, kept with the
 * module until wp_dw_forget(dwfl), which the owner of a Dwfl calls before
 * dwfl_end(); wp_dw_scopes_libdw() asks libdw, which walks the unit from
 * its start.  Both give the same scopes (tests/unit/test_dwscopes.c). */
int wp_dw_scopes(Dwfl_Module *mod, uintptr_t ip, Dwarf_Die **scopes, Dwarf_Die **cu);
int wp_dw_scopes_libdw(Dwfl_Module *mod, uintptr_t ip, Dwarf_Die **scopes, Dwarf_Die **cu);
void wp_dw_forget(Dwfl *dwfl);

/* The name of the symbol that contains ip in mod, as
 * dwfl_module_addrname() gives it, through an index of the module's
 * symbol table kept with the scope index (until wp_dw_forget()); NULL
 * when there is none. */
const char *wp_dw_addrname(Dwfl_Module *mod, uintptr_t ip);

/* For ip in a procedure linkage table stub of mod (.plt, .plt.sec,
 * .plt.got; x86-64), which no symbol table names: "SYMBOL@plt" in buf,
 * SYMBOL the dynamic symbol whose GOT slot the stub jumps through, as
 * binutils and perf name stubs; buf is returned.  NULL elsewhere, for the
 * lazy-binding stub at the table's head, or on another machine. */
const char *wp_dw_pltname(Dwfl_Module *mod, uintptr_t ip, char *buf, size_t cap);

#endif
