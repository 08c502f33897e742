/* examples/stencil.c — the demo program of waitprof.
 *
 * A 1-D Jacobi relaxation split into one block of cells per rank.  Each step
 * exchanges one halo cell with each neighbour (MPI_Irecv/MPI_Isend, then
 * MPI_Waitall), relaxes the block, and every few steps sums a residual over
 * all ranks with MPI_Allreduce.
 *
 * The load is unbalanced on purpose: rank r relaxes its block (1 + r*imb)
 * times as often as rank 0, so the faster ranks wait for the slowest one in
 * MPI_Waitall and MPI_Allreduce.  The profile of this program therefore has
 * a visible MPI share on the low ranks and almost none on the highest one.
 *
 * The phases are separate noinline functions (compute_interior,
 * exchange_halos, global_residual, ...) so that each is one frame of the
 * flame graph.
 *
 * usage: stencil [-s steps] [-n cells per rank] [-u sweeps] [-i imbalance]
 *                [-r residual every]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct params {
    int steps;       /* -s: time steps */
    int cells;       /* -n: cells owned by each rank */
    int sweeps;      /* -u: relaxation sweeps per step on rank 0 */
    double imb;      /* -i: extra work per rank: rank r does sweeps*(1+r*imb) */
    int every;       /* -r: global residual every this many steps */
};

struct block {
    int n;           /* owned cells; u[0] and u[n+1] are the halo cells */
    double *u, *v;   /* current and next values */
    int left, right; /* neighbour ranks, MPI_PROC_NULL at the ends */
};

static void usage(FILE *out)
{
    fprintf(out, "usage: stencil [-s steps] [-n cells per rank] [-u sweeps per step] "
                 "[-i imbalance] [-r residual every]\n"
                 "  defaults: -s 1300 -n 200000 -u 4 -i 0.5 -r 10\n"
                 "  rank r relaxes its block sweeps*(1+r*imbalance) times per step\n");
}

/* A whole number >= lo from an option argument, or -1. */
static long parse_int(const char *s, long lo)
{
    char *end;
    long x = strtol(s, &end, 10);
    return (*s != '\0' && *end == '\0' && x >= lo && x <= 100000000L) ? x : -1;
}

/* 0 on success, 1 on a bad option (message printed by rank 0), 2 for -h. */
static int parse_args(int argc, char **argv, int rank, struct params *p)
{
    p->steps = 1300;
    p->cells = 200000;
    p->sweeps = 4;
    p->imb = 0.5;
    p->every = 10;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "s:n:u:i:r:h")) != -1) {
        long x = 0;
        char *end = NULL;
        switch (c) {
        case 's': x = parse_int(optarg, 1); p->steps = (int)x; break;
        case 'n': x = parse_int(optarg, 2); p->cells = (int)x; break;
        case 'u': x = parse_int(optarg, 1); p->sweeps = (int)x; break;
        case 'r': x = parse_int(optarg, 1); p->every = (int)x; break;
        case 'i':
            p->imb = strtod(optarg, &end);
            x = (*optarg != '\0' && *end == '\0' && p->imb >= 0 && p->imb <= 100) ? 0 : -1;
            break;
        case 'h':
            if (rank == 0)
                usage(stdout);
            return 2;
        default:
            x = -1;
            break;
        }
        if (x < 0) {
            if (rank == 0) {
                if (c == '?')
                    fprintf(stderr, "stencil: unknown option or missing value: -%c\n", optopt);
                else
                    fprintf(stderr, "stencil: bad value for -%c: %s\n", c, optarg);
                usage(stderr);
            }
            return 1;
        }
    }
    if (optind < argc) {
        if (rank == 0) {
            fprintf(stderr, "stencil: unexpected argument: %s\n", argv[optind]);
            usage(stderr);
        }
        return 1;
    }
    return 0;
}

/* A smooth start with a bump in the middle of the global domain. */
static NOINLINE void init_field(struct block *b, int rank)
{
    long first = (long)rank * b->n;
    for (int i = 0; i <= b->n + 1; i++) {
        long g = first + i - 1;
        b->u[i] = (g % 97) * 0.01;
        b->v[i] = 0;
    }
}

/* Send my edge cells to the neighbours and receive their edge cells into my
 * halo.  MPI_PROC_NULL neighbours make the calls at the ends no-ops. */
static NOINLINE void exchange_halos(struct block *b)
{
    MPI_Request req[4];
    /* A real array rather than MPI_STATUSES_IGNORE: with MPICH's mpi.h GCC
     * takes that constant for an empty array and warns (-Wstringop-overflow). */
    MPI_Status st[4];
    MPI_Irecv(&b->u[0], 1, MPI_DOUBLE, b->left, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&b->u[b->n + 1], 1, MPI_DOUBLE, b->right, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&b->u[1], 1, MPI_DOUBLE, b->left, 0, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&b->u[b->n], 1, MPI_DOUBLE, b->right, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, st);
}

/* One Jacobi sweep over the owned cells, then swap the arrays. */
static NOINLINE void relax(struct block *b)
{
    double *u = b->u, *v = b->v;
    for (int i = 1; i <= b->n; i++)
        v[i] = 0.5 * (u[i - 1] + u[i + 1]);
    v[0] = u[0];
    v[b->n + 1] = u[b->n + 1];
    b->u = v;
    b->v = u;
}

/* The compute phase of a step: this rank's share of sweeps. */
static NOINLINE void compute_interior(struct block *b, int sweeps)
{
    for (int s = 0; s < sweeps; s++)
        relax(b);
}

/* Sum of squared second differences over the owned cells. */
static NOINLINE double local_residual(const struct block *b)
{
    double r = 0;
    for (int i = 1; i <= b->n; i++) {
        double d = b->u[i - 1] - 2 * b->u[i] + b->u[i + 1];
        r += d * d;
    }
    return r;
}

/* The residual of the whole domain, known to every rank. */
static NOINLINE double global_residual(const struct block *b)
{
    double mine = local_residual(b), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static NOINLINE double run_steps(struct block *b, const struct params *p, int sweeps)
{
    double res = 0;
    for (int step = 1; step <= p->steps; step++) {
        exchange_halos(b);
        compute_interior(b, sweeps);
        if (step % p->every == 0 || step == p->steps)
            res = global_residual(b);
    }
    return res;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct params p;
    int rc = parse_args(argc, argv, rank, &p);
    if (rc != 0) {
        MPI_Finalize();
        return rc == 2 ? 0 : 2;
    }

    struct block b;
    memset(&b, 0, sizeof b);
    b.n = p.cells;
    b.u = malloc((size_t)(b.n + 2) * sizeof *b.u);
    b.v = malloc((size_t)(b.n + 2) * sizeof *b.v);
    if (b.u == NULL || b.v == NULL) {
        fprintf(stderr, "stencil: rank %d: not enough memory for %d cells\n", rank, b.n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    b.left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    b.right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    init_field(&b, rank);

    /* The deliberate imbalance: rounded to whole sweeps. */
    int sweeps = (int)(p.sweeps * (1.0 + rank * p.imb) + 0.5);
    if (sweeps < 1)
        sweeps = 1;

    double t0 = MPI_Wtime();
    double res = run_steps(&b, &p, sweeps);
    double elapsed = MPI_Wtime() - t0;

    double slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("stencil: %d ranks, %d steps of %d cells per rank, sweeps per step %d (rank 0) to %d "
               "(rank %d); residual %.6e; %.2f s\n",
               size, p.steps, p.cells, p.sweeps, (int)(p.sweeps * (1.0 + (size - 1) * p.imb) + 0.5),
               size - 1, res, slowest);
    free(b.u); /* relax() swaps the two arrays; both came from malloc */
    free(b.v);
    MPI_Finalize();
    return 0;
}
