"""Table -> map: the canonical performance table (table.py), the decision map of the
fastest measured method per cell (decision_map.py) with its imputed times
(imputation.py), tie sets (ties.py) and third axis (third_axis.py, zbins.py), and the one
rule of what a choice costs at a cell (cell_cost.py). Imports core.io and core.mpi."""
