"""Datasets: the public benchmark loaders and the synthetic production stream.

* :func:`load_adult`, :func:`load_german`, :func:`load_compas`, :func:`load_gesd` (and
  :func:`load_dataset` by name) return a :class:`Dataset` with the raw frame and its column roles;
  files come from :func:`data_dir` (``FAIRMON_DATA_DIR``) or are downloaded and checksum-verified.
* :mod:`fairmon.datasets.stream`: :func:`generate_stream`, :func:`deploy_models`,
  :func:`write_partitions` — the synthetic production stream with a planted, drifting group.
"""

from __future__ import annotations

from fairmon.datasets._files import cache_dir, data_dir, dataset_path
from fairmon.datasets.loaders import Dataset, load_adult, load_compas, load_dataset, load_german, load_gesd
from fairmon.datasets.stream import (
    DeployedModels,
    StreamWindow,
    SyntheticStream,
    deploy_models,
    generate_stream,
    write_partitions,
)

__all__ = [
    "Dataset",
    "load_adult",
    "load_german",
    "load_compas",
    "load_gesd",
    "load_dataset",
    "data_dir",
    "cache_dir",
    "dataset_path",
    "generate_stream",
    "deploy_models",
    "write_partitions",
    "SyntheticStream",
    "StreamWindow",
    "DeployedModels",
]
