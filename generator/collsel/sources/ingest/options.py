"""What `collsel ingest` was told, as the parsers and the per-file values need it: a typed record
the command builds from its flags, so no parser sees the command line."""
from dataclasses import dataclass

from collsel.core.io import statistic

# --kind of a mapped CSV: which rank the time is (the vocabulary's ranks part); the older names
# rank-mean, rank-max, rank-min are accepted too.
KIND_CHOICES = statistic.RANKS + tuple(f"rank-{r}" for r in statistic.RANKS)


@dataclass(frozen=True)
class IngestOptions:
    statistic: str = None       # which number becomes time_us (OSU/IMB avg|min|max, ReproMPI)
    map: str = None             # a CSV's column mapping, TARGET=COLUMN,...
    kind: str = None            # a mapped CSV's ranks part (KIND_CHOICES)
    time_unit: str = None       # unit of CSV or SKaMPI times when the file does not say
    datatype_size: str = None   # ReproMPI element size when the file lacks it
    partial: bool = False       # read a SKaMPI block cut off before its 'end result'
    # Values a file may not record (given.KEYS), as text; None when not given.
    collective: str = None
    comm_size: str = None
    algorithm: str = None
    segsize: str = None
    faninout: str = None
    ppn: str = None
    nodes: str = None
    pattern: str = None         # the --pattern text ({algorithm} ... fields)
    carry: str = None           # a mapped CSV's extra columns kept as text, COLUMN[,NAME=COLUMN]
    # Other people's result files (docs/guide/ingest-datasets.md):
    where: str = None           # a mapped CSV's rows to keep, COLUMN=VALUE[,...]
    relabel: str = None         # what a dataset's algorithm labels mean, LABEL=ALGORITHM[,...]
    columns: str = None         # the header a headerless file lacks, NAME[,...]
    whitespace: bool = False    # fields separated by blanks, not commas
    skip_malformed: bool = False    # skip (and report) lines of the wrong shape

    def ranks(self):
        """The ranks part --kind gives, or `?`."""
        return self.kind[len("rank-"):] if self.kind and self.kind.startswith("rank-") \
            else self.kind or statistic.PART
