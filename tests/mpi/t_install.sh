#!/bin/sh
# 'make install' puts the library, the launcher, the report tool, the public
# header and the man pages in place, and the installed launcher points at the installed
# library.
. "$(dirname "$0")/../lib.sh"
dest=$WP_TMP/dest
make -C "$WP_BUILDDIR" install DESTDIR="$dest" >"$WP_TMP/log" 2>&1 || { tail -20 "$WP_TMP/log"; wp_fail "make install"; }
eval "$(make -s -C "$WP_BUILDDIR" print-install-dirs)"
for f in "$libdir/libwaitprof.so" "$bindir/waitprof" "$includedir/waitprof.h" \
         "$mandir/man1/waitprof.1" "$mandir/man3/waitprof.3"; do
    [ -s "$dest$f" ] || wp_fail "not installed: $f"
done
grep -q "$libdir/libwaitprof.so" "$dest$bindir/waitprof" || wp_fail "installed launcher does not use $libdir"
"$dest$bindir/waitprof" --version | grep -q "built for $MPI_FLAVOR" || wp_fail "--version"
# `waitprof report` finds the report tool installed next to the launcher.
"$dest$bindir/waitprof" report --help | grep -q "^usage: waitprof report" || wp_fail "installed 'waitprof report' does not run the report tool"
# The installed header compiles on its own, in C and C++.
printf '#include "waitprof.h"\nint main(void){struct waitprof_thread_state s; return WAITPROF_API_VERSION - 1 + (int)sizeof s * 0;}\n' > "$WP_TMP/h.c"
cc -Wall -Werror -I"$dest$includedir" -o "$WP_TMP/h" "$WP_TMP/h.c" || wp_fail "header does not compile in C"
if command -v c++ >/dev/null; then
    c++ -Wall -Werror -x c++ -I"$dest$includedir" -o "$WP_TMP/hpp" "$WP_TMP/h.c" || wp_fail "header does not compile in C++"
fi
wp_note "installed: $(cd "$dest" && find . -type f | sort | tr '\n' ' ')"
