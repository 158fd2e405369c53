"""Model snapshots: the predictive wrapper and the versioned registry."""

from fairmon.registry.model import Model, build_mlp

__all__ = ["Model", "build_mlp"]
