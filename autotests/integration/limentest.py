"""Shared machinery for Limen's integration tests: a private session bus with temp XDG
dirs, daemons launched from the build tree, Gio helpers, and a bwrap-sandboxed caller.

Every test module uses the `bus` fixture (conftest.py) which yields a `Bus`."""

import os
import shutil
import signal as signal_module
import subprocess
import sys
import tempfile
import textwrap
import time

import gi

gi.require_version("Gio", "2.0")
gi.require_version("GLib", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

BUILD_DIR = os.environ.get("LIMEN_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SOURCE_DIR = os.environ.get("LIMEN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SANITIZE = os.environ.get("LIMEN_SANITIZE", "0") in ("1", "ON", "TRUE", "true")

BINARIES = {
    "limen-portal": "src/portal/limen-portal",
    "limen-documents": "document-fuse/limen-documents",
    "limen-kde": "kde-backend/limen-kde",
}

PORTAL_BUS_NAME = "org.freedesktop.portal.Desktop"
# Debian's reference binaries, started beside ours by comparison tests: how they end is the
# tests' business (a reference crash is an xfail there, not a failure of Limen's).
REFERENCE_DAEMONS = frozenset({"/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-document-portal",
                               "/usr/libexec/xdg-permission-store",
                               "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde",
                               "/usr/libexec/xdg-desktop-portal-gtk"})
PORTAL_PATH = "/org/freedesktop/portal/desktop"


def binary(name):
    """Path of a Limen binary in the build tree."""
    path = os.path.join(BUILD_DIR, BINARIES.get(name, name))
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    return path


OPEN_BUSES = []   # Bus objects not closed yet

# What a test must not take from the machine it runs on: the applications installed there
# (MIME handlers, terminals, browsers: a base image's vim.desktop answers text/plain and
# needs a terminal) and the machine's default-application choices. Everything else of the
# system's data and config dirs (the MIME database, icons, KDE's service and notification
# data, /etc/xdg's menus and kdeglobals) stays visible through symlinks.
MACHINE_CHOICES = frozenset({"applications", "mimeapps.list", "defaults.list"})


def system_dirs_without_apps(root, variable, default):
    """One folder under @root that mirrors every folder of the system's @variable search
    path (first one wins, as in the XDG lookup) but for MACHINE_CHOICES and
    `*-mimeapps.list`: a test sees exactly the handlers it writes itself."""
    os.makedirs(root, exist_ok=True)
    for source in (os.environ.get(variable) or default).split(":"):
        source = source.rstrip("/") or "/"
        if not source or not os.path.isdir(source):
            continue
        for entry in sorted(os.listdir(source)):
            if entry in MACHINE_CHOICES or entry.endswith("-mimeapps.list"):
                continue
            link = os.path.join(root, entry)
            if not os.path.lexists(link):
                os.symlink(os.path.join(source, entry), link)
    return root


def isolated_xdg_dirs(root):
    """XDG_DATA_DIRS and XDG_CONFIG_DIRS for a test's programs (see MACHINE_CHOICES). The
    data mirror's path ends in /usr/share: upstream's test harness appends the real
    /usr/share to an XDG_DATA_DIRS that does not name one."""
    return {
        "XDG_DATA_DIRS": system_dirs_without_apps(os.path.join(root, "system", "usr", "share"), "XDG_DATA_DIRS",
                                                  "/usr/local/share:/usr/share"),
        "XDG_CONFIG_DIRS": system_dirs_without_apps(os.path.join(root, "system", "etc", "xdg"), "XDG_CONFIG_DIRS",
                                                    "/etc/xdg"),
    }


def stop_daemons_on_display(display):
    """Stops, newest first, the daemons of every open Bus that were started on X display
    @display: a test's Xvfb may end before its bus does (pytest ends fixtures in reverse),
    and a Qt/KF5 peer whose display went away dies of SIGPIPE or an X I/O error. Their exit
    statuses stay for Bus.close() to check."""
    for bus in list(OPEN_BUSES):
        for d in reversed(bus.daemons):
            if d.display == display:
                d.stop()


class Daemon:
    """A process we started; stop() ends it by PID and returns its exit status."""

    def __init__(self, argv, env, name=None, log_path=None):
        self.argv = argv
        self.name = name
        self.display = env.get("DISPLAY") if env else None
        self.log_path = log_path
        self.log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)

    def wait(self, timeout=10):
        return self.proc.wait(timeout=timeout)

    def stop(self, sig=signal_module.SIGTERM, timeout=10):
        """Ends it (once; later calls return the same status)."""
        if self.alive():
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal_module.SIGKILL)
                self.proc.wait()
        if self.log is not subprocess.DEVNULL:
            self.log.close()
            self.log = subprocess.DEVNULL
        return self.proc.returncode

    def output(self):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def connect_when_listening(address, deadline):
    """The socket file appears before dbus-daemon listens on it: retry until it answers."""
    while True:
        try:
            return Gio.DBusConnection.new_for_address_sync(
                address,
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
                None, None)
        except GLib.Error:
            if time.time() > deadline:
                raise
            time.sleep(0.01)


class Bus:
    """A private dbus-daemon with its own XDG dirs. `env` is the environment for children."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="limen-test-")
        self.runtime_dir = self._mk("runtime", 0o700)
        self.data_home = self._mk("data")
        self.config_home = self._mk("config")
        self.home = self._mk("home")
        self.cache_home = self._mk("cache")
        self.services_dir = self._mk("services")
        self.logs = self._mk("logs")
        # WirePlumber's Bluetooth monitor loads its logind plugin, which ends WirePlumber where
        # /run/systemd/seats does not exist (a fresh machine without systemd running): the
        # tests' WirePlumber runs without it (a user config file of the same name wins).
        bluetooth = self._mk("config/wireplumber/bluetooth.lua.d")
        with open(os.path.join(bluetooth, "90-enable-all.lua"), "w") as f:
            f.write("-- no Bluetooth monitor in a test session\n")
        self.daemons = []
        OPEN_BUSES.append(self)
        conf = os.path.join(self.root, "session.conf")
        with open(conf, "w") as f:
            f.write(textwrap.dedent(f"""\
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <keep_umask/>
                  <listen>unix:path={self.runtime_dir}/bus</listen>
                  <servicedir>{self.services_dir}</servicedir>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                  <limit name="max_replies_per_connection">50000</limit>
                </busconfig>
                """))
        self.address = f"unix:path={self.runtime_dir}/bus"
        self.env = dict(os.environ)
        for k in list(self.env):
            if k.startswith(("XDG_DESKTOP_PORTAL_TEST_", "DBUS_", "LIMEN_FAKE")):
                del self.env[k]
        self.env.update({
            "XDG_RUNTIME_DIR": self.runtime_dir,
            "XDG_DATA_HOME": self.data_home,
            "XDG_CONFIG_HOME": self.config_home,
            "XDG_CACHE_HOME": self.cache_home,
            "HOME": self.home,
            # Scratch files of the programs a test starts (GTK's print spool, say) go with it.
            "TMPDIR": self._mk("tmp"),
            "DBUS_SESSION_BUS_ADDRESS": self.address,
            **isolated_xdg_dirs(self.root),
            # A test build finds its validators and modules in the build tree only through
            # this (src/core/uninstalled.h); installed binaries know nothing of it.
            "LIMEN_BUILD_DIR": os.path.abspath(BUILD_DIR),
            "XDG_DESKTOP_PORTAL_DIR": self._mk("portals"),
            "XDG_CURRENT_DESKTOP": "test",
            "GIO_USE_VFS": "local",
            "GSETTINGS_BACKEND": "memory",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "LANGUAGE": "",
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=66",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=67",
        })
        self.env.pop("DISPLAY", None) if "LIMEN_KEEP_DISPLAY" not in os.environ else None
        self.bus_proc = subprocess.Popen(["dbus-daemon", "--config-file", conf, "--nofork", "--nopidfile"],
                                         env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(f"{self.runtime_dir}/bus"):
            if time.time() > deadline:
                raise RuntimeError("dbus-daemon did not start")
            time.sleep(0.01)
        self.conn = connect_when_listening(self.address, deadline)

    def start_system_bus(self):
        """A second private bus standing in for the system bus (for GIO's monitors and
        dbusmock system templates); children started afterwards see it."""
        conf = os.path.join(self.root, "system.conf")
        sock = os.path.join(self.runtime_dir, "system_bus")
        with open(conf, "w") as f:
            f.write(textwrap.dedent(f"""\
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>unix:path={sock}</listen>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>
                """))
        self.system_proc = subprocess.Popen(["dbus-daemon", "--config-file", conf, "--nofork", "--nopidfile"],
                                            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(sock):
            if time.time() > deadline:
                raise RuntimeError("system dbus-daemon did not start")
            time.sleep(0.01)
        self.system_address = f"unix:path={sock}"
        self.env["DBUS_SYSTEM_BUS_ADDRESS"] = self.system_address
        self.system_conn = connect_when_listening(self.system_address, deadline)
        return self.system_conn

    def start_dbusmock_template(self, template, system=False, params=None, wait_name=None):
        """python3 -m dbusmock --template T on our session (or system) bus."""
        argv = [python_exe(), "-m", "dbusmock", "--template", template]
        if system:
            argv.insert(3, "--system")
        if params:
            import json
            argv += ["--parameters", json.dumps(params)]
        return self.start(argv, wait_name=None if system else wait_name)

    def _mk(self, name, mode=0o755):
        path = os.path.join(self.root, name)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, mode)
        return path

    # ---- daemons -------------------------------------------------------------------
    def start(self, name, *args, env=None, wait_name=None, timeout=15):
        """Start a Limen binary (or any argv list) and wait until it owns @wait_name."""
        argv = [binary(name)] + list(args) if isinstance(name, str) else list(name)
        e = dict(self.env)
        if env:
            e.update(env)
        log = os.path.join(self.logs, f"{os.path.basename(argv[0])}-{len(self.daemons)}.log")
        d = Daemon(argv, e, name=wait_name, log_path=log)
        self.daemons.append(d)
        if wait_name:
            self.wait_for_name(wait_name, timeout=timeout, daemon=d)
        return d

    def start_portal(self, *args, env=None):
        return self.start("limen-portal", "--verbose", *args, env=env, wait_name=PORTAL_BUS_NAME)

    def wait_for_name(self, name, timeout=15, daemon=None, system=False):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.has_owner(name, system=system):
                return
            if daemon is not None and not daemon.alive():
                raise RuntimeError(f"{daemon.argv[0]} exited with {daemon.proc.returncode}:\n{daemon.output()}")
            time.sleep(0.02)
        raise TimeoutError(f"{name} did not appear on the bus")

    def wait_for_name_gone(self, name, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self.has_owner(name):
                return
            time.sleep(0.02)
        raise TimeoutError(f"{name} still on the bus")

    def has_owner(self, name, system=False):
        r = (self.system_conn if system else self.conn).call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "NameHasOwner", GLib.Variant("(s)", (name,)), GLib.VariantType("(b)"),
                                Gio.DBusCallFlags.NONE, 5000, None)
        return r.unpack()[0]

    def write_portal_file(self, source, dbus_name, interfaces, use_in=None):
        """A *.portal file in the XDG_DESKTOP_PORTAL_DIR the frontend reads."""
        path = os.path.join(self.env["XDG_DESKTOP_PORTAL_DIR"], f"{source}.portal")
        with open(path, "w") as f:
            f.write("[portal]\n")
            f.write(f"DBusName={dbus_name}\n")
            f.write("Interfaces=" + ";".join(interfaces) + ";\n")
            if use_in:
                f.write(f"UseIn={use_in}\n")
        return path

    def install_app(self, app_id):
        """ID.desktop in the private data home: an installed application, which is what
        Registry.Register requires of the id it is given. Named after its id, so that
        dialogs read the same as for an id no entry describes."""
        apps = os.path.join(self.data_home, "applications")
        os.makedirs(apps, exist_ok=True)
        path = os.path.join(apps, app_id + ".desktop")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(f"[Desktop Entry]\nType=Application\nName={app_id}\nExec=true\nNoDisplay=true\n")
        return path

    def write_service_file(self, bus_name, exec_line):
        with open(os.path.join(self.services_dir, f"{bus_name}.service"), "w") as f:
            f.write(f"[D-BUS Service]\nName={bus_name}\nExec={exec_line}\n")

    def close(self):
        if self in OPEN_BUSES:
            OPEN_BUSES.remove(self)
        statuses = []
        # The log of a daemon that ended by a signal or a sanitizer's status, kept for the
        # failure message (the test's folder goes below).
        self.bad_endings = {}
        for d in reversed(self.daemons):
            status = d.stop()
            statuses.append((d.argv[0], status))
            if status is not None and (status in (66, 67) or status < 0 and status not in (-9, -15)):
                self.bad_endings[d.argv[0]] = d.output()[-8000:]
        self.conn.close_sync(None)
        if getattr(self, "system_proc", None):
            self.system_conn.close_sync(None)
            self.system_proc.terminate()
            self.system_proc.wait(timeout=5)
        self.bus_proc.terminate()
        try:
            self.bus_proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.bus_proc.kill()
        subprocess.run(["fusermount3", "-u", "-z", os.path.join(self.runtime_dir, "doc")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.root, ignore_errors=True)
        return statuses

    # ---- calls ---------------------------------------------------------------------
    def new_connection(self):
        return Gio.DBusConnection.new_for_address_sync(
            self.address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)

    def call(self, iface, method, args=None, signature=None, *, dest=PORTAL_BUS_NAME, path=PORTAL_PATH,
             fds=None, conn=None, timeout=5000, reply_type=None):
        """Call and unpack; raises GLib.Error on a D-Bus error. @fds: list of ints."""
        conn = conn or self.conn
        params = GLib.Variant(signature, tuple(args)) if signature else None
        if fds is not None:
            fdlist = Gio.UnixFDList.new()
            for fd in fds:
                fdlist.append(fd)
            r, _ = conn.call_with_unix_fd_list_sync(dest, path, iface, method, params,
                                                    GLib.VariantType(reply_type) if reply_type else None,
                                                    Gio.DBusCallFlags.NONE, timeout, fdlist, None)
        else:
            r = conn.call_sync(dest, path, iface, method, params,
                               GLib.VariantType(reply_type) if reply_type else None,
                               Gio.DBusCallFlags.NONE, timeout, None)
        return r.unpack() if r is not None else None

    def get_property(self, iface, prop, *, dest=PORTAL_BUS_NAME, path=PORTAL_PATH, conn=None):
        return self.call("org.freedesktop.DBus.Properties", "Get", (iface, prop), "(ss)", dest=dest,
                         path=path, conn=conn)[0]

    def introspect(self, *, dest=PORTAL_BUS_NAME, path=PORTAL_PATH):
        xml = self.call("org.freedesktop.DBus.Introspectable", "Introspect", dest=dest, path=path)[0]
        return Gio.DBusNodeInfo.new_for_xml(xml)

    def interfaces(self, *, dest=PORTAL_BUS_NAME, path=PORTAL_PATH):
        return {i.name for i in self.introspect(dest=dest, path=path).interfaces}


def dbus_error_name(err):
    """The D-Bus error name of a GLib.Error from a call."""
    return Gio.DBusError.get_remote_error(err)


def pump(seconds):
    """Run the default GLib main context for @seconds (to receive signals)."""
    ctx = GLib.MainContext.default()
    end = time.time() + seconds
    while time.time() < end:
        ctx.iteration(False)
        time.sleep(0.005)


def wait_until(pred, timeout=5.0):
    ctx = GLib.MainContext.default()
    end = time.time() + timeout
    while time.time() < end:
        while ctx.pending():
            ctx.iteration(False)
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    return pred()


# ---- sandboxed callers ---------------------------------------------------------------
FLATPAK_INFO = "[Application]\nname={app_id}\n\n[Instance]\ninstance-id=1234567890\n"


def bwrap_argv(bus, binds=(), ro_binds=(), fd_num=9):
    argv = ["bwrap", "--unshare-all", "--die-with-parent",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc", "/etc",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--ro-bind", f"{bus.runtime_dir}/bus", "/run/user/0/bus",
            "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"]
    for src in binds:
        argv += ["--bind", src, src]
    for src in ro_binds:
        argv += ["--ro-bind", src, src]
    return argv


def run_sandboxed(bus, app_id, script, binds=(), ro_binds=(), flatpak_info=None, timeout=60, extra_args=(),
                  pass_fds=()):
    """Run python @script inside bwrap as Flatpak app @app_id; returns CompletedProcess.
    The script gets the limentest-free environment: only Gio/GLib from Debian's python."""
    info = flatpak_info if flatpak_info is not None else FLATPAK_INFO.format(app_id=app_id)
    r, w = os.pipe()
    here = os.path.dirname(os.path.abspath(__file__))
    argv = bwrap_argv(bus, binds=binds, ro_binds=tuple(ro_binds) + (here,)) + list(extra_args)
    if info is not False and len(info.encode()) < 32768:
        os.write(w, info.encode())
        argv += ["--ro-bind-data", str(r), "/.flatpak-info"]
    elif info is not False:
        # Larger than a pipe holds before bwrap reads it: bind a file instead.
        fd, path = tempfile.mkstemp(dir=bus.root, prefix="flatpak-info-")
        os.write(fd, info.encode())
        os.close(fd)
        argv += ["--ro-bind", path, "/.flatpak-info"]
    os.close(w)
    argv += ["/usr/bin/python3", "-c", script]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": here, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              pass_fds=(r,) + tuple(pass_fds))
    finally:
        os.close(r)


def python_exe():
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
