"""What every MPI launch shares: launchers, placement, supervision, the machine record and the
benchmark program."""
