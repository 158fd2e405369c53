"""fairmon.pipeline."""
