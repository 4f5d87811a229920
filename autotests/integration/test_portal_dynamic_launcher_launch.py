"""A launcher a sandboxed app installed through DynamicLauncher.Install, started the ways a
desktop starts it: KIO's ApplicationLauncherJob (Plasma's menu, and an entry's actions in its
context menu; autotests/qt/kio-launch-probe.cpp) and GIO (Gio.DesktopAppInfo.launch and
launch_action, as GNOME and gtk-launch do). The test owns the whole environment: a fake
`flatpak` and a fake terminal on PATH record how they were called, and every hostile command
in an entry would create a marker file. Whatever the entry holds, each start must be exactly
`flatpak run --command=CMD APP ARGS` of the app itself, with nothing else run on the host."""
import json
import os
import shutil
import stat
import subprocess

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

DL = "org.freedesktop.portal.DynamicLauncher"
APP = "org.example.App"
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4"
       b"\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND"
       b"\xaeB`\x82")

# Records its argv and working directory, one JSON file per call (complete once renamed to
# .json), and runs nothing.
RECORDER = """#!/usr/bin/python3
import json, os, sys, tempfile
fd, tmp = tempfile.mkstemp(dir={log!r}, prefix={kind!r} + "-", suffix=".tmp")
os.write(fd, json.dumps({{"kind": {kind!r}, "argv": sys.argv[1:], "cwd": os.getcwd()}}).encode())
os.close(fd)
os.rename(tmp, tmp[:-4] + ".json")
"""
# A terminal as konsole and xterm are: records itself, then runs what follows the first -e.
TERMINAL = RECORDER + """if "-e" in sys.argv:
    args = sys.argv[sys.argv.index("-e") + 1:]
    os.execv(args[0], args)
"""

GIO_LAUNCH = """
import sys
from gi.repository import Gio
path, action = sys.argv[1], sys.argv[2]
files = [Gio.File.new_for_path(p) for p in sys.argv[3:]]
app = Gio.DesktopAppInfo.new_from_filename(path)
if app is None:
    print("unloadable"); sys.exit(3)
if action:
    if action not in app.list_actions():
        print("no action"); sys.exit(2)
    app.launch_action(action, None)
else:
    app.launch(files, None)
print("started")
"""


class Desk:
    """The private desktop: fake programs, their log, markers, the launch environment."""

    def __init__(self, bus):
        self.bus = bus
        self.bin = os.path.join(bus.root, "fakebin")
        self.log = os.path.join(bus.root, "launch-log")
        self.markers = os.path.join(bus.root, "markers")
        for d in (self.bin, self.log, self.markers):
            os.makedirs(d)
        self._script("flatpak", RECORDER.format(log=self.log, kind="flatpak"))
        # GIO tries konsole among its terminals; KIO runs kdeglobals' TerminalApplication.
        for name in ("konsole", "xterm"):
            self._script(name, TERMINAL.format(log=self.log, kind="terminal"))
        with open(os.path.join(bus.config_home, "kdeglobals"), "w") as f:
            f.write(f"[General]\nTerminalApplication={self.bin}/konsole\n")
        self.env = dict(bus.env, PATH=self.bin, QT_QPA_PLATFORM="offscreen")
        self.cwd = os.path.join(bus.root, "launcher-cwd")
        os.makedirs(self.cwd)

    def _script(self, name, text):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, stat.S_IRWXU)

    def marker(self, name):
        return os.path.join(self.markers, name)

    def records(self):
        out = []
        for n in sorted(os.listdir(self.log)):
            if n.endswith(".json"):
                with open(os.path.join(self.log, n)) as f:
                    out.append(json.load(f))
        return out

    def clear(self):
        shutil.rmtree(self.log)
        os.makedirs(self.log)

    def start(self, how, path, action=None, files=(), env=None):
        """Start @path (or its @action, with @files) through KIO or GIO, then wait until the
        start left a trace: a record of a fake program or a marker of a hostile command."""
        if how == "kio":
            argv = [os.path.join(limentest.BUILD_DIR, "autotests", "kio-launch-probe"), path, action or ""]
        else:
            argv = ["/usr/bin/python3", "-c", GIO_LAUNCH, path, action or ""]
        done = subprocess.run(argv + list(files), env=dict(self.env, **(env or {})), cwd=self.cwd,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert limentest.wait_until(lambda: self.records() or os.listdir(self.markers), 30), \
            f"the start left no trace: {done.stdout} {done.stderr}"


def start_portal(bus, tmp_path):
    """limen-portal, taking every caller for the Flatpak app APP, with a dbusmock backend."""
    meta = tmp_path / "flatpak-info"
    meta.write_text(f"[Application]\nname={APP}\n")
    rh.setup(bus, ["dynamiclauncher"], portal_env={
        "XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "flatpak",
        "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA": str(meta)})
    return rh.Client(bus)


@pytest.fixture
def desk(bus, tmp_path):
    d = Desk(bus)
    return d, start_portal(bus, tmp_path)


def install(bus, client, name, entry):
    token = bus.call(DL, "RequestInstallToken", ("Tool", v("(sv)", ("bytes", v("ay", PNG))), {}), "(sva{sv})",
                     conn=client.conn)[0]
    did = f"{APP}.{name}.desktop"
    bus.call(DL, "Install", (token, did, entry, {}), "(sssa{sv})", conn=client.conn)
    path = os.path.join(bus.data_home, "applications", did)
    assert os.path.islink(path)
    return path


def assert_only_the_app(desk, command, args=(), cwd=None):
    """The start ran `flatpak run --command=COMMAND APP ARGS`, in the launcher's own working
    directory (or @cwd, where KIO starts an app on a local file: that file's folder), and
    nothing else."""
    assert os.listdir(desk.markers) == [], "a hostile command ran on the host"
    recs = desk.records()
    assert len(recs) == 1, recs
    r = recs[0]
    assert r["kind"] == "flatpak", f"{r['kind']} ran on the host: {r['argv']}"
    assert r["argv"] == ["run", f"--command={command}", APP] + list(args), r["argv"]
    assert r["cwd"] == (cwd or desk.cwd), "the launcher chose the working directory"
    desk.clear()


def sh(marker):
    return f'/bin/sh -c "/usr/bin/touch {marker}"'


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_action_runs_inside_the_sandbox(desk, how):
    """The report's case: an action whose Exec is a host shell command. Each action's Exec is
    rewritten like the main one, so clicking it starts the app's own sandbox."""
    d, client = desk
    m = d.marker("action")
    entry = (f"[Desktop Entry]\nType=Application\nName=T\nExec=mytool\nActions=evil;\n\n"
             f"[Desktop Action evil]\nName=Evil\nExec={sh(m)}\n")
    path = install(d.bus, client, "action", entry)
    d.start(how, path, action="evil")
    assert_only_the_app(d, "/bin/sh", ["-c", f"/usr/bin/touch {m}"])
    d.start(how, path)
    assert_only_the_app(d, "mytool")


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_terminal_keys_are_not_installed(desk, how):
    """Terminal and TerminalOptions: KIO builds `TERMINAL OPTIONS -e COMMAND`, so the options
    alone could run anything in the person's terminal on the host."""
    d, client = desk
    entry = (f"[Desktop Entry]\nType=Application\nName=T\nExec=mytool\nTerminal=true\n"
             f"TerminalOptions=-e {sh(d.marker('terminal'))} --\n")
    d.start(how, install(d.bus, client, "term", entry))
    assert_only_the_app(d, "mytool")


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_path_is_not_installed(desk, how):
    d, client = desk
    elsewhere = os.path.join(d.bus.root, "chosen-by-the-app")
    os.makedirs(elsewhere)
    entry = f"[Desktop Entry]\nType=Application\nName=T\nExec=mytool\nPath={elsewhere}\n"
    d.start(how, install(d.bus, client, "path", entry))
    assert_only_the_app(d, "mytool")


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_translated_exec_is_not_installed(desk, how):
    """KConfig reads Exec[de] before Exec in a German session: a translated key is another
    Exec line (and Terminal[de], Path[de] the same)."""
    d, client = desk
    entry = (f"[Desktop Entry]\nType=Application\nName=T\nExec=mytool\nExec[de]={sh(d.marker('de'))}\n"
             f"Exec[de_DE]={sh(d.marker('de_DE'))}\n")
    path = install(d.bus, client, "translated", entry)
    d.start(how, path, env={"LANG": "de_DE.UTF-8", "LC_ALL": "", "LANGUAGE": "de_DE:de"})
    assert_only_the_app(d, "mytool")


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_file_names_cannot_become_flatpak_options(desk, how):
    """GIO expands a field code inside quotes as if it stood alone: with %f in the command, a
    file named "x --filesystem=host org.example.App" would give flatpak an option of its own
    (a sandbox with the whole host file system). Such a line is refused; a field code that is
    an argument of its own stays after the app id."""
    d, client = desk
    hostile = os.path.join(d.bus.root, f"x --filesystem=host {APP}")
    open(hostile, "w").close()
    with pytest.raises(GLib.Error) as e:
        install(d.bus, client, "fieldcode", "[Desktop Entry]\nType=Application\nName=T\nExec=\"%f\"\n")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "Exec" in e.value.message
    path = install(d.bus, client, "fieldcode", "[Desktop Entry]\nType=Application\nName=T\nExec=mytool %f\n")
    d.start(how, path, files=[hostile])
    assert_only_the_app(d, "mytool", [hostile], cwd=d.bus.root if how == "kio" else None)


def plant(bus, name, entry, app_id=APP):
    """A launcher as an earlier install left it: the file, its icon and its menu link."""
    portal_dir = os.path.join(bus.data_home, "xdg-desktop-portal")
    did = f"{app_id}.{name}.desktop"
    icon = os.path.join(portal_dir, "icons", "1x1", f"{app_id}.{name}.png")
    path = os.path.join(portal_dir, "applications", did)
    link = os.path.join(bus.data_home, "applications", did)
    for p in (icon, path, link):
        os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(icon, "wb") as f:
        f.write(PNG)
    with open(path, "w") as f:
        f.write(entry.format(icon=icon))
    os.symlink(path, link)
    return path, link


@pytest.mark.parametrize("how", ["kio", "gio"])
def test_launchers_installed_before_are_repaired_or_disabled(bus, tmp_path, how):
    """A launcher the reference wrote for a Flatpak app keeps Exec[xx], Terminal,
    TerminalOptions and Path; one an earlier Limen wrote may carry an action's host command.
    At start the first is brought under the allow-list, the second leaves the menu; a host
    app's launcher is left alone."""
    d = Desk(bus)
    ref, ref_link = plant(bus, "reference", (
        "[Desktop Entry]\nType=Application\nName=Tool\nIcon={icon}\n"
        f"Exec=flatpak run --command=mytool {APP}\nExec[de]={sh(d.marker('de'))}\nTerminal=true\n"
        f"TerminalOptions=-e {sh(d.marker('terminal'))} --\nPath=/\nTryExec=/bin/true\nX-Flatpak={APP}\n"))
    old, old_link = plant(bus, "planted", (
        "[Desktop Entry]\nType=Application\nName=Tool\nIcon={icon}\n"
        f"Exec=flatpak run --command=mytool {APP}\nX-Flatpak={APP}\nActions=evil;\n\n"
        f"[Desktop Action evil]\nName=Evil\nExec={sh(d.marker('action'))}\n"))
    host_entry = "[Desktop Entry]\nType=Application\nName=Host Tool\nExec=htop\nTerminal=true\n"
    host, host_link = plant(bus, "htop", host_entry, app_id="org.example.Host")
    start_portal(bus, tmp_path)

    def repaired():
        with open(ref) as f:
            return "Terminal" not in f.read()
    assert limentest.wait_until(lambda: repaired() and os.path.exists(old + ".unsafe"), 20)
    assert not os.path.exists(old) and not os.path.lexists(old_link)
    # A host app's launcher crossed no boundary: left as it was.
    with open(host) as f:
        assert f.read() == host_entry and os.path.islink(host_link)
    d.start(how, ref_link, env={"LANG": "de_DE.UTF-8", "LC_ALL": "", "LANGUAGE": "de_DE:de"})
    assert_only_the_app(d, "mytool")
