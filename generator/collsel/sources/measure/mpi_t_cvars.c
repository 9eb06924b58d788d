/* Every MPI_T control variable whose name contains argv[1], one line each:
 *   NAME<TAB>DESCRIPTION
 * (tabs and newlines of the description turned into spaces). MPI_T needs no MPI_Init, so this
 * runs as a plain process, no launcher. `collsel catalogue --mpi mpich` reads MPICH's
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM descriptions with it. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided, n;
    if (argc != 2) {
        fprintf(stderr, "usage: %s NAME-PART\n", argv[0]);
        return 2;
    }
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        MPI_T_cvar_get_num(&n) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_T could not be initialised\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        static char name[1024], desc[16384];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) != MPI_SUCCESS ||
            strstr(name, argv[1]) == NULL)
            continue;
        for (char *p = desc; *p; p++)
            if (*p == '\t' || *p == '\n' || *p == '\r')
                *p = ' ';
        printf("%s\t%s\n", name, desc);
    }
    MPI_T_finalize();
    return 0;
}
