"""fairmon.store."""
