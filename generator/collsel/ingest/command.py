"""`collsel ingest` (issue "Ingest"): not written yet."""


def register(subparsers):
    pass
