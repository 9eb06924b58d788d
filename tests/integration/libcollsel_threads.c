/* MPI_THREAD_MULTIPLE: THREADS threads per rank, each running MPI_Bcast, MPI_Reduce and
 * MPI_Allreduce on its own communicator at the same time, every result checked. Under Open MPI
 * libcollsel serves it (shadows made one communicator at a time); under MPICH it refuses this
 * thread level (one line on stderr, every call passed through). test_libcollsel.py and
 * test_libcollsel_apps.py check both. Rank 0 prints
 *   provided=<level name>
 *   case threads ok|FAIL
 * Exit 0 when every check passed. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 3
#ifndef ROUNDS
#define ROUNDS 40
#endif

struct work {
    MPI_Comm comm;
    int ok;
};

static void *run(void *arg)
{
    struct work *w = arg;
    int rank, size, round;
    MPI_Comm_rank(w->comm, &rank);
    MPI_Comm_size(w->comm, &size);
    w->ok = 1;
    for (round = 0; round < ROUNDS; round++) {
        int n = 1 + (round * 997) % 20000, i, *a = malloc((size_t)n * sizeof *a);
        int *b = malloc((size_t)n * sizeof *b);
        for (i = 0; i < n; i++)
            a[i] = rank == 0 ? i + round : -1;
        MPI_Bcast(a, n, MPI_INT, 0, w->comm);
        for (i = 0; i < n; i++)
            w->ok &= a[i] == i + round;
        for (i = 0; i < n; i++)
            a[i] = rank + i;
        MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, 0, w->comm);
        for (i = 0; i < n && rank == 0; i++)
            w->ok &= b[i] == size * i + size * (size - 1) / 2;
        MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, w->comm);
        for (i = 0; i < n; i++)
            w->ok &= b[i] == size * i + size * (size - 1) / 2;
        free(a);
        free(b);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const levels[] = {"single", "funneled", "serialized", "multiple"};
    struct work w[THREADS];
    pthread_t t[THREADS];
    int provided, rank, k, ok = 1, all = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("provided=%s\n", provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE
                                    ? levels[provided - MPI_THREAD_SINGLE] : "unknown");
    for (k = 0; k < THREADS; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &w[k].comm);
    if (provided == MPI_THREAD_MULTIPLE) {
        for (k = 0; k < THREADS; k++)
            pthread_create(&t[k], NULL, run, &w[k]);
        for (k = 0; k < THREADS; k++)
            pthread_join(t[k], NULL);
    } else {   /* one after the other */
        for (k = 0; k < THREADS; k++)
            run(&w[k]);
    }
    for (k = 0; k < THREADS; k++) {
        ok &= w[k].ok;
        MPI_Comm_free(&w[k].comm);
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("case threads %s\n", all ? "ok" : "FAIL");
    MPI_Finalize();
    return all ? 0 : 1;
}
