"""Model snapshots: the predictive wrapper and the versioned registry."""

from fairmon.registry.model import Model, build_mlp
from fairmon.registry.registry import Registry, SnapshotInfo

__all__ = ["Model", "build_mlp", "Registry", "SnapshotInfo"]
