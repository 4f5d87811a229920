import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import limentest  # noqa: E402


@pytest.fixture
def bus():
    b = limentest.Bus()
    try:
        yield b
    finally:
        statuses = b.close()
        # Sanitizer exits (66/67) and crashes are failures even when the test passed; the
        # reference's daemons, run beside ours for comparison, are judged by the tests.
        bad = [(argv, st) for argv, st in statuses if st not in (0, None, -15, -9) and st is not None and
               argv not in limentest.REFERENCE_DAEMONS]
        sanitizer = [(a, s) for a, s in bad if s in (66, 67) or s < 0 and s != -9]
        assert not sanitizer, f"daemon(s) ended badly: {sanitizer}\n" + "\n".join(
            f"--- {argv}:\n{log}" for argv, log in b.bad_endings.items())


@pytest.fixture
def x():
    """A private Xvfb for the KDE tests (kde_helpers.Xvfb), stopped after the test."""
    import kde_helpers
    xv = kde_helpers.Xvfb()
    try:
        yield xv
    finally:
        xv.close()


@pytest.fixture
def session(bus):
    """A KWin Wayland session with PipeWire (wayland_session.WaylandSession), closed after the test."""
    import wayland_session
    s = wayland_session.WaylandSession(bus)
    try:
        yield s
    finally:
        s.close()
