"""collsel: MPI collective algorithm selection from measurements, encoded as quadtrees."""
__version__ = "0.1.0"
