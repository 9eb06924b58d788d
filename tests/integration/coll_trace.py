"""Which Open MPI coll/base algorithm each MPI_Bcast / MPI_Reduce ran, seen from outside: the
LD_PRELOAD library coll_algorithm_trace.c wraps the ompi_coll_base_*_intra_* functions that
mca_coll_tuned.so calls in libmpi.so (the counting idea of the paired-measurement pilot).
Used by the integration tests of "defer to the MPI" (rules files on real Open MPI 4.1, the
patched build's dec_fixed) and of the ppn-aware dec_fixed on the emulated cluster."""
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "coll_check.c"
TRACE = re.compile(r"^collsel-alg (\w+) (\w+) rank=(\d+) comm_size=(\d+) count=(\d+)$")
UNIT = {"bcast": 1, "reduce": 4}          # coll_check: MPI_BYTE bcast, MPI_INT reduce
# Open MPI 4.1 coll/tuned id -> coll/base function suffix
FUNCTIONS = {
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_bintree", 5: "bintree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
               6: "in_order_binary", 7: "redscat_gather"},
}


def build(mpicc, directory, env=None):
    """(trace library, coll_check program) compiled with `mpicc` into `directory`."""
    lib, exe = Path(directory) / "libcolltrace.so", Path(directory) / "coll_check"
    for cmd in ([str(mpicc), "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                 str(HERE / "coll_algorithm_trace.c"), "-o", str(lib), "-ldl"],
                [str(mpicc), "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", str(PROGRAM),
                 "-o", str(exe)]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    return lib, exe


def run(mpirun, lib, exe, collective, comm_size, sizes, mca=(), env=None, hosts=None):
    """({m: algorithm function suffix}, stderr) for one launch; every rank must report the
    same, once per call, and every result must be correct. `hosts` (e.g. "n1:2,n2:2", the
    emulated cluster's nodes) places the ranks, else they run on this machine."""
    cmd = ["timeout", "120", str(mpirun), "--allow-run-as-root", "--oversubscribe",
           "--mca", "mpi_yield_when_idle", "1", *mca, "-x", f"LD_PRELOAD={lib}",
           *(["--host", hosts] if hosts else []),
           "-np", str(comm_size), str(exe), collective, *map(str, sizes)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    assert r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}"
    checks = [line for line in r.stdout.splitlines() if line.startswith("check ")]
    assert checks == [f"check {collective} m={m} ok" for m in sizes], r.stdout
    seen = {}
    for line in r.stderr.splitlines():
        t = TRACE.match(line)
        if t and t.group(1) == collective:
            assert int(t.group(4)) == comm_size, line
            m = int(t.group(5)) * UNIT[collective]
            seen.setdefault(m, []).append((int(t.group(3)), t.group(2)))
    assert sorted(seen) == sorted(sizes), (sorted(seen), r.stderr[-2000:])
    out = {}
    for m, calls in seen.items():
        assert sorted(rank for rank, _ in calls) == list(range(comm_size)), (m, calls)
        names = {name for _, name in calls}
        assert len(names) == 1, (m, calls)
        out[m] = names.pop()
    return out, r.stderr
