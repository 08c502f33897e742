# (fragment of Makefile.am)
# The demo program run by './quickstart demo': an unbalanced 1-D stencil.
# Frame pointers and -g keep its phases readable in the flame graph; the
# project's warning flags (AM_CFLAGS) still apply because a per-target CFLAGS
# replaces AM_CFLAGS.
noinst_PROGRAMS += examples/stencil
examples_stencil_SOURCES = examples/stencil.c
examples_stencil_CFLAGS = $(AM_CFLAGS) -g -O2 -fno-omit-frame-pointer

# `make doc-example`: a new run of the example whose files and report
# doc/report.md shows (examples/doc-example.sh); tests/mpi/t_doc_report.sh
# fails when the page no longer matches what the report writes.
doc-example: examples/stencil bin/waitprof libwaitprof.la
	$(SHELL) $(srcdir)/examples/doc-example.sh
.PHONY: doc-example
EXTRA_DIST += examples/doc-example.sh
