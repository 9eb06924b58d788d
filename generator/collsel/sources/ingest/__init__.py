"""Other benchmarks' outputs (OSU, IMB, SKaMPI, ReproMPI, coltune, per-algorithm CSV) read as
canonical tables (`collsel ingest`)."""
