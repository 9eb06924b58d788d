"""Where performance tables come from: a sweep of a real MPI (sweep/, with measure/ shared by
everything that launches MPI jobs; launch_tables.py reads its journal back as per-launch
tables) and other benchmarks' outputs (ingest/). `collsel tune`'s plan is the pipeline's
(pipeline/tune/), the emulated cluster a sweep may run on is collsel.cluster, and analytical
models are research (collsel.research). Sources import core/ and cluster/, never sinks/ or
commands/."""
