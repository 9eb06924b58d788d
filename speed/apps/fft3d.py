"""mpi4py-fft's distributed 3-D FFT, as its documentation uses it: a pencil-decomposed PFFT
(the default decomposition of the ranks), forward and backward transforms of a random complex
field, repeated; the round trip is checked at the end (the program exits 1 when it is wrong).

    mpirun -np 8 python3 speed/apps/fft3d.py N STEPS      (N^3 grid, STEPS round trips)

mpi4py-fft redistributes the pencils with MPI_Alltoallw (mpi4py_fft/pencil.py, Transfer):
that is where its communication time goes. Run with Debian's python3 (python3-mpi4py-fft)."""
import sys
import time

import numpy as np
from mpi4py import MPI
from mpi4py_fft import PFFT, newDistArray


def main(argv):
    n, steps = int(argv[1]), int(argv[2])
    comm = MPI.COMM_WORLD
    fft = PFFT(comm, (n, n, n), dtype=np.complex128)
    u = newDistArray(fft, False)
    u[:] = np.random.default_rng(comm.rank).random(u.shape)
    original = u.copy()
    started = time.perf_counter()
    for _ in range(steps):
        u_hat = fft.forward(u)
        u = fft.backward(u_hat, u)
    error = comm.allreduce(float(np.max(np.abs(u - original))), op=MPI.MAX)
    if comm.rank == 0:
        print(f"fft3d {n}^3 x {steps} round trips on {comm.size} ranks: "
              f"{time.perf_counter() - started:.2f} s, max round-trip error {error:.2e}")
    fft.destroy()
    return 0 if error < 1e-8 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
