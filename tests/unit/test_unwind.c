/* tests/unit/test_unwind.c — the handler's unwinder (sampler/unwind.c)
 * against libunwind's signal-frame cursor, on the same signal contexts.
 *
 * A SIGPROF timer interrupts code of several shapes (recursion with
 * rsp-based frames, rbp-based frames with a variable-length array, libc's
 * qsort calling back into this file, a second thread, a library loaded
 * with dlopen after the table was built); in each handler run both
 * unwinders walk the interrupted stack.  Wherever wp_cfi_unwind_sig answers,
 * its frames must be libunwind's, exactly; it may decline, but rarely:
 * at most 2 % of a shape's samples (0.75 % was the most seen), and under
 * 2 % of the walks from a recorded frame (none was seen). */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sampler/unwind.h"
#include "tests/unit/unit.h"

#define MAXF 64

static __thread struct wp_cfi_cache *t_cache;
static __thread uintptr_t t_stack_lo, t_stack_hi;
static volatile int samples, answered, declined, mismatched;
static char first_mismatch[512];

/* A stand-in for a wrapper's frame (wrap/wrap.h): its CFA and a PC in it,
 * and its return address, to find its caller among libunwind's frames. */
static __thread volatile uintptr_t fw_cfa, fw_pc, fw_ra;
static __thread volatile int fw_live;
static volatile int from_samples, from_answered, from_mismatched;

/* wp_cfi_unwind_from_sig against libunwind's frames from the stand-in's
 * caller on. */
static void compare_from(void *uc, const uintptr_t *theirs, int m)
{
    uintptr_t ours[MAXF];
    int trunc = 0, j = 0;
    while (j < m && theirs[j] != fw_ra - 1)
        j++;
    if (j == m || m >= MAXF)
        return; /* the stand-in's frame not (yet or any more) on the stack */
    __atomic_fetch_add(&from_samples, 1, __ATOMIC_RELAXED);
    int n = wp_cfi_unwind_from_sig(uc, t_cache, t_stack_lo, t_stack_hi, fw_pc, fw_cfa, ours, MAXF, &trunc);
    if (n < 0)
        return;
    __atomic_fetch_add(&from_answered, 1, __ATOMIC_RELAXED);
    int same = n == m - j + 1 && ours[0] == fw_pc && !trunc;
    for (int i = 1; same && i < n; i++)
        same = ours[i] == theirs[j + i - 1];
    if (!same && __atomic_fetch_add(&from_mismatched, 1, __ATOMIC_RELAXED) == 0)
        snprintf(first_mismatch, sizeof first_mismatch, "from a frame: ours %d frames, libunwind %d after it",
                 n, m - j);
}

static void stack_bounds(void)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    ck_assert_int_eq(pthread_getattr_np(pthread_self(), &a), 0);
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    t_stack_lo = (uintptr_t)addr;
    t_stack_hi = (uintptr_t)addr + size;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    if (t_cache == NULL)
        return;
    uintptr_t ours[MAXF], theirs[MAXF + 1];
    int trunc = 0;
    int n = wp_cfi_unwind_sig(uc, t_cache, t_stack_lo, t_stack_hi, ours, MAXF, &trunc);
    int m = 0;
    unw_cursor_t c;
    if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
                break;
            theirs[m] = (uintptr_t)ip - (m > 0);
            m++;
        } while (m <= MAXF && unw_step(&c) > 0);
    }
    __atomic_fetch_add(&samples, 1, __ATOMIC_RELAXED);
    if (fw_live)
        compare_from(uc, theirs, m);
    if (n < 0) {
        __atomic_fetch_add(&declined, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&answered, 1, __ATOMIC_RELAXED);
    /* Deeper than compared: the first MAXF must agree, marked truncated. */
    int deep = m > MAXF;
    if (deep)
        m = MAXF;
    int same = n == m && trunc == deep;
    for (int i = 0; same && i < n; i++)
        same = ours[i] == theirs[i];
    if (!same && __atomic_fetch_add(&mismatched, 1, __ATOMIC_RELAXED) == 0) {
        int o = snprintf(first_mismatch, sizeof first_mismatch, "ours %d:", n);
        for (int i = 0; i < n && i < 8 && o < 400; i++)
            o += snprintf(first_mismatch + o, sizeof first_mismatch - (size_t)o, " %lx", (unsigned long)ours[i]);
        o += snprintf(first_mismatch + o, sizeof first_mismatch - (size_t)o, " | libunwind %d:", m);
        for (int i = 0; i < m && i < 8 && o < 500; i++)
            o += snprintf(first_mismatch + o, sizeof first_mismatch - (size_t)o, " %lx",
                          (unsigned long)theirs[i]);
    }
}

/* A process-directed wall-clock timer: high resolution, and its signal
 * goes to whichever thread does not block it. */
static timer_t timer;
static int have_timer;

static void arm(long usec)
{
    if (!have_timer) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_SIGNAL;
        sev.sigev_signo = SIGPROF;
        ck_assert_int_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
        have_timer = 1;
    }
    struct itimerspec it = {{0, usec * 1000}, {0, usec * 1000}};
    timer_settime(timer, 0, &it, NULL);
}

static void begin_thread(void)
{
    t_cache = calloc(1, sizeof *t_cache);
    stack_bounds();
}

static void reset(void)
{
    samples = answered = declined = mismatched = 0;
    first_mismatch[0] = '\0';
}

static void check_counts(const char *what, int min_samples)
{
    printf("%s: %d samples, %d answered, %d declined, %d mismatched\n", what, samples, answered, declined,
           mismatched);
    ck_assert_msg(mismatched == 0, "%s: %d of %d stacks differ from libunwind's; first: %s", what, mismatched,
                  answered, first_mismatch);
    ck_assert_msg(samples >= min_samples, "%s: only %d samples", what, samples);
    /* Declining is allowed (PLT stubs, the timer's own signal entry) but
     * must stay the exception. */
    ck_assert_msg(declined * 50 <= samples, "%s: declined %d of %d", what, declined, samples);
}

static double spin_until(double secs, double (*work)(int), int arg)
{
    struct timespec a, b;
    double acc = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        acc += work(arg);
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < secs);
    return acc;
}

/* rsp-based frames, some deep. */
__attribute__((noinline)) static double rec(int d)
{
    volatile double x = d;
    if (d <= 0) {
        for (int i = 0; i < 2000; i++)
            x = x * 1.0000001 + 0.5;
        return x;
    }
    return rec(d - 1) + x * 0.5;
}

/* An rbp-based CFA: the frame's size is known at run time only. */
__attribute__((noinline)) static double vla(int n)
{
    volatile double a[n + 1];
    for (int i = 0; i <= n; i++)
        a[i] = i;
    double s = 0;
    for (int k = 0; k < 20; k++)
        for (int i = 0; i <= n; i++)
            s += a[i] * 0.5 + rec(i % 3) * 1e-9;
    return s;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    volatile int spin = 0;
    for (int i = 0; i < 20; i++)
        spin += i;
    return x < y ? -1 : x > y;
}

/* libc's qsort between this file's frames. */
__attribute__((noinline)) static double sorting(int n)
{
    double *v = malloc(sizeof *v * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = (double)((i * 7919) % n);
    qsort(v, (size_t)n, sizeof *v, cmp);
    double r = v[n / 2];
    free(v);
    return r;
}

/* The stand-in wrapper: records its frame as wp_enter does, then calls
 * down (the MPI library's part). */
__attribute__((noinline)) static double fake_wrapper(int d)
{
    uintptr_t pc;
    __asm__("lea 0(%%rip), %0" : "=r"(pc));
    fw_cfa = (uintptr_t)__builtin_dwarf_cfa();
    fw_pc = pc;
    fw_ra = (uintptr_t)__builtin_return_address(0);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    fw_live = 1;
    double r = rec(d) + vla(d);
    fw_live = 0;
    __atomic_signal_fence(__ATOMIC_RELEASE);
    return r;
}

/* Its callers: an rsp-based one, and one whose CFA is rbp-based (the walk
 * from the stand-in's frame does not know rbp: it must decline there, not
 * guess). */
__attribute__((noinline)) static double call_plain(int d)
{
    return fake_wrapper(d) * 0.5;
}

__attribute__((noinline)) static double call_vla(int n)
{
    volatile double a[n + 1];
    for (int i = 0; i <= n; i++)
        a[i] = i;
    return fake_wrapper(20) + a[n / 2];
}

static void *thread_main(void *arg)
{
    (void)arg;
    begin_thread();
    double *r = malloc(sizeof *r);
    *r = spin_until(0.6, rec, 30);
    return r;
}

START_TEST(test_shapes)
{
    wp_cfi_refresh();
    begin_thread();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    arm(500);

    reset();
    spin_until(0.4, rec, 40);
    check_counts("recursion", 200);

    reset();
    spin_until(0.4, vla, 300);
    check_counts("variable-length array", 200);

    reset();
    spin_until(0.4, sorting, 3000);
    check_counts("qsort callback", 200);

    /* The signal goes to either thread: both are compared. */
    reset();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, thread_main, NULL), 0);
    spin_until(0.6, rec, 5);
    void *ret;
    pthread_join(th, &ret);
    free(ret);
    check_counts("two threads", 200);

    /* From a recorded frame: exact where answered, answered nearly always
     * under an rsp-based caller, declined (never wrong) under an rbp-based
     * one. */
    reset();
    from_samples = from_answered = from_mismatched = 0;
    spin_until(0.4, call_plain, 20);
    printf("from a frame, plain caller: %d samples, %d answered, %d mismatched\n", from_samples, from_answered,
           from_mismatched);
    ck_assert_msg(from_mismatched == 0, "%s", first_mismatch);
    ck_assert_int_ge(from_samples, 150);
    ck_assert_int_ge(from_answered * 50, from_samples * 49);
    check_counts("from a frame, plain caller", 200);

    reset();
    from_samples = from_answered = from_mismatched = 0;
    spin_until(0.4, call_vla, 30);
    printf("from a frame, rbp-based caller: %d samples, %d answered, %d mismatched\n", from_samples,
           from_answered, from_mismatched);
    ck_assert_msg(from_mismatched == 0, "%s", first_mismatch);
    ck_assert_int_ge(from_samples, 150);
    check_counts("from a frame, rbp-based caller", 200);
    arm(0);
}
END_TEST

/* A library loaded after the table was built: its frames are unknown (the
 * unwind declines) until the table is rebuilt, then answered. */
START_TEST(test_dlopen_refresh)
{
    wp_cfi_refresh();
    begin_thread();
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(h);
    double (*f)(double) = (double (*)(double))dlsym(h, "cbrt");
    ck_assert_ptr_nonnull(f);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    wp_cfi_refresh();
    arm(500);
    reset();
    struct timespec a, b;
    volatile double acc = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        for (int i = 1; i < 10000; i++)
            acc += f((double)i);
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < 0.4);
    arm(0);
    check_counts("dlopened libm", 200);
}
END_TEST

/* Outside any known object the unwinder declines rather than guess. */
START_TEST(test_unknown_pc)
{
    wp_cfi_refresh();
    begin_thread();
    ucontext_t uc;
    getcontext(&uc);
    uc.uc_mcontext.gregs[REG_RIP] = 0x10; /* no object maps page 0 */
    uintptr_t out[8];
    int trunc = 0;
    ck_assert_int_eq(wp_cfi_unwind_sig(&uc, t_cache, t_stack_lo, t_stack_hi, out, 8, &trunc), -1);
    /* A stack pointer off the thread's stack (an alternate signal stack, a
     * coroutine's): declined, above it and below it. */
    getcontext(&uc);
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(t_stack_hi + 4096);
    ck_assert_int_eq(wp_cfi_unwind_sig(&uc, t_cache, t_stack_lo, t_stack_hi, out, 8, &trunc), -1);
    static char other[1 << 16];
    getcontext(&uc);
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)(other + sizeof other / 2);
    ck_assert_int_eq(wp_cfi_unwind_sig(&uc, t_cache, t_stack_lo, t_stack_hi, out, 8, &trunc), -1);
}
END_TEST

/* A frame limit below the depth: max frames, marked truncated. */
START_TEST(test_truncated)
{
    wp_cfi_refresh();
    begin_thread();
    ucontext_t uc;
    getcontext(&uc);
    uintptr_t out[64];
    int trunc = 0;
    int n = wp_cfi_unwind_sig(&uc, t_cache, t_stack_lo, t_stack_hi, out, 64, &trunc);
    ck_assert_int_gt(n, 2);
    ck_assert_int_eq(trunc, 0);
    ck_assert_int_eq(wp_cfi_unwind_sig(&uc, t_cache, t_stack_lo, t_stack_hi, out, 2, &trunc), 2);
    ck_assert_int_eq(trunc, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("unwind");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_dlopen_refresh);
    tcase_add_test(tc, test_unknown_pc);
    tcase_add_test(tc, test_truncated);
    suite_add_tcase(s, tc);
    return wp_unit_run(s, 1);
}
