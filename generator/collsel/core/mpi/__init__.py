"""What collsel knows of the MPIs: each family's algorithms (algorithms.py,
intel_algorithms.py), Open MPI's silent fallbacks (fallbacks.py) and installed catalogue
(catalogue.py), the message size a rule is matched against (rules_size.py), methods as
people read them (method_text.py) and the judgement of `collsel verify` (verify.py).
Imports core.io only."""
