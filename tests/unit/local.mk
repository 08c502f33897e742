# (fragment of Makefile.am)
