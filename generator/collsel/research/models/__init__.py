"""Analytical models of collective algorithms (tau-Lop, Hockney, LMO): fitted parameters and
predicted tables (`collsel model`)."""
