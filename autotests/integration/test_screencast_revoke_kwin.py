"""A share revoked while it streams, with the real peers: limen-portal and limen-kde on a
headless KWin (wayland_session.py) with PipeWire and WirePlumber. An app shares a window with
persist_mode 2; the person takes the kept token back in the permission store (what the
permissions page's Revoke and limen-permissions do) while frames flow: the app's Session is
Closed, its PipeWire remote loses the node, and KWin's stream ends (the node is gone from
PipeWire for everyone)."""
import os
import subprocess
import time

import pytest

import limentest
from test_portal_screencast import (GREEN, consume_through, open_remote, probe, probe_binary, rgb_at,
                                    share_green_window_on_kwin)

STORE = "org.freedesktop.impl.portal.PermissionStore"
STORE_PATH = "/org/freedesktop/impl/portal/PermissionStore"


def pipewire_nodes(bus):
    out = subprocess.run(["pw-cli", "ls", "Node"], env=bus.env, capture_output=True, text=True, timeout=10).stdout
    return {int(line.split()[1].rstrip(",")) for line in out.splitlines() if line.strip().startswith("id ")}


@pytest.mark.parametrize("how", ["revoke", "cli-reset"])
def test_revoked_token_stops_a_running_window_share_on_kwin(bus, how):
    import wayland_session
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    probe_binary()
    session = wayland_session.WaylandSession(bus)
    try:
        c, s, window, token, results = share_green_window_on_kwin(bus, session)
        (node, _), = results["streams"]
        kept = results["restore_token"]
        perms, _ = bus.call(STORE, "Lookup", ("screencast", kept), "(ss)", dest=STORE, path=STORE_PATH)
        assert "" in perms, perms
        fd = open_remote(c, s)
        # Streaming: the window's colour comes through the app's remote.
        frame = consume_through(fd, node, bus.root)
        assert frame and rgb_at(frame, 200, 150) == GREEN
        assert node in pipewire_nodes(bus)
        watcher = subprocess.Popen([probe_binary(), str(fd), str(node), "30"], pass_fds=(fd,),
                                   stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)

        if how == "revoke":
            bus.call(STORE, "DeletePermission", ("screencast", kept, ""), "(sss)", dest=STORE, path=STORE_PATH)
        else:
            r = subprocess.run([os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions"), "reset", "-"],
                               env=bus.env, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr

        out, _ = watcher.communicate(timeout=40)
        assert f"gone {node}" in out, out
        assert limentest.wait_until(lambda: s in c.closed, 10), c.closed
        # KWin's stream itself ended: the node is gone for every PipeWire client.
        assert limentest.wait_until(lambda: node not in pipewire_nodes(bus), 10), pipewire_nodes(bus)
        status, out = probe(fd)
        assert f"{node} " not in out
        os.close(fd)
        window.close()
    finally:
        session.close()
