"""What trees become: emitted files (emit/: C, Open MPI and MPICH rules files, the runtime blob)
and the penalty-analysis report (report/). Sinks take trees and maps, never tables or flags."""
