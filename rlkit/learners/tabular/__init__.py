"""tabular learners."""
