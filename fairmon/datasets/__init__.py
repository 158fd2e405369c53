"""Datasets: the public benchmark loaders and the synthetic production stream.

* :func:`load_adult`, :func:`load_german`, :func:`load_compas`, :func:`load_gesd` (and
  :func:`load_dataset` by name) return a :class:`Dataset` with the raw frame and its column roles;
  files come from :func:`data_dir` (``FAIRMON_DATA_DIR``) or are downloaded and checksum-verified.
* :func:`generate_stream`, :func:`deploy_models`, :func:`write_partitions` — the synthetic production
  stream with a planted, drifting group (the contract is in :func:`generate_stream`'s module,
  the column roles are the constants below).

>>> from fairmon.datasets import PLANTED_RULE, generate_stream
>>> s = generate_stream(n_windows=3, rows_per_window=300, drift_window=2)
>>> s.planted_rule == PLANTED_RULE, len(s.windows[1].frame)
(True, 300)
"""

from __future__ import annotations

from fairmon.datasets._calibration import decision_dscore
from fairmon.datasets._catalog import DATASET_NAMES, load_dataset
from fairmon.datasets._compas import load_compas
from fairmon.datasets._dataset import Dataset
from fairmon.datasets._deploy import DeployedModels, deploy_models
from fairmon.datasets._files import cache_dir, data_dir, dataset_path
from fairmon.datasets._gesd import load_gesd
from fairmon.datasets._partitions import read_partition, write_partitions
from fairmon.datasets._stream import generate_stream
from fairmon.datasets._stream_spec import (
    CATEGORICAL_COLUMNS,
    COLUMNS,
    DECOY_COLUMNS,
    FEATURE_COLUMNS,
    ID_COLUMN,
    LABEL_COLUMN,
    PLANTED_ATTRIBUTES,
    PLANTED_QUERY,
    PLANTED_RULE,
    SENSITIVE_COLUMNS,
    TIME_COLUMN,
    StreamWindow,
    SyntheticStream,
    evaluate_rule,
    planted_membership,
)
from fairmon.datasets._uci import ADULT_COLUMNS, GERMAN_COLUMNS, load_adult, load_german

__all__ = [
    # public benchmarks
    "Dataset",
    "load_adult",
    "load_german",
    "load_compas",
    "load_gesd",
    "load_dataset",
    "DATASET_NAMES",
    "ADULT_COLUMNS",
    "GERMAN_COLUMNS",
    "data_dir",
    "cache_dir",
    "dataset_path",
    # the synthetic production stream
    "generate_stream",
    "deploy_models",
    "write_partitions",
    "read_partition",
    "SyntheticStream",
    "StreamWindow",
    "DeployedModels",
    "decision_dscore",
    "planted_membership",
    "evaluate_rule",
    # its column roles
    "COLUMNS",
    "FEATURE_COLUMNS",
    "SENSITIVE_COLUMNS",
    "CATEGORICAL_COLUMNS",
    "PLANTED_ATTRIBUTES",
    "DECOY_COLUMNS",
    "LABEL_COLUMN",
    "ID_COLUMN",
    "TIME_COLUMN",
    "PLANTED_RULE",
    "PLANTED_QUERY",
]
