"""`collsel sweep` and `collsel baseline` (issue "Measure"): not written yet."""


def register(subparsers):
    pass
