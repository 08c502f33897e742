#!/bin/sh
# Inlined functions keep their frames (symbols/symbolize.c, wp_inlined):
# tests/mpi/inlined.c and tests/mpi/inlined.F90, built with -O2 -g, put a
# late sender's receive and its computation in static helpers (C) and
# internal procedures (Fortran) that the compiler inlines into the main
# program, so that no symbol of theirs exists (checked with nm: the test
# is void if the compiler did not inline them).  On 2 ranks:
# - rank 0's waiting samples are under main;exchange_[i];MPI_Recv (C) and
#   main;inl_prog;exchange_[i];MPI_Recv (Fortran), and rank 1's computing
#   ones under main;compute_[i] and main;inl_prog;compute_[i]: each at least
#   90 % of the time the program measured there times the rate
#   (wp_check_late_sender), so an inlined helper's samples are not lost
#   to the function it was inlined into;
# - the wait-state table names the call site by the inlined function and
#   its own line: "exchange (inlined.c:LINE)", LINE the MPI_Recv call's;
# - report.json's frames give each frame of the waiting path its source:
#   exchange_[i] inlined, in inlined.c (.F90) at the line that defines it,
#   main (inl_prog) not inlined, at its own line.
. "$(dirname "$0")/../lib.sh"
# frames_check JSON SRC OUTER OUTER_LINE: report.json's frames entries of
# exchange_[i] (inlined, defined in SRC at the line naming "exchange") and
# OUTER (not inlined, OUTER_LINE), both files ending in SRC's name.
frames_check() {
    xline=$(grep -n -i -E '(void|subroutine) exchange' "$2" | head -n 1 | cut -d: -f1)
    "$PYTHON" - "$1" "$(basename "$2")" "$xline" "$3" "$4" <<'PY' || wp_fail "$(basename "$2"): report.json frames do not locate exchange_[i] at line $xline and $3 at line $4"
import json, sys
fr = json.load(open(sys.argv[1]))["frames"]
src, xline, outer, oline = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
x, o = fr.get("exchange_[i]"), fr.get(outer)
print("[t_inlined] frames: exchange_[i] %s, %s %s" % (x, outer, o))
ok = x and o and x["inlined"] and not o["inlined"] and (x["file"] or "").endswith("/" + src) and \
    (o["file"] or "").endswith("/" + src) and x["line"] == xline and o["line"] == oline
sys.exit(0 if ok else 1)
PY
}
prog=$WP_BUILDDIR/tests/mpi/inlined
if nm "$prog" | grep -Eq ' [tT] (compute|exchange)(\.[a-z0-9.]*)?$'; then
    wp_fail "the compiler did not inline compute() and exchange() into main: the test checks nothing"
fi
wp_check_late_sender 2 "$prog" ';main;exchange_\[i\];MPI_Recv$' ';main;compute_\[i\](;.*)?$'
out=$WP_TMP/out-200
line=$(grep -n 'MPI_Recv(buf' "$WP_SRCDIR/tests/mpi/inlined.c" | cut -d: -f1)
grep -Eq "^exchange \(inlined\.c:$line\) +MPI_Recv +late_sender " "$out/report.txt" ||
    { cat "$out/report.txt" >&2; wp_fail "C: no wait-state row 'exchange (inlined.c:$line) MPI_Recv late_sender' in report.txt"; }
frames_check "$out/report.json" "$WP_SRCDIR/tests/mpi/inlined.c" main \
    "$(grep -n '^int main' "$WP_SRCDIR/tests/mpi/inlined.c" | cut -d: -f1)"
wp_note "C: main;exchange_[i];MPI_Recv and main;compute_[i] keep their samples; site exchange (inlined.c:$line)"

[ -n "$MPIFC" ] || { wp_note "no MPI Fortran compiler: the Fortran half is skipped"; exit 0; }
fprog=$WP_BUILDDIR/tests/mpi/inlined_f
if nm "$fprog" | grep -Eiq ' [tT] _?(compute|exchange)(\.[0-9]+)?_?$'; then
    wp_fail "gfortran did not inline compute and exchange into the main program: the test checks nothing"
fi
wp_check_late_sender 2 "$fprog" ';main;inl_prog;exchange_\[i\];(.*;)?MPI_Recv$' ';main;inl_prog;compute_\[i\](;.*)?$'
frames_check "$WP_TMP/out-200/report.json" "$WP_SRCDIR/tests/mpi/inlined.F90" inl_prog \
    "$(grep -n '^program inl_prog' "$WP_SRCDIR/tests/mpi/inlined.F90" | cut -d: -f1)"
wp_note "Fortran: main;inl_prog;exchange_[i];MPI_Recv and main;inl_prog;compute_[i] keep their samples"
