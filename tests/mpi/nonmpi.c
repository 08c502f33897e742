/* nonmpi: a program that never calls MPI but creates a thread and dlopens a
 * library, the things libwaitprof interposes.  Under LD_PRELOAD it must
 * behave exactly as without: same output, same exit code (its argument). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *child(void *arg)
{
    *(int *)arg += 1;
    return NULL;
}

int main(int argc, char **argv)
{
    int v = 41;
    pthread_t th;
    pthread_create(&th, NULL, child, &v);
    pthread_join(th, NULL);
    void *h = dlopen("libm.so.6", RTLD_NOW);
    double (*c)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
    printf("value=%d cos0=%g\n", v, c ? c(0.0) : -1.0);
    if (h)
        dlclose(h);
    return argc > 1 ? atoi(argv[1]) : 0;
}
