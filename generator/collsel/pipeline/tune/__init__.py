"""collsel tune's own part of the pipeline: the request and its plan (planning.py, plan.py: the
budget shared into grids), the output directory (layout.py), the stages that sweep, refine,
build, report and deploy each collective through the pipeline's steps (stages.py), how the
budget left is shared among refinements (refinement.py), where the rest adds P (densify.py), a
profile's region (profile_region.py), a replay's anytime curve (curve.py) and the summary
(summary.py)."""
