"""What `cmake --install` puts where, as a packager runs it: configured for a prefix, staged
with DESTDIR. Every file lands under DESTDIR/PREFIX (none in the host's /usr/share/dbus-1 or
/usr/lib/systemd, whatever the prefix), an install to another prefix than the configured one
is refused before anything is written, `uninstall` removes what was installed and nothing
else, and the shipped data files say what a package needs them to say.

The trees configured here are built with a stand-in compiler (stand-in-compiler.sh): where a
file goes depends on the install rules, not on what the objects hold. The real build tree's
binaries are checked for compiled-in build paths."""

import configparser
import os
import shutil
import subprocess

import pytest

import limentest

HERE = os.path.dirname(os.path.abspath(__file__))
STAND_IN = os.path.join(HERE, "stand-in-compiler.sh")
PREFIXES = ["/usr", "/opt/limen"]

# Relative to the prefix (the multiarch libdir only for /usr, as GNUInstallDirs has it).
EXPECTED = [
    "libexec/limen-portal", "libexec/limen-documents", "libexec/limen-kde",
    "libexec/limen-validate-icon", "libexec/limen-validate-sound",
    "{libdir}/limen/liblimen-qt.so", "{libdir}/limen/liblimen-qt-wayland.so",
    "{libdir}/limen/liblimen-kde-wayland.so", "{libdir}/limen/liblimen-kde-preview.so",
    "share/dbus-1/services/org.freedesktop.portal.Desktop.service",
    "share/dbus-1/services/org.freedesktop.portal.Documents.service",
    "share/dbus-1/services/org.freedesktop.impl.portal.PermissionStore.service",
    "share/dbus-1/services/org.freedesktop.impl.portal.desktop.limen.service",
    "lib/systemd/user/limen-portal.service", "lib/systemd/user/limen-documents.service",
    "lib/systemd/user/limen-kde.service",
    "share/xdg-desktop-portal/portals/limen.portal", "share/xdg-desktop-portal/kde-portals.conf",
    "share/applications/limen-kde.desktop", "share/knotifications5/limen.notifyrc",
    "share/locale/de/LC_MESSAGES/limen.mo",
    "bin/limen-permissions", "share/man/man1/limen-permissions.1",
    "{libdir}/qt5/plugins/plasma/kcms/systemsettings_qwidgets/kcm_limen_permissions.so",
]


def libdir(prefix):
    return "lib/x86_64-linux-gnu" if prefix == "/usr" else "lib"


class Tree:
    """A build tree configured for @prefix, built with the stand-in compiler."""

    def __init__(self, root, prefix):
        self.root = root
        self.prefix = prefix
        self.dir = os.path.join(root, "tree")
        launchers = [f"-DCMAKE_{lang}_{kind}_LAUNCHER={STAND_IN}" for lang in ("C", "CXX")
                     for kind in ("COMPILER", "LINKER")]
        env = {k: v for k, v in os.environ.items() if k not in ("DESTDIR", "CMAKE_C_COMPILER_LAUNCHER",
                                                                "CMAKE_CXX_COMPILER_LAUNCHER")}
        self.env = env
        self.run(["cmake", "-S", limentest.SOURCE_DIR, "-B", self.dir, f"-DCMAKE_INSTALL_PREFIX={prefix}",
                  "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release"] + launchers)
        self.run(["cmake", "--build", self.dir, "-j2"])

    def run(self, argv, destdir=None, check=True):
        env = dict(self.env)
        if destdir:
            env["DESTDIR"] = destdir
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        if check:
            assert r.returncode == 0, f"{argv}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r

    def stage(self, name):
        dest = os.path.join(self.root, name)
        shutil.rmtree(dest, ignore_errors=True)
        self.run(["cmake", "--install", self.dir], destdir=dest)
        return dest


def staged_files(dest):
    out = []
    for d, dirs, files in os.walk(dest):
        for f in files:
            out.append(os.path.join(d, f))
    return out


@pytest.fixture(scope="module", params=PREFIXES)
def tree(request, tmp_path_factory):
    return Tree(str(tmp_path_factory.mktemp("layout")), request.param)


def test_every_file_under_its_prefix(tree):
    dest = tree.stage("stage")
    files = staged_files(dest)
    root = os.path.join(dest, tree.prefix.lstrip("/"))
    outside = [f for f in files if not f.startswith(root + "/")]
    assert outside == [], outside
    for rel in EXPECTED:
        assert os.path.isfile(os.path.join(root, rel.format(libdir=libdir(tree.prefix)))), rel
    with open(os.path.join(tree.dir, "install_manifest.txt")) as f:
        manifest = f.read().split()
    assert sorted(manifest) == sorted(f[len(dest):] for f in files)
    # What the installed files start names the same prefix.
    for name in ("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Documents",
                 "org.freedesktop.impl.portal.PermissionStore", "org.freedesktop.impl.portal.desktop.limen"):
        service = read_ini(os.path.join(root, "share/dbus-1/services", name + ".service"))
        assert service["D-BUS Service"]["Exec"].startswith(tree.prefix + "/libexec/limen-"), name
    for unit in ("limen-portal", "limen-documents", "limen-kde"):
        service = read_ini(os.path.join(root, "lib/systemd/user", unit + ".service"))["Service"]
        assert service["ExecStart"].startswith(tree.prefix + "/libexec/limen-"), unit
    desktop = read_ini(os.path.join(root, "share/applications/limen-kde.desktop"))["Desktop Entry"]
    assert desktop["Exec"] == tree.prefix + "/libexec/limen-kde"


def test_install_to_another_prefix_is_refused(tree, tmp_path):
    other = "/opt/elsewhere" if tree.prefix == "/usr" else "/usr"
    dest = str(tmp_path / "stage")
    r = tree.run(["cmake", "--install", tree.dir, "--prefix", other], destdir=dest, check=False)
    assert r.returncode != 0
    assert f"configured for the prefix {tree.prefix}" in r.stderr
    assert staged_files(dest) == []
    # The same prefix, spelt with a trailing slash, is the configured one.
    r = tree.run(["cmake", "--install", tree.dir, "--prefix", tree.prefix + "/"], destdir=dest)
    assert staged_files(dest)


def test_uninstall_removes_what_was_installed(tree):
    dest = tree.stage("stage-uninstall")
    root = os.path.join(dest, tree.prefix.lstrip("/"))
    # Another package's file in a shared directory stays.
    other = os.path.join(root, "share/dbus-1/services/org.example.Other.service")
    with open(other, "w") as f:
        f.write("[D-BUS Service]\nName=org.example.Other\nExec=/bin/true\n")
    tree.run(["cmake", "--build", tree.dir, "--target", "uninstall"], destdir=dest)
    assert staged_files(dest) == [other]
    assert not os.path.exists(os.path.join(root, libdir(tree.prefix), "limen"))


def read_ini(path):
    p = configparser.ConfigParser(interpolation=None, strict=False)
    p.optionxform = str
    p.read(path)
    return p


def source_data(*parts):
    return os.path.join(limentest.SOURCE_DIR, *parts)


def test_shipped_service_files_match_the_reference():
    """AppArmor-confined (Snap) apps may activate the public services, as the reference's
    allow; the units are ordered as the reference's (not after graphical-session.target,
    which a unit started before it would then wait for) and live in session.slice."""
    for name in ("src/portal/data/org.freedesktop.portal.Desktop.service.in",
                 "document-fuse/data/org.freedesktop.portal.Documents.service.in"):
        assert read_ini(source_data(name))["D-BUS Service"].get("AssumedAppArmorLabel") == "unconfined", name
    for name in ("src/portal/data/limen-portal.service.in", "kde-backend/data/limen-kde.service.in",
                 "document-fuse/data/limen-documents.service.in"):
        unit = read_ini(source_data(name))
        assert "graphical-session.target" not in unit["Unit"].get("After", ""), name
        assert unit["Unit"].get("PartOf") == "graphical-session.target", name
        assert unit["Service"].get("Slice") == "session.slice", name


def test_desktop_file_is_hidden_from_menus():
    """limen-kde is no application to start by hand (KWin still reads its keys: the KWin
    tests use this same file)."""
    entry = read_ini(source_data("kde-backend/data/limen-kde.desktop.in"))["Desktop Entry"]
    assert entry.get("NoDisplay") == "true"
    assert "X-KDE-DBUS-Restricted-Interfaces" in entry and "X-KDE-Wayland-Interfaces" in entry


BINARIES = ["src/portal/limen-portal", "document-fuse/limen-documents", "kde-backend/limen-kde",
            "src/validators/limen-validate-icon", "src/validators/limen-validate-sound",
            "kde-backend/qt/liblimen-qt.so", "kde-backend/qt/liblimen-qt-wayland.so",
            "kde-backend/wayland/liblimen-kde-wayland.so", "kde-backend/preview/liblimen-kde-preview.so"]


@pytest.mark.parametrize("rel", BINARIES)
def test_binaries_do_not_name_the_build_tree(rel, tmp_path):
    """What a package ships (the binaries less their debug sections, which packages move to
    -dbgsym) names no path of the build tree: builds in two folders are the same, and an
    installed daemon never looks there."""
    if limentest.SANITIZE:
        pytest.skip("a sanitizer build is never shipped (ASan names each object file's path in it)")
    path = os.path.join(limentest.BUILD_DIR, rel)
    if not os.path.exists(path):
        pytest.skip(f"{rel} not built")
    stripped = str(tmp_path / "stripped")
    subprocess.run(["objcopy", "--strip-debug", path, stripped], check=True)
    with open(stripped, "rb") as f:
        data = f.read()
    build = os.path.realpath(limentest.BUILD_DIR).encode()
    assert build not in data
