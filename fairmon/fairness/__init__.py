"""fairmon.fairness."""
