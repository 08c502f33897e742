/* symbols/offline.h — naming a partial profile's frames afterwards, from
 * the files still on disk.
 *
 * Contract: a rank killed by a signal leaves rank.R.folded with frames
 * "module+0xOFFSET" (profile/partial.h: no symbol tables can be read in a
 * signal handler) and, beside it, rank.R.modules, the table of the objects
 * those frames name (format/format.h).  wp_offline_name_dir() names them
 * with the rules the application's own symbolizer applies
 * (symbols/dwname.h: function names, inlined chains as "_[i]" frames, C++
 * demangled, Fortran module procedures and main programs; start-up frames
 * and waitprof's own frames left out), so that the names agree with those
 * a complete run writes.  Offsets are from the object's load address
 * (its link-time addresses), for executables (PIE or not) and shared
 * libraries alike.
 * - Only a rank whose rank.R.modules was written by the run its
 *   rank.R.meta describes (same start_ns) is touched.
 * - A rank file with frames named is rewritten in place (through a
 *   temporary file and a rename), its original text kept once as
 *   rank.R.folded.partial-raw (WP_FOLDED_RAW_SUFFIX), never overwritten:
 *   running it again names only frames still raw, so it is idempotent and
 *   loses nothing.  The rank's counter profiles (rank.R.<event>.folded,
 *   WAITPROF_COUNTERS) are named the same way, each raw text kept as
 *   rank.R.<event>.folded.partial-raw.
 * - An object that is no longer at its path, or whose build-id (or, for
 *   an object without one, size and modification time) differs from the
 *   run's, is named in one line on err with the samples whose stacks it
 *   holds; its frames stay module+offset.  So is a file that cannot be
 *   rewritten.
 * Normal context: reads ELF and DWARF files and allocates.  Linked into
 * the report program only (report/waitprof-report.c), never into the
 * application's library.
 */
#ifndef WP_SYMBOLS_OFFLINE_H
#define WP_SYMBOLS_OFFLINE_H

#include <stdio.h>

/* Returns the number of ranks whose files were rewritten, or -1 when dir cannot be
 * listed. */
int wp_offline_name_dir(const char *dir, FILE *err);

#endif
