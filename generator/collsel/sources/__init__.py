"""Where performance tables come from: a sweep of a real MPI (sweep/, with measure/ shared by
everything that launches MPI jobs; launch_tables.py reads its journal back as per-launch
tables), other benchmarks' outputs (ingest/) and analytical models (models/). Sources import
core/, never sinks/ or commands/."""
