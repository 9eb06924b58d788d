"""Files in and out, and the vocabulary of values they hold: the one CSV and JSON readers
(csvfile.py, jsonfile.py), the all-or-nothing writer (files.py), the bounded lock wait
(flock.py), the ranges every value is held to (values.py), size and collective-name
notation (sizes.py, names.py), what a time means (statistic.py) and a program's
collective profile (profile.py). The bottom of core: it imports nothing else of core."""
