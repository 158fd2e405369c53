"""fairmon.explain."""
