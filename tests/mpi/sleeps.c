/* tests/mpi/sleeps.c — the calls a signal can cut short, timed, so that
 * t_sleeps.sh can compare them with and without waitprof.
 *
 *   sleeps calls     each call with a 300 ms (sleep: 1 s) timeout on every
 *                    rank; one line per call: "call RANK NAME RC ERRNO MS"
 *   sleeps alarm     the program's own SIGALRM, 100 ms after the start,
 *                    interrupts nanosleep and poll of 1 s: "alarm ..." lines
 *   sleeps thread    the same from a second thread, while the main thread
 *                    waits in MPI_Recv for rank 1, which sends after 600 ms
 *   sleeps stress S  S seconds: three threads sleep, poll a pipe and select
 *                    in short timed calls, a fourth polls with no timeout,
 *                    while the main thread makes MPI calls; "stress RANK
 *                    early=N calls=N", and exit code 3 after MPI_Finalize
 */
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int rank;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void report(const char *kind, const char *name, long rc, int err, double ms)
{
    printf("%s %d %s %ld %d %.1f\n", kind, rank, name, rc, rc < 0 ? err : 0, ms);
    fflush(stdout);
}

/* Time one call: rc and errno as the call left them. */
#define TIMED(kind, name, call)                                                                                     \
    do {                                                                                                            \
        double t0_ = now_ms();                                                                                      \
        errno = 0;                                                                                                  \
        long rc_ = (long)(call);                                                                                    \
        int e_ = errno;                                                                                             \
        report(kind, name, rc_, e_, now_ms() - t0_);                                                                \
    } while (0)

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* SIGALRM to this thread after ms milliseconds (a thread-directed timer,
 * so the signal interrupts this thread's call and no other's). */
static timer_t alarm_in(int ms)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t t;
    if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
        perror("timer_create");
        exit(2);
    }
    struct itimerspec its = {{0, 0}, {ms / 1000, (long)(ms % 1000) * 1000000L}};
    timer_settime(t, 0, &its, NULL);
    return t;
}

static void *sender(void *arg)
{
    int q = *(int *)arg;
    struct timespec d = {0, 300 * 1000000L};
    nanosleep(&d, NULL);
    struct {
        long type;
        char text[8];
    } m = {1, "hello"};
    msgsnd(q, &m, sizeof m.text, 0);
    return NULL;
}

static void calls(void)
{
    struct timespec d300 = {0, 300 * 1000000L}, zero = {0, 0};
    int fds[2];
    if (pipe(fds) != 0)
        exit(2);
    TIMED("call", "nanosleep", nanosleep(&d300, NULL));
    TIMED("call", "clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &d300, NULL));
    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_nsec += 300 * 1000000L;
    if (abs.tv_nsec >= 1000000000L)
        abs.tv_sec++, abs.tv_nsec -= 1000000000L;
    TIMED("call", "clock_nanosleep_abs", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL));
    TIMED("call", "usleep", usleep(300000));
    TIMED("call", "sleep", sleep(1));
    struct pollfd p = {fds[0], POLLIN, 0};
    TIMED("call", "poll", poll(&p, 1, 300));
    TIMED("call", "ppoll", ppoll(&p, 1, &d300, NULL));
    sigset_t none;
    sigemptyset(&none);
    TIMED("call", "ppoll_mask", ppoll(&p, 1, &d300, &none));
    fd_set r;
    FD_ZERO(&r);
    FD_SET(fds[0], &r);
    struct timeval tv = {0, 300000};
    TIMED("call", "select", select(fds[0] + 1, &r, NULL, NULL, &tv));
    FD_ZERO(&r);
    FD_SET(fds[0], &r);
    TIMED("call", "pselect", pselect(fds[0] + 1, &r, NULL, NULL, &d300, NULL));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[0]}, out[1];
    epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
    TIMED("call", "epoll_wait", epoll_wait(ep, out, 1, 300));
    TIMED("call", "epoll_pwait", epoll_pwait(ep, out, 1, 300, NULL));
    TIMED("call", "epoll_pwait_mask", epoll_pwait(ep, out, 1, 300, &none));
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    TIMED("call", "sigtimedwait", sigtimedwait(&usr2, NULL, &d300));
    /* A semaphore at 1: waiting for zero times out. */
    int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    struct sembuf up = {0, 1, 0}, wait0 = {0, 0, 0};
    semop(sem, &up, 1);
    TIMED("call", "semtimedop", semtimedop(sem, &wait0, 1, &d300));
    semctl(sem, 0, IPC_RMID);
    /* A message queue whose message comes 300 ms later, from a thread. */
    int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    pthread_t th;
    pthread_create(&th, NULL, sender, &q);
    struct {
        long type;
        char text[8];
    } m;
    TIMED("call", "msgrcv", msgrcv(q, &m, sizeof m.text, 0, 0));
    pthread_join(th, NULL);
    msgctl(q, IPC_RMID, NULL);
    /* A socket with a receive timeout. */
    int sp[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
    struct timeval rto = {0, 300000};
    setsockopt(sp[0], SOL_SOCKET, SO_RCVTIMEO, &rto, sizeof rto);
    char c;
    TIMED("call", "recv", recv(sp[0], &c, 1, 0));
    TIMED("call", "recvfrom", recvfrom(sp[0], &c, 1, 0, NULL, NULL));
    /* The waits for a signal: the program's SIGALRM 300 ms later. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    timer_t t = alarm_in(300);
    TIMED("call", "pause", pause());
    timer_delete(t);
    t = alarm_in(300);
    TIMED("call", "sigsuspend", sigsuspend(&none));
    timer_delete(t);
    TIMED("call", "zero_timeout_poll", poll(&p, 1, 0));
    TIMED("call", "zero_timeout_sleep", nanosleep(&zero, NULL));
}

/* The program's SIGALRM still interrupts at the moment it fires. */
static void alarm_cuts(const char *kind)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct timespec d1 = {1, 0};
    timer_t t = alarm_in(100);
    TIMED(kind, "nanosleep", nanosleep(&d1, NULL));
    timer_delete(t);
    int fds[2];
    if (pipe(fds) != 0)
        exit(2);
    struct pollfd p = {fds[0], POLLIN, 0};
    t = alarm_in(100);
    TIMED(kind, "poll", poll(&p, 1, 1000));
    timer_delete(t);
}

static void *alarm_thread(void *arg)
{
    (void)arg;
    alarm_cuts("thread");
    return NULL;
}

/* --- stress ------------------------------------------------------------------ */

static volatile int stop;
static long early, ncalls;
static const char *const kind_name[4] = {"nanosleep", "poll", "select", "poll0"};
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(long e, long n)
{
    pthread_mutex_lock(&count_lock);
    early += e;
    ncalls += n;
    pthread_mutex_unlock(&count_lock);
}

static void *stress_worker(void *arg)
{
    int kind = (int)(long)arg, fds[2];
    if (pipe(fds) != 0)
        exit(2);
    long e = 0, n = 0;
    while (!stop) {
        double t0 = now_ms(), want;
        int rc;
        if (kind == 0) {
            struct timespec d = {0, 2 * 1000000L};
            want = 2;
            rc = nanosleep(&d, NULL);
        } else if (kind == 1) {
            struct pollfd p = {fds[0], POLLIN, 0};
            want = 5;
            rc = poll(&p, 1, 5);
        } else if (kind == 2) {
            fd_set r;
            FD_ZERO(&r);
            FD_SET(fds[0], &r);
            struct timeval tv = {0, 3000};
            want = 3;
            rc = select(fds[0] + 1, &r, NULL, NULL, &tv);
        } else {
            /* Polls with no timeout, as an event loop makes them: a
             * pending sample must not end one with EINTR. */
            struct pollfd p = {fds[0], POLLIN, 0};
            want = 0;
            rc = 0;
            for (int i = 0; i < 2000 && rc == 0; i++)
                rc = poll(&p, 1, 0);
            struct timespec d = {0, 1000000L};
            nanosleep(&d, NULL);
        }
        /* Failed, or returned before its time: cut short. */
        double took = now_ms() - t0;
        if (rc != 0 || took < want * 0.999) {
            if (e++ < 5)
                fprintf(stderr, "early rank=%d %s rc=%d errno=%d took=%.3f ms\n", rank, kind_name[kind], rc,
                        rc ? errno : 0, took);
        }
        n++;
    }
    count(e, n);
    return NULL;
}

static void stress(double secs)
{
    pthread_t th[4];
    for (long k = 0; k < 4; k++)
        pthread_create(&th[k], NULL, stress_worker, (void *)k);
    double t0 = now_ms();
    long iter = 0;
    while (1) {
        double x = rank, sum;
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int more = now_ms() - t0 < secs * 1e3, all;
        MPI_Allreduce(&more, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        iter++;
        if (!all)
            break;
        usleep(1000);
    }
    stop = 1;
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);
    printf("stress %d early=%ld calls=%ld mpi=%ld\n", rank, early, ncalls, iter);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calls";
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(mode, "calls") == 0) {
        calls();
    } else if (strcmp(mode, "alarm") == 0) {
        alarm_cuts("alarm");
    } else if (strcmp(mode, "thread") == 0) {
        /* The alarm on rank 0's second thread while its main thread waits
         * in MPI_Recv for rank 1, which sends after 600 ms. */
        int v = 0;
        if (rank == 0) {
            pthread_t th;
            pthread_create(&th, NULL, alarm_thread, NULL);
            MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            pthread_join(th, NULL);
        } else if (rank == 1) {
            struct timespec d = {0, 600 * 1000000L};
            nanosleep(&d, NULL);
            MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    } else if (strcmp(mode, "stress") == 0) {
        stress(argc > 2 ? atof(argv[2]) : 30);
    }
    MPI_Finalize();
    return strcmp(mode, "stress") == 0 ? 3 : 0;
}
