"""Research features, set apart from the product path (sweep -> table -> map -> tree ->
emitted files): analytical and LMO performance models and their experiments (models/,
`collsel model`, `collsel hier`). Commands import them; the pipeline, sources, sinks and
core do not (pyproject.toml's import contracts)."""
