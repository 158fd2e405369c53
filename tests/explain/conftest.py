"""Fixtures for the explainer and OpenXAI tests: reference outputs and small deterministic models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from explain_helpers import mixed_frame, torch_model

REPO = Path(__file__).resolve().parents[2]
DEFAULT_REFERENCE_DIR = REPO.parent / "shared" / "reference"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """OpenXAI reference outputs (``FAIRMON_REFERENCE_DIR``, default ``../shared/reference``)."""
    path = Path(os.environ.get("FAIRMON_REFERENCE_DIR", DEFAULT_REFERENCE_DIR))
    if not (path / "openxai_groundtruth_cases.npz").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"OpenXAI reference outputs not found in {path}; set FAIRMON_REFERENCE_DIR")
        pytest.skip(f"OpenXAI reference outputs not found in {path}")
    return path


@pytest.fixture
def mixed_model():  # type: ignore[no-untyped-def]
    df = mixed_frame()
    model = torch_model(df)
    return model, model.schema.transform(df)
