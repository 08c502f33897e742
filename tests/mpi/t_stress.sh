#!/bin/sh
# 30 s at 5 kHz in 4 threads per rank that malloc, dlopen/dlclose and call
# MPI: no deadlock, no crash, samples during dlopen/dlclose dropped and counted.
. "$(dirname "$0")/../lib.sh"
out=$WP_TMP/out
secs=${WP_STRESS_SECONDS:-30}
WP_TIMEOUT=$((secs * 6 + 60)) WAITPROF_HZ=5000 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/stress" 4 "$secs" \
    >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "stress exited with $rc (124: hung)"; }
wp_folded check "$out"/rank.*.folded "$out/all.folded" || wp_fail "folded format"
dropped=0
for r in 0 1; do
    meta=$out/rank.$r.meta
    [ "$(wp_meta "$meta" status)" = complete ] || wp_fail "rank $r status: $(wp_meta "$meta" status)"
    [ "$(wp_meta "$meta" threads)" = 5 ] || wp_fail "rank $r sampled $(wp_meta "$meta" threads) threads"
    s=$(wp_meta "$meta" samples); d=$(wp_meta "$meta" dropped_loader); f=$(wp_meta "$meta" dropped_full)
    wp_note "rank $r: samples=$s dropped_loader=$d dropped_full=$f unwind_failures=$(wp_meta "$meta" unwind_failures)"
    # Each timer expiration is either a sample (weighted by its overruns)
    # or counted as dropped, so together they are the expirations of 5
    # threads at 5 kHz: the sampler keeping pace.  How many land inside
    # dlopen/dlclose, and are dropped, depends on how long those take under
    # the machine's load (on MPICH about half), so the samples alone are
    # only required to be there.
    t=$((s + d + f)) n=$((secs * 5000 * 5))
    [ "$t" -ge $((n * 8 / 10)) ] || wp_fail "rank $r: $t timer expirations accounted (samples + dropped) in ${secs}s at 5 kHz x 5 threads, expected about $n"
    [ "$s" -gt $((secs * 500)) ] || wp_fail "rank $r: only $s samples kept in ${secs}s at 5 kHz x 5 threads"
    dropped=$((dropped + d))
done
[ "$dropped" -gt 0 ] || wp_fail "no sample was dropped during dlopen/dlclose: the guard is not counting"
grep -q "stress rank=0 rounds=" "$WP_TMP/stdout" || wp_fail "stress printed no result"
