"""`collsel build`, `collsel query`, `collsel stats` (issue "Encode")."""


def register(subparsers):
    pass
