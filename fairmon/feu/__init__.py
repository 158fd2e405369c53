"""fairmon.feu."""
