#!/bin/sh
# The public read API (include/waitprof.h), found with dlsym: states and the
# current MPI function as another tool sees them, also from a signal handler;
# the entry time of a waiting call, exact by default, dated by the call's
# first sample under WAITPROF_LEAN=1 (tests/mpi/readapi.c says how close).
. "$(dirname "$0")/../lib.sh"
for lean in 0 1; do
    code=0
    WAITPROF_LEAN=$lean wp_profile 2 "$WP_TMP/out-$lean" "$WP_BUILDDIR/tests/mpi/readapi" \
        >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || code=$?
    sed "s/^/lean=$lean: /" "$WP_TMP/stdout"
    [ "$code" = 0 ] || { cat "$WP_TMP/stderr" >&2; wp_fail "readapi (WAITPROF_LEAN=$lean) exited with $code"; }
    n=$(grep -c '^readapi rank=. ok ' "$WP_TMP/stdout")
    [ "$n" -ge 9 ] || wp_fail "WAITPROF_LEAN=$lean: only $n checks passed"
    grep -q 'rank=0 ok inside MPI_Recv' "$WP_TMP/stdout" || wp_fail "signal-handler read not checked"
    grep -q 'rank=0 ok MPI_Recv \(entry time\|dated\)' "$WP_TMP/stdout" || wp_fail "MPI_Recv entry time not checked"
    want=full
    [ "$lean" = 1 ] && want=lean
    [ "$(wp_meta "$WP_TMP/out-$lean/rank.0.meta" wrappers)" = "$want" ] ||
        wp_fail "WAITPROF_LEAN=$lean: meta says wrappers=$(wp_meta "$WP_TMP/out-$lean/rank.0.meta" wrappers), not $want"
done
