#!/bin/sh
# What a program observes of its own process does not change under
# sampling (tests/mpi/observe.c): errno across samples, the signal mask
# after sleeps, polls and MPI calls, read() under the program's own
# handler with and without SA_RESTART, a forked child's exit code,
# system()'s status and an exec'd child's, at 1000 Hz, as without waitprof.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/observe
wp_mpirun 2 "$prog" >"$WP_TMP/base.out" 2>"$WP_TMP/base.err"
rc=$?
[ $rc = 0 ] || { cat "$WP_TMP/base.err" >&2; wp_fail "observe without waitprof exited with $rc"; }
sort "$WP_TMP/base.out" >"$WP_TMP/base"
[ "$(wc -l <"$WP_TMP/base")" = 14 ] || wp_fail "observe printed $(wc -l <"$WP_TMP/base") lines, expected 14: $(cat "$WP_TMP/base")"
grep -q '^rank 0 errno 4242$' "$WP_TMP/base" && grep -q '^rank 0 restart 1 0 z$' "$WP_TMP/base" &&
    grep -q '^rank 0 norestart -1 4 -$' "$WP_TMP/base" || wp_fail "observe without waitprof: $(cat "$WP_TMP/base")"
WAITPROF_HZ=1000 wp_profile 2 "$WP_TMP/o" "$prog" >"$WP_TMP/got.out" 2>"$WP_TMP/got.err"
rc=$?
[ $rc = 0 ] || { cat "$WP_TMP/got.err" >&2; wp_fail "observe under waitprof exited with $rc"; }
sort "$WP_TMP/got.out" >"$WP_TMP/got"
diff "$WP_TMP/base" "$WP_TMP/got" >&2 || wp_fail "the program observed something else under waitprof"
wp_note "$(wc -l <"$WP_TMP/got") observations as without waitprof"
