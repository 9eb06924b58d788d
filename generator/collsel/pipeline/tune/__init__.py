"""collsel tune: the budget and grid plan, and the output directory."""
