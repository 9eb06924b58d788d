
/*
 * collsel: fixed decisions for scan and exscan, appended to coll_tuned_decision_fixed.c by
 * mpi-builds/ompi-patched/tuned_sources.py (which points coll_tuned_module.c at them).
 *
 * Open MPI 4.1.4 has none: with the fixed rules coll/tuned leaves MPI_Scan and MPI_Exscan to
 * coll/basic (coll_tuned_module.c:106, :112 set them NULL), whose functions run the linear
 * algorithm (coll_basic_scan.c:49, coll_basic_exscan.c:51). These run the same base functions,
 * so that a generated ompi_coll_tuned_{scan,exscan}_intra_dec_fixed has an original to defer to
 * that does what Debian's unpatched Open MPI does.
 */
int ompi_coll_tuned_scan_intra_dec_fixed(const void *sbuf, void *rbuf, int count,
                                         struct ompi_datatype_t *dtype,
                                         struct ompi_op_t *op,
                                         struct ompi_communicator_t *comm,
                                         mca_coll_base_module_t *module)
{
    return ompi_coll_base_scan_intra_linear(sbuf, rbuf, count, dtype, op, comm, module);
}

int ompi_coll_tuned_exscan_intra_dec_fixed(const void *sbuf, void *rbuf, int count,
                                           struct ompi_datatype_t *dtype,
                                           struct ompi_op_t *op,
                                           struct ompi_communicator_t *comm,
                                           mca_coll_base_module_t *module)
{
    return ompi_coll_base_exscan_intra_linear(sbuf, rbuf, count, dtype, op, comm, module);
}
