#!/bin/sh
# What a program observes of its own process does not change under
# sampling (tests/mpi/observe.c): errno across samples, the signal mask
# after sleeps, polls and MPI calls, read() under the program's own
# handler with and without SA_RESTART, a forked child's exit code,
# system()'s status and an exec'd child's, at 1000 Hz, as without waitprof.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/observe
wp_observe_base 2 "$prog"
[ "$(wc -l <"$WP_TMP/base")" = 14 ] || wp_fail "observe printed $(wc -l <"$WP_TMP/base") lines, expected 14: $(cat "$WP_TMP/base")"
grep -q '^rank 0 errno 4242$' "$WP_TMP/base" && grep -q '^rank 0 restart 1 0 z$' "$WP_TMP/base" &&
    grep -q '^rank 0 norestart -1 4 -$' "$WP_TMP/base" || wp_fail "observe without waitprof: $(cat "$WP_TMP/base")"
wp_observe_same 1000 2 "$prog"
