"""Map -> tree: the quadtree/octree as flat arrays (tree.py), its pruning (pruning.py),
the penalty statistics of its choices (penalty.py), tree.json (treefile.py) and where
its decisions are extrapolated (extrapolation.py). Imports core.io, core.mpi and
core.maps."""
