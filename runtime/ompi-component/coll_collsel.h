/* coll/collsel: an Open MPI 4.1 coll component that answers collectives from collsel decision
 * trees (blobs of `collsel emit --target blob`) by calling the coll/base algorithm the tree names,
 * as coll/tuned's <coll>_intra_do_this does, and hands a call to the component below it (saved at
 * module_enable, as coll/sync does) where the tree defers (algorithm 0) or covers no collective.
 * Built against Debian's Open MPI 4.1.4 development headers, loaded at run time:
 *   mpirun --mca mca_base_component_path DIR:/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 \
 *          --mca coll_collsel_trees TREES ...
 * (docs/guide/ompi-component.md). */
#ifndef MCA_COLL_COLLSEL_H
#define MCA_COLL_COLLSEL_H

#include "ompi_config.h"

#include <stdint.h>

#include "collsel_mpi_table.h"
#include "collsel_tree.h"
#include "collsel_treeset.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/mca/coll/coll.h"

BEGIN_C_DECLS

/* The collectives (enum collsel_mpi_coll), their names, Open MPI's coll/tuned catalogue and
 * refusals per release are the generated MPI table's (collsel_mpi_table.h). */
typedef struct mca_coll_collsel_component_t {
    mca_coll_base_component_2_0_0_t super;
    int priority;
    char *trees_spec;                   /* coll_collsel_trees: a directory or FILE:FILE... */
    int loaded;                         /* the trees were read (successfully or not) */
    int usable;                         /* every named blob is valid: the component may run */
    collsel_treeset trees;              /* tree[c] NULL: left to the component below */
    /* what this Open MPI release refuses, per collective (the table's entry for the release of
     * the headers built against): a refused decision defers instead of failing the call */
    const struct collsel_mpi_refusal *refusals;
} mca_coll_collsel_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_collsel_component_t mca_coll_collsel_component;

typedef struct mca_coll_collsel_module_t {
    mca_coll_base_module_t super;
    mca_coll_base_comm_coll_t below;    /* the functions the component below us installed */
    uint32_t retained;                  /* bit c: below's module of collective c retained */
    int32_t comm_size;
} mca_coll_collsel_module_t;
OBJ_CLASS_DECLARATION(mca_coll_collsel_module_t);

/* trees.c: the blobs `spec` names, validated once (the shared loader, runtime/collsel_treeset.h);
 * 0, or 1 with one line in msg. Released with collsel_treeset_free(). */
int mca_coll_collsel_trees_load(const char *spec, collsel_treeset *trees, char *msg,
                                size_t msg_size);

/* module.c */
int mca_coll_collsel_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_collsel_comm_query(struct ompi_communicator_t *comm,
                                                    int *priority);

/* colls.c: the entry points, one per collective (installed only where a tree covers it). */
int mca_coll_collsel_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                void *rbuf, const int *rcounts, const int *displs,
                                struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module);
int mca_coll_collsel_allreduce(const void *sbuf, void *rbuf, int count,
                               struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                               struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                               const int *rdisps, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_bcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_exscan(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_reduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_collsel_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                    struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                    struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module);
int mca_coll_collsel_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                          struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                          struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module);
int mca_coll_collsel_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module);
int mca_coll_collsel_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

END_C_DECLS

#endif
