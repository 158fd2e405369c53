"""Loading a benchmark dataset by name."""

from __future__ import annotations

from fairmon.datasets._compas import load_compas
from fairmon.datasets._dataset import ERR_UNKNOWN_DATASET, Dataset
from fairmon.datasets._gesd import load_gesd
from fairmon.datasets._uci import load_adult, load_german
from fairmon.errors import DatasetError

__all__ = ["load_dataset", "DATASET_NAMES"]


# ---------------------------------------------------------------------- dispatcher
_LOADERS = {
    "adult": load_adult,
    "german": load_german,
    "compas": load_compas,
    "gesd-german": lambda: load_gesd("german"),
    "gesd-bail": lambda: load_gesd("bail"),
    "gesd-math": lambda: load_gesd("math"),
    "gesd-por": lambda: load_gesd("por"),
}


def load_dataset(name: str) -> Dataset:
    """Load a dataset by name: adult, german, compas, gesd-german, gesd-bail, gesd-math, gesd-por.

    Examples
    --------
    >>> ds = load_dataset("gesd-math")  # reads FAIRMON_DATA_DIR (or downloads and verifies the file)
    >>> ds.name, len(ds), ds.sensitive
    ('gesd-math', 395, ['sex'])
    """
    try:
        loader = _LOADERS[name]
    except KeyError:
        raise DatasetError(ERR_UNKNOWN_DATASET.format(name=name, known=sorted(_LOADERS))) from None
    return loader()  # type: ignore[no-untyped-call]


#: the names :func:`load_dataset` accepts
DATASET_NAMES: tuple[str, ...] = tuple(sorted(_LOADERS))
