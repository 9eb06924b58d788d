"""The core every layer shares, in five sub-packages that follow the data: io/ (files in and
out, and the values they hold) -> mpi/ (what collsel knows of the MPIs) -> maps/ (a performance
table becomes a decision map, and the one rule of what a choice costs at a cell) -> trees/ (the
map a quadtree/octree as flat arrays, saved as tree.json) -> evaluate/ (trees scored out of
sample and the recommended one chosen). Each imports only those before it (pyproject.toml's
layers). Knows nothing of MPI runs, emitted files or the command line."""
