/* The Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) where they go below the interposed C
 * functions, in every spelling a Fortran program calls:
 *  - MPI_Init, MPI_Init_thread, MPI_Finalize (Open MPI 4.1: every binding calls PMPI_Init etc.;
 *    MPICH 4.0: `use mpi_f08`'s do): MPI_T starts first as before MPI_Init (lc_mpit_before_init),
 *    the MPI's own binding runs (dlsym RTLD_NEXT, so what it sets up for Fortran stays), then
 *    the library starts as after MPI_Init (lc_pmpi_started).
 *  - Open MPI's 14 collectives: libmpi_mpifh.so's MPI_BCAST, mpi_bcast, mpi_bcast_, mpi_bcast__
 *    and libmpi_usempif08.so's mpi_bcast_f08_ (which `use mpi_f08` reaches with the same
 *    arguments: a handle is one INTEGER, a buffer its address, ierror optional) convert the
 *    handles and the Fortran MPI_IN_PLACE / MPI_BOTTOM and hand on to pmpi.c's MPI_<Coll>.
 *    MPICH's bindings call MPI_<Coll> themselves. */
#include "lc_mpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define LC_EXPORT __attribute__((visibility("default")))

static void done(MPI_Fint *ierr, int rc)
{
    if (ierr)   /* mpi_f08's ierror is optional */
        *ierr = (MPI_Fint)rc;
}

/* The MPI's own `symbol`: the library was preloaded, so it is next in the lookup order. */
static void *next(const char *symbol)
{
    void *f = dlsym(RTLD_NEXT, symbol);
    if (!f) {
        fprintf(stderr, "libcollsel: the MPI has no Fortran %s; aborting\n", symbol);
        abort();
    }
    return f;
}

typedef void lc_status_fn(MPI_Fint *ierr);
typedef void lc_init_thread_fn(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);

#define INIT_BINDING(impl, symbol)                                                                 \
    void impl(MPI_Fint *ierr);                                                                     \
    void impl(MPI_Fint *ierr)                                                                      \
    {                                                                                              \
        lc_status_fn *real;                                                                        \
        MPI_Fint rc = MPI_SUCCESS;                                                                 \
        *(void **)&real = next(symbol);                                                            \
        lc_mpit_before_init(MPI_THREAD_SINGLE);                                                    \
        real(&rc);                                                                                 \
        lc_pmpi_started(rc);                                                                       \
        done(ierr, rc);                                                                            \
    }

#define INIT_THREAD_BINDING(impl, symbol)                                                          \
    void impl(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);                             \
    void impl(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)                              \
    {                                                                                              \
        lc_init_thread_fn *real;                                                                   \
        MPI_Fint rc = MPI_SUCCESS;                                                                 \
        *(void **)&real = next(symbol);                                                            \
        lc_mpit_before_init((int)*required);                                                       \
        real(required, provided, &rc);                                                             \
        lc_pmpi_started(rc);                                                                       \
        done(ierr, rc);                                                                            \
    }

#define FINALIZE_BINDING(impl, symbol)                                                             \
    void impl(MPI_Fint *ierr);                                                                     \
    void impl(MPI_Fint *ierr)                                                                      \
    {                                                                                              \
        lc_status_fn *real;                                                                        \
        MPI_Fint rc = MPI_SUCCESS;                                                                 \
        *(void **)&real = next(symbol);                                                            \
        lc_pmpi_finishing();                                                                       \
        real(&rc);                                                                                 \
        done(ierr, rc);                                                                            \
    }

#define ALIAS(name, ARGS, impl) LC_EXPORT void name ARGS __attribute__((alias(#impl)));
#define STATUS_ARGS (MPI_Fint *ierr)
#define INIT_THREAD_ARGS (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)

INIT_BINDING(lc_f08_init, "mpi_init_f08_")
INIT_THREAD_BINDING(lc_f08_init_thread, "mpi_init_thread_f08_")
FINALIZE_BINDING(lc_f08_finalize, "mpi_finalize_f08_")
ALIAS(mpi_init_f08_, STATUS_ARGS, lc_f08_init)
ALIAS(mpi_init_thread_f08_, INIT_THREAD_ARGS, lc_f08_init_thread)
ALIAS(mpi_finalize_f08_, STATUS_ARGS, lc_f08_finalize)

#if defined(OPEN_MPI)

/* mpif.h and `use mpi`: one function under four names in libmpi_mpifh.so */
#define F77_ALIASES(lower, UPPER, ARGS, impl)                                                      \
    ALIAS(UPPER, ARGS, impl) ALIAS(mpi_##lower, ARGS, impl) ALIAS(mpi_##lower##_, ARGS, impl)      \
    ALIAS(mpi_##lower##__, ARGS, impl)

INIT_BINDING(lc_f_init, "mpi_init_")
INIT_THREAD_BINDING(lc_f_init_thread, "mpi_init_thread_")
FINALIZE_BINDING(lc_f_finalize, "mpi_finalize_")
F77_ALIASES(init, MPI_INIT, STATUS_ARGS, lc_f_init)
F77_ALIASES(init_thread, MPI_INIT_THREAD, INIT_THREAD_ARGS, lc_f_init_thread)
F77_ALIASES(finalize, MPI_FINALIZE, STATUS_ARGS, lc_f_finalize)

/* Fortran INTEGER count arrays are passed on as int[] */
typedef char lc_fint_is_int[sizeof(MPI_Fint) == sizeof(int) ? 1 : -1];

/* the Fortran sentinels: addresses of common blocks in libmpi.so (Open MPI's OMPI_F2C_IN_PLACE
 * and OMPI_F2C_BOTTOM; gfortran names them with one trailing underscore) */
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));

static void *buf_f2c(void *buf)
{
    if (!buf)   /* the weak sentinels resolve to NULL in an MPI without them */
        return buf;
    return buf == (void *)&mpi_fortran_in_place_ ? MPI_IN_PLACE
           : buf == (void *)&mpi_fortran_bottom_ ? MPI_BOTTOM
                                                 : buf;
}

#define T(x) PMPI_Type_f2c(*(x))
#define O(x) PMPI_Op_f2c(*(x))
#define C(x) PMPI_Comm_f2c(*(x))

/* The five spellings of one collective's binding lc_f_<lower> */
#define SPELLINGS(lower, UPPER, ARGS)                                                              \
    F77_ALIASES(lower, UPPER, ARGS, lc_f_##lower) ALIAS(mpi_##lower##_f08_, ARGS, lc_f_##lower)

#define BCAST_ARGS (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,    \
                    MPI_Fint *ierr)
void lc_f_bcast BCAST_ARGS;
void lc_f_bcast BCAST_ARGS
{
    done(ierr, MPI_Bcast(buf_f2c(buf), *count, T(type), *root, C(comm)));
}
SPELLINGS(bcast, MPI_BCAST, BCAST_ARGS)

#define REDUCE_ARGS (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,        \
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
void lc_f_reduce REDUCE_ARGS;
void lc_f_reduce REDUCE_ARGS
{
    done(ierr, MPI_Reduce(buf_f2c(sbuf), buf_f2c(rbuf), *count, T(type), O(op), *root,
                          C(comm)));
}
SPELLINGS(reduce, MPI_REDUCE, REDUCE_ARGS)

/* allreduce, scan, exscan */
#define VECTOR_ARGS (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,        \
                     MPI_Fint *comm, MPI_Fint *ierr)
#define VECTOR_REDUCTION(lower, UPPER, Name)                                                       \
    void lc_f_##lower VECTOR_ARGS;                                                                 \
    void lc_f_##lower VECTOR_ARGS                                                                  \
    {                                                                                              \
        done(ierr, MPI_##Name(buf_f2c(sbuf), buf_f2c(rbuf), *count, T(type), O(op), C(comm)));     \
    }                                                                                              \
    SPELLINGS(lower, UPPER, VECTOR_ARGS)
VECTOR_REDUCTION(allreduce, MPI_ALLREDUCE, Allreduce)
VECTOR_REDUCTION(scan, MPI_SCAN, Scan)
VECTOR_REDUCTION(exscan, MPI_EXSCAN, Exscan)

/* allgather, alltoall */
#define BLOCK_ARGS (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,  \
                    MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
#define BLOCK_EXCHANGE(lower, UPPER, Name)                                                         \
    void lc_f_##lower BLOCK_ARGS;                                                                  \
    void lc_f_##lower BLOCK_ARGS                                                                   \
    {                                                                                              \
        done(ierr, MPI_##Name(buf_f2c(sbuf), *scount, T(stype), buf_f2c(rbuf), *rcount,            \
                              T(rtype), C(comm)));                                                 \
    }                                                                                              \
    SPELLINGS(lower, UPPER, BLOCK_ARGS)
BLOCK_EXCHANGE(allgather, MPI_ALLGATHER, Allgather)
BLOCK_EXCHANGE(alltoall, MPI_ALLTOALL, Alltoall)

/* gather, scatter */
#define ROOTED_ARGS (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, \
                     MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
#define ROOTED_BLOCK(lower, UPPER, Name)                                                           \
    void lc_f_##lower ROOTED_ARGS;                                                                 \
    void lc_f_##lower ROOTED_ARGS                                                                  \
    {                                                                                              \
        done(ierr, MPI_##Name(buf_f2c(sbuf), *scount, T(stype), buf_f2c(rbuf), *rcount,            \
                              T(rtype), *root, C(comm)));                                          \
    }                                                                                              \
    SPELLINGS(lower, UPPER, ROOTED_ARGS)
ROOTED_BLOCK(gather, MPI_GATHER, Gather)
ROOTED_BLOCK(scatter, MPI_SCATTER, Scatter)

#define ALLGATHERV_ARGS (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf,               \
                         MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm,    \
                         MPI_Fint *ierr)
void lc_f_allgatherv ALLGATHERV_ARGS;
void lc_f_allgatherv ALLGATHERV_ARGS
{
    done(ierr, MPI_Allgatherv(buf_f2c(sbuf), *scount, T(stype), buf_f2c(rbuf), rcounts, displs,
                              T(rtype), C(comm)));
}
SPELLINGS(allgatherv, MPI_ALLGATHERV, ALLGATHERV_ARGS)

#define ALLTOALLV_ARGS (void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype,        \
                        void *rbuf, MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype,        \
                        MPI_Fint *comm, MPI_Fint *ierr)
void lc_f_alltoallv ALLTOALLV_ARGS;
void lc_f_alltoallv ALLTOALLV_ARGS
{
    done(ierr, MPI_Alltoallv(buf_f2c(sbuf), scounts, sdispls, T(stype), buf_f2c(rbuf), rcounts,
                             rdispls, T(rtype), C(comm)));
}
SPELLINGS(alltoallv, MPI_ALLTOALLV, ALLTOALLV_ARGS)

#define REDUCE_SCATTER_ARGS (void *sbuf, void *rbuf, MPI_Fint *rcounts, MPI_Fint *type,           \
                             MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
void lc_f_reduce_scatter REDUCE_SCATTER_ARGS;
void lc_f_reduce_scatter REDUCE_SCATTER_ARGS
{
    done(ierr, MPI_Reduce_scatter(buf_f2c(sbuf), buf_f2c(rbuf), rcounts, T(type), O(op),
                                  C(comm)));
}
SPELLINGS(reduce_scatter, MPI_REDUCE_SCATTER, REDUCE_SCATTER_ARGS)

#define REDUCE_SCATTER_BLOCK_ARGS (void *sbuf, void *rbuf, MPI_Fint *rcount, MPI_Fint *type,      \
                                   MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
void lc_f_reduce_scatter_block REDUCE_SCATTER_BLOCK_ARGS;
void lc_f_reduce_scatter_block REDUCE_SCATTER_BLOCK_ARGS
{
    done(ierr, MPI_Reduce_scatter_block(buf_f2c(sbuf), buf_f2c(rbuf), *rcount, T(type), O(op),
                                        C(comm)));
}
SPELLINGS(reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, REDUCE_SCATTER_BLOCK_ARGS)

#define BARRIER_ARGS (MPI_Fint *comm, MPI_Fint *ierr)
void lc_f_barrier BARRIER_ARGS;
void lc_f_barrier BARRIER_ARGS
{
    done(ierr, MPI_Barrier(C(comm)));
}
SPELLINGS(barrier, MPI_BARRIER, BARRIER_ARGS)

#endif
