"""pytest cases for the Python module (docs/python.md), run by ctest with
PYTHONPATH set to the build's python folder."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1)
