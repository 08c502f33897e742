# tests/lib.sh — shared by the integration test scripts (sourced).
# Each script is run by 'make check' in a build directory; it sources the
# build's tests/env.sh for the MPI it was configured with.
# Exit codes: 0 pass, 1 fail, 77 skip (never 0 for a skip).
set -u
. "${WP_ENV:-./tests/env.sh}"
export WAITPROF_LIB="$WP_LIB"
WP_TEST=$(basename "$0" .sh)
WP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/wp-$WP_TEST.XXXXXX")
trap 'rm -rf "$WP_TMP"' EXIT

wp_fail() { echo "FAIL [$WP_TEST, $MPI_FLAVOR]: $*" >&2; exit 1; }
wp_skip() { echo "SKIP [$WP_TEST, $MPI_FLAVOR]: $*" >&2; exit 77; }
wp_note() { echo "[$WP_TEST, $MPI_FLAVOR] $*"; }

[ -n "$MPIEXEC" ] && command -v "$MPIEXEC" >/dev/null 2>&1 || wp_skip "no MPI launcher"

# wp_mpirun NP program args... — run under the build's MPI launcher, with
# the flags a 2-core root container needs.  The environment is inherited by
# the local ranks.  A hung run is killed after WP_TIMEOUT seconds.
wp_mpirun() {
    np=$1; shift
    case $MPI_FLAVOR in
    openmpi)
        timeout -k 10 "${WP_TIMEOUT:-300}" "$MPIEXEC" --allow-run-as-root --oversubscribe \
            --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
            -np "$np" "$@" ;;
    *)
        timeout -k 10 "${WP_TIMEOUT:-300}" "$MPIEXEC" -n "$np" "$@" ;;
    esac
}

# wp_profile NP OUTDIR program args... — the same under the waitprof launcher.
wp_profile() {
    np=$1; out=$2; shift 2
    WAITPROF_OUT="$out" wp_mpirun "$np" "$WP_LAUNCHER" "$@"
}

# wp_meta FILE KEY — a value from a rank.R.meta file.
wp_meta() { sed -n "s/^$2=//p" "$1" | head -n 1; }

# wp_folded ARGS... — tests/folded.py (checks the format, answers queries).
wp_folded() { "$PYTHON" "$WP_SRCDIR/tests/folded.py" "$@"; }
