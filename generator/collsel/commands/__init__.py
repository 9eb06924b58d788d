"""The `collsel` subcommands, one module each: the only layer that reads flags (argparse) and
prints. Each module has register(subparsers); cli.py lists them."""
