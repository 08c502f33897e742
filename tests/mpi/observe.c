/* tests/mpi/observe.c — what a program observes of its own process while it
 * is sampled, one line per case, for t_observe.sh to compare with and
 * without waitprof (2 ranks):
 *   errno       errno set before a busy second stays what it was
 *   mask        the signal mask after sleeps, polls and MPI calls is the
 *               one before them
 *   restart     read() on a pipe whose byte comes 300 ms later, under the
 *               program's own SA_RESTART handler, returns the byte
 *   norestart   the same read() is interrupted by the program's SIGUSR1
 *               without SA_RESTART: -1 EINTR, as without waitprof, in at
 *               least two of three tries (see norestart_case)
 *   fork        a child's exit code through waitpid()
 *   system      system("exit 7")'s status
 *   exec        a child that execs /bin/true: exit code 0
 */
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rank;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void on_usr1(int sig)
{
    (void)sig;
}

struct late {
    int fd;
    pid_t tid;
    int signal_it;
};

/* 300 ms later: SIGUSR1 to the reader (signal_it), then, 300 ms after
 * that, one byte into the pipe. */
static void *late_writer(void *arg)
{
    struct late *l = arg;
    struct timespec d = {0, 300 * 1000000L};
    nanosleep(&d, NULL);
    if (l->signal_it)
        syscall(SYS_tgkill, getpid(), l->tid, SIGUSR1);
    nanosleep(&d, NULL);
    char c = 'z';
    if (write(l->fd, &c, 1) != 1)
        exit(2);
    return NULL;
}

/* One read() as described above; its result in *n, *e and *c. */
static void read_once(int flags, ssize_t *n, int *e, char *c)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = flags;
    sigaction(SIGUSR1, &sa, NULL);
    int fds[2];
    if (pipe(fds) != 0)
        exit(2);
    struct late l = {fds[1], (pid_t)syscall(SYS_gettid), 1};
    pthread_t th;
    pthread_create(&th, NULL, late_writer, &l);
    *c = 0;
    errno = 0;
    *n = read(fds[0], c, 1);
    *e = errno;
    pthread_join(th, NULL);
    close(fds[0]);
    close(fds[1]);
}

static void print_read(const char *name, ssize_t n, int e, char c)
{
    printf("rank %d %s %zd %d %c\n", rank, name, n, n < 0 ? e : 0, n == 1 ? c : '-');
}

static void read_case(const char *name, int flags)
{
    ssize_t n;
    int e;
    char c;
    read_once(flags, &n, &e, &c);
    print_read(name, n, e, c);
}

/* The read() without SA_RESTART, three times; the EINTR line if at least
 * two ended with EINTR, else the first other result.  A sample whose
 * handler runs on the blocked thread has already marked the read for
 * restart (SIGPROF has SA_RESTART) when the kernel delivers it; a SIGUSR1
 * arriving in the microseconds until the handler returns is then handled
 * nested, and the read goes on as if SIGUSR1 had SA_RESTART.  The kernel
 * decides that, not waitprof, and README names the window; a CI run under
 * load once hit it at 1000 Hz.  Whatever changed the program's own flags
 * or retried its reads would turn all three. */
static void norestart_case(void)
{
    ssize_t n0 = 0;
    int e0 = 0, eintr = 0, have = 0;
    char c0 = 0;
    for (int i = 0; i < 3; i++) {
        ssize_t n;
        int e;
        char c;
        read_once(0, &n, &e, &c);
        if (n < 0 && e == EINTR)
            eintr++;
        else if (!have) {
            have = 1;
            n0 = n;
            e0 = e;
            c0 = c;
        }
    }
    if (eintr >= 2)
        print_read("norestart", -1, EINTR, '-');
    else
        print_read("norestart", n0, e0, c0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    errno = 4242;
    double t0 = now_s();
    volatile double x = 0;
    while (now_s() - t0 < 1.0)
        x += 1e-9;
    printf("rank %d errno %d\n", rank, errno);

    sigset_t before, after;
    sigemptyset(&before);
    sigaddset(&before, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &before, NULL);
    pthread_sigmask(SIG_BLOCK, NULL, &before);
    struct timespec d = {0, 100 * 1000000L};
    nanosleep(&d, NULL);
    struct pollfd p = {0, 0, 0};
    poll(&p, 0, 100);
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_sigmask(SIG_BLOCK, NULL, &after);
    int same = 1;
    for (int s = 1; s < 32; s++)
        same &= sigismember(&before, s) == sigismember(&after, s);
    printf("rank %d mask %d\n", rank, same);

    read_case("restart", SA_RESTART);
    norestart_case();

    pid_t child = fork();
    if (child == 0)
        _exit(5);
    int st = 0;
    waitpid(child, &st, 0);
    printf("rank %d fork %d\n", rank, WIFEXITED(st) ? WEXITSTATUS(st) : -1);

    int rc = system("exit 7");
    printf("rank %d system %d\n", rank, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);

    child = fork();
    if (child == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(99);
    }
    waitpid(child, &st, 0);
    printf("rank %d exec %d\n", rank, WIFEXITED(st) ? WEXITSTATUS(st) : -1);

    MPI_Finalize();
    return 0;
}
