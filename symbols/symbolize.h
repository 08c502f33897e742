/* symbols/symbolize.h — turning sampled addresses into frame names.
 *
 * Contract: runs after sampling has stopped, in normal context (it reads ELF
 * files and allocates).  A frame is named by its function as the source
 * names it (C++ names demangled when the program carries libstdc++;
 * Fortran module procedures as "module::procedure" and a Fortran main
 * program by its name when the module has DWARF: symbols/names.h), else
 * "module+0xOFFSET",
 * else "0xADDRESS".  Where the module's DWARF says code at an address was
 * inlined, the name is the chain "function;inlined_[i];...", outermost
 * first, each inlined function marked "_[i]" (format/folded.h); callers
 * pass a return address minus one, the call instruction, so that the
 * chain is the call's.  Wrapper frames are named by the canonical MPI function
 * ("MPI_Recv" for mpi_recv_ too).  Start-up frames below main and a thread's
 * start routine (_start, __libc_start_main, start_thread, clone, waitprof's
 * own thread trampoline) are left out: NULL is returned for them.
 * Names are sanitized for folded output (format/folded.h).
 */
#ifndef WP_SYMBOLS_SYMBOLIZE_H
#define WP_SYMBOLS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct wp_symbolizer;

struct wp_symbolizer *wp_symbolizer_new(void);
const char *wp_symbolizer_name(struct wp_symbolizer *sy, uintptr_t ip, int fn);
void wp_symbolizer_free(struct wp_symbolizer *sy);

/* A call site (a return address) as "function (file:line)" when line
 * information exists, else as wp_symbolizer_name() names the call
 * instruction.  Writes at most cap bytes into buf. */
void wp_symbolizer_site(struct wp_symbolizer *sy, uintptr_t ret, char *buf, size_t cap);

/* Where each frame of ip's name is defined: for the function and for each
 * function inlined at ip (the frames of wp_symbolizer_name(sy, ip, 0),
 * outermost first), cb gets the frame as the name gives it ("compute_[i]"
 * for an inlined one), the source file and line where DWARF declares the
 * function (file NULL and line 0 without DWARF) and whether the frame is
 * inlined.  Nothing for wrapper frames, waitprof's own, and frames named
 * only by module and offset. */
typedef void wp_frame_loc_fn(void *arg, const char *frame, const char *file, int line, int inlined);
void wp_symbolizer_frame_locs(struct wp_symbolizer *sy, uintptr_t ip, wp_frame_loc_fn *cb, void *arg);

#endif
