#!/bin/sh
# WAITPROF_CALLPATH_DEPTH (tests/mpi/ws_callpath.c, 2 ranks): one helper
# calling MPI_Recv, called from caller_a and caller_b.  Depth 1 (default):
# rank 0's MPI_Recv receives are one call site, in helper.  Depth 2: two
# sites, "helper (file:line) < caller_a (file:line)" and the same with
# caller_b, each with half of the calls.  WAITPROF_ESTIMATE=0: none.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_callpath
# recv_sites DIR — "site<TAB>calls" of rank 0's MPI_Recv rows, by column name.
recv_sites() {
    awk -F '\t' 'NR == 2 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        NR > 2 && $c["function"] == "MPI_Recv" { n[$c["site"]] += $c["calls"] }
        END { for (s in n) print s "\t" n[s] }' "$1/rank.0.waits" | sort
}
for depth in 1 2; do
    out=$WP_TMP/out-$depth
    WAITPROF_CALLPATH_DEPTH=$depth wp_profile 2 "$out" "$prog" 6 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
        { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "ws_callpath (depth $depth) exited with $rc"; }
    recv_sites "$out" >"$WP_TMP/sites-$depth"
    wp_note "depth $depth: $(tr '\t\n' '=;' <"$WP_TMP/sites-$depth")"
    n=$(wc -l <"$WP_TMP/sites-$depth")
    case $depth in
    1)
        [ "$n" -eq 1 ] || { cat "$out/rank.0.waits" >&2; wp_fail "depth 1: $n MPI_Recv call sites, expected 1"; }
        grep -q '^helper (ws_callpath\.c:[0-9]*)	12$' "$WP_TMP/sites-1" ||
            { cat "$out/rank.0.waits" >&2; wp_fail "depth 1: the site is not helper (ws_callpath.c:N) with 12 calls"; }
        ;;
    2)
        [ "$n" -eq 2 ] || { cat "$out/rank.0.waits" >&2; wp_fail "depth 2: $n MPI_Recv call sites, expected 2"; }
        for c in caller_a caller_b; do
            grep -q "^helper (ws_callpath\.c:[0-9]*) < $c (ws_callpath\.c:[0-9]*)	6\$" "$WP_TMP/sites-2" ||
                { cat "$out/rank.0.waits" >&2; wp_fail "depth 2: no site 'helper (...) < $c (...)' with 6 calls"; }
        done
        ;;
    esac
done
# WAITPROF_ESTIMATE=0: the wrappers record nothing, so no call site at all.
out=$WP_TMP/out-off
WAITPROF_ESTIMATE=0 wp_profile 2 "$out" "$prog" 6 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "ws_callpath (WAITPROF_ESTIMATE=0) exited with $rc"; }
[ "$(head -n 1 "$out/rank.0.waits")" = "# waitprof-waits 1" ] || wp_fail "WAITPROF_ESTIMATE=0: no rank.0.waits"
[ "$(recv_sites "$out" | wc -l)" -eq 0 ] || { cat "$out/rank.0.waits" >&2; wp_fail "WAITPROF_ESTIMATE=0 recorded calls"; }
wp_note "WAITPROF_ESTIMATE=0: no call site recorded"
