"""AddFull's as-needed-by-app from the host: no document for a file the app's installed
permissions already let it open by path. The app is really installed (a local repo and
`flatpak install` into this test's own user and system installations, no network), its
filesystem permissions set with `flatpak override`, and every answer is compared with
`flatpak info --file-access`, which is what Debian's xdg-document-portal asks; one scenario
is also run against that reference daemon."""

import os
import shutil
import tempfile
import time

import pytest

import documents_helpers as dh
import limentest

APP = "org.example.Reach"
SYS_APP = "org.example.SysReach"
AS_NEEDED = 4
FLAGS = 1 | 2 | AS_NEEDED   # reuse_existing, persistent, as-needed-by-app

pytestmark = pytest.mark.skipif(shutil.which("flatpak") is None, reason="flatpak CLI not installed")


def write(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("x")


@pytest.fixture
def env(bus):
    """Both installations of this test, the user directories, the files to export, and the
    app installed in the user installation (SYS_APP in the system one)."""
    root = os.path.join(bus.root, "flatpak-build")
    os.makedirs(root)
    bus.env["FLATPAK_SYSTEM_DIR"] = os.path.join(bus.root, "system-flatpak")
    os.makedirs(os.path.join(bus.config_home), exist_ok=True)
    with open(os.path.join(bus.config_home, "user-dirs.dirs"), "w") as f:
        f.write('XDG_DOCUMENTS_DIR="$HOME/Documents"\nXDG_DOWNLOAD_DIR="$HOME/Downloads"\n')
    dh.install_flatpak_app(bus, root, APP)
    dh.install_flatpak_app(bus, root, SYS_APP, system=True)
    h = bus.home
    # /mnt is one of the places `host` shares: a directory of this test's own there.
    mnt = tempfile.mkdtemp(prefix="limen-reach-", dir="/mnt")
    files = [f"{h}/Documents/a", f"{h}/Downloads/b", f"{h}/Projects/x", f"{h}/Projects/sub/y", f"{h}/other",
             f"{h}/.var/app/{APP}/data/own", f"{h}/.var/app/org.example.Other/data/f",
             f"{bus.root}/explicit/e", f"{mnt}/m"]
    for p in files:
        write(p)
    os.symlink(f"{h}/Documents", f"{h}/doclink")
    try:
        yield {"files": files, "mnt": mnt}
    finally:
        shutil.rmtree(mnt, ignore_errors=True)

run = dh.run


def flatpak_says(bus, app, path, where="--user"):
    return run(bus, "flatpak", "info", where, f"--file-access={path}", app).stdout.strip()


def set_filesystems(bus, app, grants=(), hides=(), where="--user", global_grants=()):
    run(bus, "flatpak", "override", where, "--reset", app)
    run(bus, "flatpak", "override", where, "--reset")
    for g in grants:
        run(bus, "flatpak", "override", where, f"--filesystem={g}", app)
    for g in hides:
        run(bus, "flatpak", "override", where, f"--nofilesystem={g}", app)
    for g in global_grants:
        run(bus, "flatpak", "override", where, f"--filesystem={g}")


def expected(access, perms):
    """Whether no document is expected: the app reaches the file with the rights asked."""
    return access == "read-write" or (access == "read-only" and "write" not in perms)


def check_matrix(bus, app, files, perms, where="--user", label=""):
    ids = dh.add_full(bus, files, FLAGS, app, perms)[0]
    got = {p: i == "" for p, i in zip(files, ids)}
    # The store decides for the file's real path (the fd's), as the reference does.
    want = {p: expected(flatpak_says(bus, app, os.path.realpath(p), where), perms) for p in files}
    assert got == want, f"{label}:\n" + "\n".join(
        f"{p}: limen {'no document' if got[p] else 'document'}, flatpak "
        f"{flatpak_says(bus, app, os.path.realpath(p), where)}" for p in files if got[p] != want[p])
    # What got a document is really granted to the app.
    for p, i in zip(files, ids):
        if i:
            assert dh.docs(bus, "Info", (i,), "(s)")[1][app] == perms
    return got


SCENARIOS = [
    ("home", {"grants": ["home"]}),
    ("home-with-ro-projects", {"grants": ["home", "~/Projects:ro"]}),
    ("home-hiding-projects", {"grants": ["home"], "hides": ["~/Projects"]}),
    ("home-read-only", {"grants": ["home:ro"]}),
    ("xdg-dirs-and-subdir", {"grants": ["xdg-documents", "xdg-download:ro", "~/Projects/sub"]}),
    ("host", {"grants": ["host"]}),
    ("explicit-paths", {"grants": ["/EXPLICIT", "/MNT:ro"]}),
    ("global-override", {"global_grants": ["xdg-documents"]}),
    ("nothing", {}),
]


@pytest.mark.parametrize("perms", [["read"], ["read", "write"]], ids=["read", "read-write"])
def test_as_needed_matches_flatpak(bus, env, perms):
    dh.start(bus)
    files = env["files"] + [f"{bus.home}/doclink/a"]
    seen_skip = seen_doc = False
    for name, sc in SCENARIOS:
        grants = [g.replace("/EXPLICIT", f"{bus.root}/explicit").replace("/MNT", env["mnt"])
                  for g in sc.get("grants", [])]
        set_filesystems(bus, APP, grants, sc.get("hides", []), global_grants=sc.get("global_grants", []))
        got = check_matrix(bus, APP, files, perms, label=name)
        seen_skip |= any(got.values())
        seen_doc |= not all(got.values())
    assert seen_skip and seen_doc


def test_system_installed_app_and_its_overrides(bus, env):
    dh.start(bus)
    files = env["files"]
    # A system override applies to the system-installed app, a user one too.
    set_filesystems(bus, SYS_APP, ["xdg-documents"], where="--system")
    run(bus, "flatpak", "override", "--user", "--filesystem=~/Projects", SYS_APP)
    got = check_matrix(bus, SYS_APP, files, ["read", "write"], where="--system")
    assert got[f"{bus.home}/Documents/a"] and got[f"{bus.home}/Projects/x"] and not got[f"{bus.home}/other"]
    # ... but a system override does not reach the user-installed app.
    set_filesystems(bus, APP, [])
    run(bus, "flatpak", "override", "--system", "--filesystem=home", APP)
    assert dh.add_full(bus, [f"{bus.home}/other"], FLAGS, APP, ["read"])[0] != [""]
    assert flatpak_says(bus, APP, f"{bus.home}/other") == "hidden"


def test_what_never_skips_the_document(bus, env):
    """Anything uncertain gets a document, as without the flag."""
    dh.start(bus)
    f = f"{bus.home}/other"
    set_filesystems(bus, APP, ["home"])
    assert dh.add_full(bus, [f], FLAGS, APP, ["read"])[0] == [""]
    # Without the flag, or without an app: a document.
    assert dh.add_full(bus, [f], 1 | 2, APP, ["read"])[0][0] != ""
    assert dh.add_full(bus, [f], FLAGS, "", [])[0][0] != ""
    # An app that is not installed.
    assert dh.add_full(bus, [f], FLAGS, "org.example.NotInstalled", ["read"])[0][0] != ""
    # An override file that does not parse: the app reaches nothing.
    override = os.path.join(bus.data_home, "flatpak", "overrides", APP)
    with open(override) as fh:
        good = fh.read()
    with open(override, "w") as fh:
        fh.write(good + "\n[Context\nfilesystems=home;\n")
    assert dh.add_full(bus, [f], FLAGS, APP, ["read"])[0][0] != ""
    # A negation this model does not know: the app reaches nothing.
    with open(override, "w") as fh:
        fh.write("[Context]\nfilesystems=home;!some-future-location;\n")
    assert dh.add_full(bus, [f], FLAGS, APP, ["read"])[0][0] != ""
    # An unknown mode suffix.
    with open(override, "w") as fh:
        fh.write("[Context]\nfilesystems=home:sometimes;\n")
    assert dh.add_full(bus, [f], FLAGS, APP, ["read"])[0][0] != ""
    # Nothing under /usr or /etc, whatever the keys say.
    with open(override, "w") as fh:
        fh.write("[Context]\nfilesystems=host;/usr;/etc;\n")
    assert dh.add_full(bus, ["/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd"],
                       FLAGS, APP, ["read"])[0][0] != ""


def test_sandboxed_caller_naming_another_app_gets_documents(bus, env):
    """A sandbox learns nothing about another app's permissions from the answer."""
    dh.start(bus)
    set_filesystems(bus, APP, ["home"])
    f = f"{bus.home}/other"
    body = f'''
fd = os.open({f!r}, os.O_PATH)
out["r"] = call("AddFull", "(ahusas)", ([0], {FLAGS}, {APP!r}, ["read"]), [fd])
'''
    out = dh.run_in_sandbox(bus, "org.example.Sandboxed", body, binds=[bus.home])
    assert out["r"][0] == "ok" and out["r"][1][0][0] != ""


def test_reference_document_portal_agrees(bus, env):
    """Debian's xdg-document-portal (it runs `flatpak info --file-access`) with the same
    installation: for rights including write it makes a document exactly where we do."""
    ref = "/usr/libexec/xdg-document-portal"
    if not os.path.exists(ref):
        pytest.skip("xdg-document-portal not installed")
    files = env["files"]
    set_filesystems(bus, APP, ["home", "~/Projects:ro"])
    d = dh.start(bus)
    ours = dh.add_full(bus, files, FLAGS, APP, ["read", "write"])[0]
    d.stop()
    deadline = time.time() + 10
    while dh.is_mounted(dh.mountpoint(bus)) and time.time() < deadline:
        time.sleep(0.05)
    bus.start(["/usr/libexec/xdg-permission-store", "--replace"], wait_name=dh.PS_NAME)
    bus.start([ref, "--replace"], wait_name=dh.DOCS_NAME)
    deadline = time.time() + 10
    while not dh.is_mounted(dh.mountpoint(bus)) and time.time() < deadline:
        time.sleep(0.05)
    theirs = dh.add_full(bus, files, FLAGS, APP, ["read", "write"])[0]
    assert [i == "" for i in ours] == [i == "" for i in theirs], list(zip(files, ours, theirs))
