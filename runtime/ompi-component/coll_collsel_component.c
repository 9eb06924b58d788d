/* coll/collsel: the component (its MCA parameters, the trees loaded once per process). */
#include "coll_collsel.h"

#include <stdio.h>

#include "opal/mca/base/mca_base_var.h"

static int collsel_register(void);
static int collsel_close(void);

mca_coll_collsel_component_t mca_coll_collsel_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "collsel",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_close_component = collsel_close,
            .mca_register_component_params = collsel_register,
        },
        .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .collm_init_query = mca_coll_collsel_init_query,
        .collm_comm_query = mca_coll_collsel_comm_query,
    },
};

static int collsel_register(void)
{
    mca_base_component_t *c = &mca_coll_collsel_component.super.collm_version;
    /* above coll/tuned (30), below coll/self (75, single-process communicators) */
    mca_coll_collsel_component.priority = 40;
    (void)mca_base_component_var_register(
        c, "priority", "Priority of the collsel coll component (it runs only where "
        "coll_collsel_trees names trees)", MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6,
        MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_collsel_component.priority);
    mca_coll_collsel_component.trees_spec = "";
    (void)mca_base_component_var_register(
        c, "trees", "collsel decision-tree blobs (collsel emit --target blob): a directory "
        "(its *.bin files) or FILE[:FILE...]; empty: the component stays out",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_collsel_component.trees_spec);
    return OMPI_SUCCESS;
}

/* The trees, once per process; a bad blob is reported on one line and keeps the component out
 * of every communicator (the program then runs Open MPI's own decisions). */
int mca_coll_collsel_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_coll_collsel_component_t *c = &mca_coll_collsel_component;
    char msg[512];
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    if (c->loaded)
        return OMPI_SUCCESS;
    c->loaded = 1;
    c->refusals = collsel_mpi_ompi_refusals(OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION);
    if (NULL == c->trees_spec || '\0' == c->trees_spec[0])
        return OMPI_SUCCESS;
    if (mca_coll_collsel_trees_load(c->trees_spec, &c->trees, msg, sizeof msg) != 0) {
        fprintf(stderr, "coll/collsel: error: %s; Open MPI decides every collective\n", msg);
        return OMPI_SUCCESS;
    }
    c->usable = 1;
    return OMPI_SUCCESS;
}

static int collsel_close(void)
{
    collsel_treeset_free(&mca_coll_collsel_component.trees);
    mca_coll_collsel_component.usable = 0;
    mca_coll_collsel_component.loaded = 0;
    return OMPI_SUCCESS;
}
