"""value-based learners."""
