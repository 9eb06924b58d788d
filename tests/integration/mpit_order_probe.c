/* LD_PRELOAD after libcollsel (test_libcollsel_mpit.py): prints, on stderr, "mpit-order" and
 * each of MPI_T_init_thread and PMPI_Init / PMPI_Init_thread as it is called, so the test sees
 * which came first. libcollsel's calls resolve here: it defines neither. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

#define NEXT(name) ((name##_fn)dlsym(RTLD_NEXT, #name))

typedef int (*MPI_T_init_thread_fn)(int, int *);
typedef int (*PMPI_Init_fn)(int *, char ***);
typedef int (*PMPI_Init_thread_fn)(int *, char ***, int, int *);

int MPI_T_init_thread(int required, int *provided)
{
    fprintf(stderr, "mpit-order MPI_T_init_thread\n");
    return NEXT(MPI_T_init_thread)(required, provided);
}

int PMPI_Init(int *argc, char ***argv)
{
    fprintf(stderr, "mpit-order PMPI_Init\n");
    return NEXT(PMPI_Init)(argc, argv);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    fprintf(stderr, "mpit-order PMPI_Init_thread\n");
    return NEXT(PMPI_Init_thread)(argc, argv, required, provided);
}
