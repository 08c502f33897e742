/* symbols/names.h — Fortran compilers' symbol names as the program's own
 * names.
 *
 * Contract: pure string functions (no allocation, no state), used by the
 * symbolizer (symbols/symbolize.c) on each function symbol before it names
 * a frame.  A module procedure is shown as "module::procedure", as C++
 * shows a namespace's function:
 *   gfortran     __MODULE_MOD_PROC        (MODULE and PROC in lower case)
 *   Intel        MODULE_mp_PROC_          (ifort and ifx)
 *   LLVM flang   _QMMODULEPPROC           (scopes tagged by upper-case
 *                letters: M module, S submodule, F host procedure, B block,
 *                P the procedure itself; names are lower case)
 * flang's scopes are all kept ("_QMmSsFhostPinner" is "m::s::host::inner")
 * except blocks, and its external procedures lose the tag ("_QPsolve" is
 * "solve").  Other symbols are left as they are.
 */
#ifndef WP_SYMBOLS_NAMES_H
#define WP_SYMBOLS_NAMES_H

#include <stddef.h>

/* When sym is a Fortran procedure name of one of the forms above, write
 * its readable form into out (capacity cap > 0, truncated to fit) and
 * return 1; else return 0 and leave out as it was. */
int wp_name_fortran(const char *sym, char *out, size_t cap);

/* Is sym the symbol a Fortran compiler gives the main program ("MAIN__":
 * gfortran and Intel; "_QQmain": flang)?  Its source name is only in the
 * debugging information (DW_AT_main_subprogram). */
int wp_name_is_fortran_main(const char *sym);

#endif
