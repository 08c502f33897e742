# (fragment of Makefile.am)
# The demo program run by './quickstart demo': an unbalanced 1-D stencil.
# Frame pointers and -g keep its phases readable in the flame graph; the
# project's warning flags (AM_CFLAGS) still apply because a per-target CFLAGS
# replaces AM_CFLAGS.
noinst_PROGRAMS += examples/stencil
examples_stencil_SOURCES = examples/stencil.c
examples_stencil_CFLAGS = $(AM_CFLAGS) -g -O2 -fno-omit-frame-pointer
