#!/bin/sh
# The launcher: options set the variables, LD_PRELOAD is prepended, bad
# options fail with exit code 2; an existing output directory is never
# overwritten; without WAITPROF_OUT the directory is named after the time.
. "$(dirname "$0")/../lib.sh"
got=$(LD_PRELOAD=libm.so.6 "$WP_LAUNCHER" sh -c 'echo "$LD_PRELOAD"')
[ "$got" = "$WP_LIB:libm.so.6" ] || wp_fail "LD_PRELOAD became '$got'"
"$WP_LAUNCHER" --help >/dev/null || wp_fail "--help failed"
code=0; "$WP_LAUNCHER" --bogus true 2>/dev/null || code=$?
[ "$code" = 2 ] || wp_fail "unknown option gave exit code $code"
code=0; "$WP_LAUNCHER" --hz 2>/dev/null || code=$?
[ "$code" = 2 ] || wp_fail "--hz without a value gave exit code $code"

prog=$WP_BUILDDIR/tests/mpi/ending
cd "$WP_TMP" || wp_fail "no temp dir"
wp_mpirun 2 "$WP_LAUNCHER" --hz 250 --out "$WP_TMP/run" -- "$prog" finalize 0 >/dev/null 2>&1 || wp_fail "run 1"
[ "$(wp_meta run/rank.0.meta hz)" = 250 ] || wp_fail "--hz 250 not applied"
sum1=$(cksum < run/all.folded)
wp_mpirun 2 "$WP_LAUNCHER" --out "$WP_TMP/run" "$prog" finalize 0 >/dev/null 2>"$WP_TMP/stderr" || wp_fail "run 2"
[ -f run.1/all.folded ] || wp_fail "second run did not go to run.1"
[ "$(cksum < run/all.folded)" = "$sum1" ] || wp_fail "first run's profile was overwritten"
grep -q "profile in $WP_TMP/run.1/" "$WP_TMP/stderr" || wp_fail "summary does not name run.1"
mkdir -p cwd && cd cwd || wp_fail "no cwd"
wp_mpirun 2 "$WP_LAUNCHER" "$prog" finalize 0 >/dev/null 2>&1 || wp_fail "run 3"
ls -d waitprof.2*/all.folded >/dev/null 2>&1 || wp_fail "no ./waitprof.<time> directory: $(ls)"
wp_note "launcher options, LD_PRELOAD prepending, no overwrite, default directory: ok"
