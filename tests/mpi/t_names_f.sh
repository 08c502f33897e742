#!/bin/sh
# Fortran frame names as the source names them, in every output that names
# frames (rank.R.folded, all.folded, report.txt, report.json,
# waitstates.txt): tests/mpi/names.F90 on 2 ranks, rank 0 waiting in
# MPI_RECV called from the module procedure halo's exchange:
# - the waiting samples are under main;names_prog;halo::exchange;MPI_Recv
#   (the program's name from the DWARF, not MAIN__; halo::exchange, not
#   __halo_MOD_exchange), at least 90 % of rank 0's time in the receive
#   times the rate; rank 1's computation is under names_prog;halo::compute;
# - report.txt names halo::exchange as the main waiting call path, and its
#   wait-state row reads "halo::exchange (names.F90:LINE)" with the line of
#   the MPI_RECV call, as report.json's site does;
# - no output holds a compiler's name (MAIN__, _MOD_).
. "$(dirname "$0")/../lib.sh"
[ -n "$MPIFC" ] || wp_skip "no MPI Fortran compiler"
wp_check_late_sender 2 "$WP_BUILDDIR/tests/mpi/names_f" ';main;names_prog;halo::exchange;(.*;)?MPI_Recv$' \
    ';main;names_prog;halo::compute(;.*)?$'
out=$WP_TMP/out-200
line=$(grep -n 'call MPI_RECV' "$WP_SRCDIR/tests/mpi/names.F90" | cut -d: -f1)
grep -A1 '^main waiting call path' "$out/report.txt" | grep -Eq ';names_prog;halo::exchange;(.*;)?MPI_Recv$' ||
    { cat "$out/report.txt" >&2; wp_fail "Fortran: report.txt's main waiting call path is not names_prog;halo::exchange;MPI_Recv"; }
grep -Eq "^halo::exchange \(names\.F90:$line\) +MPI_Recv +late_sender " "$out/report.txt" ||
    { cat "$out/report.txt" >&2; wp_fail "Fortran: no wait-state row 'halo::exchange (names.F90:$line) MPI_Recv late_sender' in report.txt"; }
grep -q "\"site\":\"halo::exchange (names.F90:$line)\"" "$out/report.json" ||
    wp_fail "Fortran: report.json has no site halo::exchange (names.F90:$line)"
for f in all.folded rank.0.folded rank.1.folded report.txt report.json waitstates.txt; do
    if grep -Eq 'MAIN__|_MOD_' "$out/$f"; then
        grep -E 'MAIN__|_MOD_' "$out/$f" | head -n 3 >&2
        wp_fail "Fortran: $f holds a compiler's symbol name"
    fi
done
wp_note "Fortran: names_prog;halo::exchange;MPI_Recv in all.folded, halo::exchange (names.F90:$line) in report.txt"
