"""Model snapshots: the predictive wrapper and the versioned registry.

:class:`Model` (``model.py``) is the one predictive interface of fairmon; :class:`Registry`
(``registry.py``) stores and verifies versions, described by :class:`SnapshotInfo` (``_snapshot.py``)
and serialised by ``_codec.py`` (every load error a :class:`~fairmon.errors.SnapshotError`).
"""

from fairmon.registry.model import Model, build_mlp
from fairmon.registry.registry import Registry, SnapshotInfo

__all__ = ["Model", "build_mlp", "Registry", "SnapshotInfo"]
