"""Datasets: the public benchmark loaders and the synthetic production stream.

``fairmon.datasets.stream`` (the synthetic production stream) is imported lazily through this
package's attributes, so ``from fairmon.datasets import generate_stream`` works too.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "generate_stream",
    "deploy_models",
    "write_partitions",
    "SyntheticStream",
    "StreamWindow",
]

_STREAM_NAMES = {"generate_stream", "deploy_models", "write_partitions", "SyntheticStream", "StreamWindow"}


def __getattr__(name: str) -> Any:
    if name in _STREAM_NAMES:
        from fairmon.datasets import stream

        return getattr(stream, name)
    raise AttributeError(name)
