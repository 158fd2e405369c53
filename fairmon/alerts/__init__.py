"""fairmon.alerts."""
