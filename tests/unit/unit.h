/* tests/unit/unit.h — the running of a unit test's suite, shared by every
 * tests/unit/test_*.c: each main builds its suite and returns
 * wp_unit_run(suite, fork), the exit status Automake's test driver reads
 * (0 when every test passed).  fork 0 runs the tests in the test process
 * itself (CK_NOFORK), for tests that share state between them; 1 keeps
 * Check's default, a process per test, so that a crash fails one test. */
#ifndef WP_TESTS_UNIT_H
#define WP_TESTS_UNIT_H

#include <check.h>
#include <stdlib.h>

static inline int wp_unit_run(Suite *s, int fork)
{
    SRunner *sr = srunner_create(s);
    if (!fork)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
