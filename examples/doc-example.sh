#!/bin/sh
# `make doc-example`: a new run of the bundled example (examples/stencil.c)
# on 4 ranks under this build's MPI, whose per-rank files replace
# doc/example/run; then doc/gen_report_doc.py regenerates doc/example/ and
# the generated parts of doc/report.md from them.  Run in a build
# directory; commit doc/ afterwards.
set -eu
. ./tests/env.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wp-doc-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $MPI_FLAVOR in
openmpi) flags="--allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1" ;;
*) flags= ;;
esac
# shellcheck disable=SC2086 # flags are words
WAITPROF_LIB=$WP_LIB "$MPIEXEC" $flags -np 4 "$WP_LAUNCHER" --out "$tmp/run" "$WP_BUILDDIR/examples/stencil"
for f in "$tmp"/run/rank.*; do
    [ -e "$f" ] || { echo "doc-example: the run wrote no rank files" >&2; exit 1; }
done
rm -rf "$WP_SRCDIR/doc/example/run"
mkdir -p "$WP_SRCDIR/doc/example/run"
cp "$tmp"/run/rank.* "$WP_SRCDIR/doc/example/run/"
"$PYTHON" "$WP_SRCDIR/doc/gen_report_doc.py" "$WP_LAUNCHER" "$WP_SRCDIR/doc"
