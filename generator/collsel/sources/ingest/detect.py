"""Which tool wrote a file, from marks each tool always prints."""
import re

from collsel.errors import located
from collsel.sources.ingest import coltune, csvmap, imb, osu, reprompi, skampi

PARSERS = {"osu": osu, "imb": imb, "skampi": skampi, "reprompi": reprompi, "csv": csvmap,
           "coltune": coltune}

_MARKS = (
    ("osu", re.compile(r"#\s*OSU MPI")),
    ("imb", re.compile(r"Intel ?\(R\) MPI Benchmarks|#\s*Benchmarking\s+\S")),
    ("skampi", re.compile(r'(#\s*)?begin result\s+"|#\s*SKaMPI')),
    ("reprompi", re.compile(r"#@nprocs=|#@reproMPI|\btest\s+(nrep|count)\b.*_sec")),
    ("coltune", re.compile(r"#Nnodes\s+Message_size")),
)


def detect(path, lines, forced=None, mapped=False):
    """The format name; --format wins, --map means CSV, else the first mark found."""
    if forced:
        return forced
    if mapped:
        return "csv"
    for line in lines[:400]:
        for name, mark in _MARKS:
            if mark.search(line):
                return name
    raise located(path, 1, "format not recognised (no OSU, IMB, SKaMPI, ReproMPI or "
                  "ompi-collectives-tuning header); for a CSV give --map, or give --format")
