/* harness_probe: an LD_PRELOAD shim for tests/unit/sources/measure/test_benchmark_program.py.
 * It interposes every MPI_* function collsel_bench's harness needs besides the measured calls (barriers, agreeing,
 * gathering results, making and freeing communicators, asking sizes and names) and counts each
 * call; at MPI_Finalize each rank writes "function calls" lines to
 * $HARNESS_PROBE_DIR/calls.<rank>. The benchmark makes its own calls through PMPI_*, so only its
 * measured calls may show here. Not part of collsel: a test's independent witness. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, COMM_DUP, COMM_SPLIT, COMM_SPLIT_TYPE,
       COMM_FREE, COMM_SET_ERRHANDLER, COMM_RANK, COMM_SIZE, GET_PROCESSOR_NAME,
       GET_LIBRARY_VERSION, GET_VERSION, NFUNCS };
static const char *const names[NFUNCS] = {
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Comm_dup",
    "MPI_Comm_split", "MPI_Comm_split_type", "MPI_Comm_free", "MPI_Comm_set_errhandler",
    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Get_processor_name", "MPI_Get_library_version",
    "MPI_Get_version"};
static long calls[NFUNCS];

int MPI_Barrier(MPI_Comm c)
{
    calls[BARRIER]++;
    return PMPI_Barrier(c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    calls[BCAST]++;
    return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    calls[REDUCE]++;
    return PMPI_Reduce(s, r, n, t, op, root, c);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    calls[ALLREDUCE]++;
    return PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
               int root, MPI_Comm c)
{
    calls[GATHER]++;
    return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out)
{
    calls[COMM_DUP]++;
    return PMPI_Comm_dup(c, out);
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out)
{
    calls[COMM_SPLIT]++;
    return PMPI_Comm_split(c, color, key, out);
}

int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out)
{
    calls[COMM_SPLIT_TYPE]++;
    return PMPI_Comm_split_type(c, type, key, info, out);
}

int MPI_Comm_free(MPI_Comm *c)
{
    calls[COMM_FREE]++;
    return PMPI_Comm_free(c);
}

int MPI_Comm_set_errhandler(MPI_Comm c, MPI_Errhandler e)
{
    calls[COMM_SET_ERRHANDLER]++;
    return PMPI_Comm_set_errhandler(c, e);
}

int MPI_Comm_rank(MPI_Comm c, int *rank)
{
    calls[COMM_RANK]++;
    return PMPI_Comm_rank(c, rank);
}

int MPI_Comm_size(MPI_Comm c, int *size)
{
    calls[COMM_SIZE]++;
    return PMPI_Comm_size(c, size);
}

int MPI_Get_processor_name(char *name, int *len)
{
    calls[GET_PROCESSOR_NAME]++;
    return PMPI_Get_processor_name(name, len);
}

int MPI_Get_library_version(char *version, int *len)
{
    calls[GET_LIBRARY_VERSION]++;
    return PMPI_Get_library_version(version, len);
}

int MPI_Get_version(int *major, int *minor)
{
    calls[GET_VERSION]++;
    return PMPI_Get_version(major, minor);
}

int MPI_Finalize(void)
{
    const char *dir = getenv("HARNESS_PROBE_DIR");
    char path[4096];
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (dir && snprintf(path, sizeof path, "%s/calls.%d", dir, rank) < (int)sizeof path) {
        FILE *f = fopen(path, "w");
        for (int i = 0; f && i < NFUNCS; i++)
            if (calls[i])
                fprintf(f, "%s %ld\n", names[i], calls[i]);
        if (f)
            fclose(f);
    }
    return PMPI_Finalize();
}
