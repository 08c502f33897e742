#!/bin/sh
# The public read API (include/waitprof.h), found with dlsym: states and the
# current MPI function as another tool sees them, also from a signal handler.
. "$(dirname "$0")/../lib.sh"
code=0
wp_profile 2 "$WP_TMP/out" "$WP_BUILDDIR/tests/mpi/readapi" >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || code=$?
cat "$WP_TMP/stdout"
[ "$code" = 0 ] || { cat "$WP_TMP/stderr" >&2; wp_fail "readapi exited with $code"; }
n=$(grep -c '^readapi rank=. ok ' "$WP_TMP/stdout")
[ "$n" -ge 8 ] || wp_fail "only $n checks passed"
grep -q 'rank=0 ok inside MPI_Recv' "$WP_TMP/stdout" || wp_fail "signal-handler read not checked"
