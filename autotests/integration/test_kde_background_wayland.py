"""limen-kde's Background.GetAppState on a headless Plasma 5.27 Wayland session
(wayland_session.py: kwin_wayland --virtual): which apps have windows and which one is active,
from KWin's own window list (org_kde_plasma_window_management), as the reference backend reads
it; RunningApplicationsChanged when that changes. The windows are plain wayland-client
toplevels with known app ids (autotests/wayland-client/)."""

import os
import select
import subprocess


import kde_helpers as kh
import limentest

PROBE_APP = "org.limen.WaylandProbe"     # limen-wayland-probe's xdg app id
PARENT_APP = "org.limen.WaylandParent"   # limen-wayland-parent's


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


def test_monitor_behind_limen_portal_follows_kwin(bus, session):
    """The whole chain: a running Flatpak instance (its folder under XDG_RUNTIME_DIR) of an app
    whose window KWin shows is not in the background; once the window closes, KWin tells
    limen-kde, limen-kde signals RunningApplicationsChanged, and limen-portal lists it."""
    from test_kde_frontends import start_limen_portal
    from test_portal_background_v2 import MON_NAME, MON_PATH, apps, hold_ref, make_instance

    kde = session.start_kde()
    probe = session.probe("Flatpak probe", (0x20, 0xc0, 0x40))
    start_limen_portal(bus)
    bus.wait_for_name(MON_NAME)
    ref = hold_ref(make_instance(bus, "31337", PROBE_APP))
    try:
        # limen-kde answers from KWin's list (the refresh never starts a backend: it runs).
        assert limentest.wait_until(lambda: PROBE_APP in app_states(bus), 10)
        limentest.pump(1.0)
        assert apps(bus) == []
        probe.close()
        entry = {"app_id": PROBE_APP, "instance": "31337"}
        assert limentest.wait_until(lambda: apps(bus) == [entry], 10), (apps(bus), kde.output())
    finally:
        ref.close()
