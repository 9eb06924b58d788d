"""The core every layer shares: a performance table (table.py, read through csvfile.py) becomes a
decision map (decision_map.py), the map a quadtree/octree as flat arrays (tree.py, saved as
tree.json by treefile.py), scored by one rule (penalty.py). Knows nothing of MPI runs, emitted
files or the command line."""
