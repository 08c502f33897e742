/* wrap/traffic.c — message traffic counted by the wrappers.  See
 * wrap/traffic.h. */
#include <sys/mman.h>

#include "state/functions.h"
#include "state/thread.h"
#include "wrap/traffic.h"

struct wp_table_list wp_traffic_list;

uint64_t *wp_mx;
int wp_mx_size;
static int wp_mx_rank;

void wp_traffic_init(int rank, int size, int matrix)
{
    wp_mx_rank = rank;
    if (!matrix || size <= 0)
        return;
    void *m = mmap(NULL, (size_t)size * 3 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    wp_mx = m;
    wp_mx_size = size;
}

/* The thread's first count: a call without arguments, so that the common
 * path (one TLS load) keeps the caller's registers as they are: with the
 * claim's four arguments inlined, GCC saved two more registers on every
 * wrapped send and receive (6 instructions per call, callgrind). */
static __attribute__((noinline, cold)) struct wp_traffic_table *wp_traffic_claim(void)
{
    return wp_table_claim(WP_TABLE_TRAFFIC, sizeof(struct wp_traffic_table), &wp_traffic_list, NULL);
}

static inline struct wp_traffic_table *wp_traffic_mine(void)
{
    struct wp_traffic_table *t = wp_self.table[WP_TABLE_TRAFFIC];
    return __builtin_expect(t != NULL, 1) ? t : wp_traffic_claim();
}

/* The peer's rank in MPI_COMM_WORLD; -1 when unknown (MPI_ANY_SOURCE,
 * MPI_PROC_NULL, an intercommunicator).  Only asked with the matrix on. */
static int wp_world_rank(int peer, MPI_Comm comm)
{
    if (peer < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return peer;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return -1;
    MPI_Group g, w;
    int out = -1;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return -1;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS) {
        if (PMPI_Group_translate_ranks(g, 1, &peer, w, &out) != MPI_SUCCESS || out == MPI_UNDEFINED)
            out = -1;
        PMPI_Group_free(&w);
    }
    PMPI_Group_free(&g);
    return out;
}

void wp_traffic_send(int fn, uint64_t bytes, int dest, MPI_Comm comm)
{
    struct wp_traffic_table *t = wp_traffic_mine();
    if (t == NULL || fn <= 0 || fn >= WP_FN_COUNT || dest == MPI_PROC_NULL)
        return;
    t->fn[fn].bytes_sent += bytes;
    t->fn[fn].req_sent++;
    if (wp_mx) {
        int j = wp_world_rank(dest, comm);
        if (j >= 0 && j < wp_mx_size) {
            __atomic_fetch_add(&wp_mx[3 * (size_t)j], bytes, __ATOMIC_RELAXED);
            __atomic_fetch_add(&wp_mx[3 * (size_t)j + 1], 1, __ATOMIC_RELAXED);
        }
    }
}

void wp_traffic_recv(int fn, uint64_t bytes, int source, MPI_Comm comm, uint64_t dur)
{
    struct wp_traffic_table *t = wp_traffic_mine();
    if (t == NULL || fn <= 0 || fn >= WP_FN_COUNT || source == MPI_PROC_NULL)
        return;
    t->fn[fn].bytes_recv += bytes;
    t->fn[fn].req_recv++;
    /* dur is the duration the wrapper recorded (wp_record): TIME(i,j)
     * adds it without a clock read of its own, which would also count the
     * recording.  With the matrix on, the wrappers time every blocking
     * receive (wrap/gen_wrappers.py, pre_numbered). */
    if (wp_mx && dur) {
        int j = wp_world_rank(source, comm);
        if (j >= 0 && j < wp_mx_size)
            __atomic_fetch_add(&wp_mx[3 * (size_t)j + 2], dur, __ATOMIC_RELAXED);
    }
}

