#!/bin/sh
# The wrappers' extra calls never change an outcome (wrap/wrap.h,
# wp_req_kinds): tests/mpi/reqkinds.c completes persistent collectives
# started in different orders, persistent point-to-point requests with an
# inactive one, null requests, generalized and partitioned requests and a
# truncated receive under MPI_ERRORS_RETURN, and prints what it observes;
# under waitprof (default wrappers, 100 and 1000 Hz) the output is the
# same as without it, and so is the exit status.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/reqkinds
wp_mpirun 2 "$prog" >"$WP_TMP/base.out" 2>"$WP_TMP/base.err"
rc=$?
[ $rc = 0 ] || { cat "$WP_TMP/base.err" >&2; wp_fail "reqkinds without waitprof exited with $rc"; }
sort "$WP_TMP/base.out" >"$WP_TMP/base"
[ "$(wc -l <"$WP_TMP/base")" -ge 20 ] || wp_fail "reqkinds printed too little: $(cat "$WP_TMP/base")"
for hz in 100 1000; do
    WAITPROF_HZ=$hz wp_profile 2 "$WP_TMP/o$hz" "$prog" >"$WP_TMP/got.out" 2>"$WP_TMP/got.err"
    rc=$?
    [ $rc = 0 ] || { cat "$WP_TMP/got.err" >&2; wp_fail "reqkinds at $hz Hz exited with $rc"; }
    sort "$WP_TMP/got.out" >"$WP_TMP/got"
    diff "$WP_TMP/base" "$WP_TMP/got" >&2 || wp_fail "at $hz Hz the program observed something else than without waitprof"
    wp_note "$hz Hz: $(wc -l <"$WP_TMP/got") observations as without waitprof"
done
