#!/bin/sh
# A C++ late sender: frames carry demangled method names in every output
# that names frames (rank.R.folded, all.folded, report.txt, report.json,
# waitstates.txt), and no output holds a mangled name (_Z).  The
# wait-state row of report.txt carries the demangled method, shortened to
# fit its column, and the call's file:line; report.json and
# waitstates.txt the whole demangled site.
. "$(dirname "$0")/../lib.sh"
[ -n "$MPICXX" ] || wp_skip "no MPI C++ compiler"
wp_check_late_sender 2 "$WP_BUILDDIR/tests/mpi/late_sender_cxx" \
    ';main;demo::Exchanger::receive\(int\*\)( \[clone [^]]*\])?;MPI_Recv$' ';main;demo::Exchanger::compute\(double\)( \[clone [^]]*\])?(;.*)?$'
out=$WP_TMP/out-200
line=$(grep -n 'MPI_Recv(buf' "$WP_SRCDIR/tests/mpi/late_sender.cpp" | cut -d: -f1)
# The demangled site; GCC may name a clone of the method.
site="demo::Exchanger::receive\\(int\\*\\)( \\[clone [^]]*\\])? \\(late_sender\\.cpp:$line\\)"
# The whole site is 51 characters, the column 36: the row keeps the
# method's name and the location, and drops what does not fit of the
# class and the parameters.
row=$(grep -E "^(\\.\\.\\.)?(demo::)?(Exchanger::)?receive(\\(int\\*\\))? \\(late_sender\\.cpp:$line\\) +MPI_Recv +late_sender " \
    "$out/report.txt")
[ -n "$row" ] ||
    { cat "$out/report.txt" >&2; wp_fail "C++: no wait-state row with the demangled receive and late_sender.cpp:$line in report.txt"; }
wp_note "C++: wait-state row: $row"
grep -Eq "\"site\":\"$site\"" "$out/report.json" || wp_fail "C++: report.json has no site /$site/"
grep -Eq "^$site " "$out/waitstates.txt" || wp_fail "C++: waitstates.txt has no site /$site/"
for f in all.folded rank.0.folded rank.1.folded report.txt report.json waitstates.txt; do
    if grep -q '_Z' "$out/$f"; then
        grep '_Z' "$out/$f" | head -n 3 >&2
        wp_fail "C++: $f holds a mangled name"
    fi
done
