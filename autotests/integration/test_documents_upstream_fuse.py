"""Upstream's own stress test of the document filesystem (test-document-fuse from Debian's
xdg-desktop-portal-tests, the reference's installed tests) run against limen-documents:
exports of every kind, the permissions of every view, saves, renames, links, xattrs, temp
files, re-exports through the mount, then ten copies in parallel. The test starts the
document portal by D-Bus activation of /usr/libexec/xdg-document-portal, so limen-documents is
bound over that path in a mount namespace of the test's own (root only)."""

import os
import shutil
import subprocess

import pytest

import limentest

SCRIPT = "/usr/libexec/installed-tests/xdg-desktop-portal/test-document-fuse.sh"


@pytest.mark.skipif(not os.path.exists(SCRIPT), reason="xdg-desktop-portal-tests missing")
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root for a mount namespace")
def test_upstream_document_fuse_stress(tmp_path):
    docs = limentest.binary("limen-documents")
    # The test's own python3 needs gi: Debian's, first on PATH.
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin", TEST_IN_CI="1")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    shell = (f"mount --bind {docs} /usr/libexec/xdg-document-portal && "
             f"mount --bind {docs} /usr/libexec/xdg-permission-store && exec {SCRIPT} --tap")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", shell], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "ok single-threaded" in out and "ok load-test" in out, out[-4000:]
