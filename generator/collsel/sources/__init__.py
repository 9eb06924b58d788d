"""Where performance tables come from: a sweep of a real MPI (sweep/, with measure/ shared by
everything that launches MPI jobs), other benchmarks' outputs (ingest/) and analytical models
(models/). Sources import core/, never sinks/ or commands/."""
