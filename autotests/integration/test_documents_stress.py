"""The C stress test (autotests/unit/test-documents-stress.c) against a live daemon:
threads reading/writing/stat-ing through the mount while rights are granted and revoked.
The daemon runs with leak detection on when built with sanitizers."""

import os
import subprocess

import documents_helpers as dh
import limentest


def test_stress_grant_revoke_while_busy(bus):
    env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=66"} if limentest.SANITIZE else None
    d = dh.start(bus, env=env)
    work = os.path.join(bus.root, "work")
    os.makedirs(work)
    ids, names = [], []
    for i in range(8):
        name = f"s{i}.txt"
        p = os.path.join(work, name)
        with open(p, "w") as f:
            f.write("D" * 8192)
        doc = dh.add(bus, p)
        dh.docs(bus, "GrantPermissions", (doc, "org.example.App", ["read", "write"]), "(ssas)")
        ids.append(doc)
        names.append(name)
    exe = os.path.join(limentest.BUILD_DIR, "autotests", "test-documents-stress")
    seconds = "8" if limentest.SANITIZE else "5"
    r = subprocess.run([exe, dh.mountpoint(bus), "org.example.App", ",".join(ids), ",".join(names), seconds],
                       env=dict(bus.env, ASAN_OPTIONS="detect_leaks=0"), capture_output=True, text=True,
                       timeout=120)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    # The daemon survived, still serves, and ends cleanly (leak check at exit under ASan).
    assert dh.docs(bus, "Info", (ids[0],), "(s)")[1]["org.example.App"] == ["read"]
    assert d.stop() == 0, d.output()[-3000:]



def test_sigterm_while_fd_requests_flood_in():
    """SIGTERM while 16 peers flood the daemon with fd-carrying Add calls: it ends with status
    0 within 1 s, in every round (each on a bus of its own). Under such a flood dbus-daemon's
    queue to the daemon holds more than 64 fds, and then dbus-daemon silently drops its own
    replies to the daemon (GetConnectionCredentials for a new caller, ReleaseName at exit):
    neither the signal nor the exit may wait on them."""
    for round_ in range(6):
        b = limentest.Bus()
        try:
            work = os.path.join(b.root, "work")
            os.makedirs(work)
            status, elapsed, output = dh.sigterm_during_fd_flood(b, work, peers=16, calls=300)
            assert status == 0 and elapsed < 1.0, (round_, status, elapsed, output[-2000:])
            assert not dh.is_mounted(dh.mountpoint(b))
        finally:
            statuses = b.close()
        assert all(st in (0, None, -15, -9) for _, st in statuses), statuses
