"""Trees judged and chosen: out-of-sample folds (fold_maps.py, out_of_sample.py), direct
held-out evaluation (held_out.py), the candidate trees and the cross-validated choice among
them (candidates.py, model_selection.py, recommendation.py with its records in
recommendation_figures.py, recommend.py), one build configuration (build_config.py), the
figures and findings printed about them (headline.py, verdict.py, baseline_warning.py,
deployed.py, probe_latency.py) and the two worker processes (parallel.py). The top of core."""
