"""fairmon.drift."""
