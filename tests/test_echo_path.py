"""The echo path fitted by least squares (voiced/ear/echo.py), on numbers: no clock, no audio device."""

from __future__ import annotations

import numpy as np
import pytest

from voiced.ear.echo import unexplained_db


@pytest.mark.parametrize("delay", [0, 2, 40, 400])
def test_an_echo_back_at_once_or_later_is_explained(delay: int) -> None:
    """A satellite that plays what it is sent at once brings our echo back within a few samples."""
    rng = np.random.default_rng(7)
    reference = rng.normal(0, 3000, 8000).astype(np.int16)
    echo = np.concatenate([np.zeros(delay), 0.4 * reference[: len(reference) - delay]]).astype(np.int16)
    assert unexplained_db(echo[-2000:], reference, delay) < -20
    voice = rng.normal(0, 1500, 2000)
    assert unexplained_db((echo[-2000:] + voice).astype(np.int16), reference, delay) > -6
