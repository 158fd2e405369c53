"""fairmon.report."""
