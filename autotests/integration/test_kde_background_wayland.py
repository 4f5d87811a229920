"""limen-kde's Background.GetAppState on a headless Plasma 5.27 Wayland session
(wayland_session.py: kwin_wayland --virtual): which apps have windows and which one is active,
from KWin's own window list (org_kde_plasma_window_management), as the reference backend reads
it; RunningApplicationsChanged when that changes. The windows are plain wayland-client
toplevels with known app ids (autotests/wayland-client/)."""

import os
import select
import subprocess

import pytest

import kde_helpers as kh
import limentest
import wayland_session

PROBE_APP = "org.limen.WaylandProbe"     # limen-wayland-probe's xdg app id
PARENT_APP = "org.limen.WaylandParent"   # limen-wayland-parent's


@pytest.fixture
def session(bus):
    s = wayland_session.WaylandSession(bus)
    try:
        yield s
    finally:
        s.close()


def app_states(bus):
    return kh.call_impl(bus, "Background", "GetAppState", None, None)[0]


def start_parent(session, title):
    exe = os.path.join(limentest.BUILD_DIR, "autotests", "limen-wayland-parent")
    proc = subprocess.Popen([exe, title], env=session.client_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    ready, _, _ = select.select([proc.stdout], [], [], 20)
    assert ready and proc.stdout.readline().startswith(b"HANDLE "), "limen-wayland-parent did not map"
    return proc


def test_app_states_follow_kwins_windows(bus, session):
    kde = session.start_kde()
    probe = session.probe("State probe", (0x20, 0xc0, 0x40))
    parent = start_parent(session, "State parent")
    try:
        session.wait_window("State parent")
        session.activate("State probe")
        want = {PROBE_APP: 2, PARENT_APP: 1}
        assert limentest.wait_until(lambda: app_states(bus) == want, 10), (app_states(bus), kde.output())
        # From the first GetAppState on, changes are signalled.
        seen = []
        bus.conn.signal_subscribe(kh.KDE_NAME, kh.IMPL + "Background", "RunningApplicationsChanged", kh.PATH, None,
                                  0, lambda *a: seen.append(1))
        session.activate("State parent")
        assert limentest.wait_until(lambda: seen, 10)
        assert limentest.wait_until(lambda: app_states(bus) == {PROBE_APP: 1, PARENT_APP: 2}, 5)
        # An app whose last window closed has none: it is left out (background).
        seen.clear()
        parent.stdin.close()
        parent.wait(timeout=10)
        assert limentest.wait_until(lambda: seen, 10)
        assert limentest.wait_until(lambda: PARENT_APP not in app_states(bus), 5)
        assert app_states(bus).get(PROBE_APP) in (1, 2)
        probe.close()
        assert limentest.wait_until(lambda: app_states(bus) == {}, 10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
