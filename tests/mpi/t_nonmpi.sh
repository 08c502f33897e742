#!/bin/sh
# Programs that never call MPI run exactly as without libwaitprof: same
# stdout, stderr and exit code, and nothing is written.
. "$(dirname "$0")/../lib.sh"
mkdir -p "$WP_TMP/cwd" && cd "$WP_TMP/cwd" || wp_fail "no temp dir"
check() {
    want_code=0; "$@" >"$WP_TMP/o1" 2>"$WP_TMP/e1" || want_code=$?
    got_code=0; LD_PRELOAD=$WP_LIB "$@" >"$WP_TMP/o2" 2>"$WP_TMP/e2" || got_code=$?
    [ "$want_code" = "$got_code" ] || wp_fail "$*: exit code $got_code under LD_PRELOAD, $want_code without"
    cmp -s "$WP_TMP/o1" "$WP_TMP/o2" || wp_fail "$*: stdout differs under LD_PRELOAD"
    cmp -s "$WP_TMP/e1" "$WP_TMP/e2" || { cat "$WP_TMP/e2" >&2; wp_fail "$*: stderr differs under LD_PRELOAD"; }
    wp_note "$*: unchanged (exit $got_code)"
}
check /bin/true
check /bin/sh -c 'echo shell; exit 3'
check "$PYTHON" -c 'import threading; t = threading.Thread(target=print, args=("py",)); t.start(); t.join()'
check "$WP_BUILDDIR/tests/mpi/nonmpi" 7
[ -z "$(ls -A .)" ] || wp_fail "files were written: $(ls -A .)"
