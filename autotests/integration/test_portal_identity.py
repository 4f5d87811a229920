"""Caller identity: real bwrap sandboxes with synthesized /.flatpak-info, hostile claims, and
the XDG_DESKTOP_PORTAL_TEST_* hooks in the daemon's own environment."""
import collections
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import limentest

CALL_NETWORK = """
import sys
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
answers = set()
# Several calls: the first identifies the caller, the later ones take the worker-thread
# fast path; all must agree.
for method in ('GetStatus', 'GetAvailable', 'GetStatus', 'GetConnectivity'):
    try:
        c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                    'org.freedesktop.portal.NetworkMonitor', method, None, None, 0, 5000, None)
        answers.add('ok')
    except GLib.Error as e:
        answers.add(Gio.DBusError.get_remote_error(e))
print(' '.join(sorted(answers)))
"""

WITH_NETWORK = "[Application]\nname={app}\n\n[Context]\nshared=network;ipc;\n"


def run(bus, info, extra_args=(), app="org.example.App"):
    r = limentest.run_sandboxed(bus, app, CALL_NETWORK, flatpak_info=info, extra_args=extra_args)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_flatpak_with_network(bus):
    d = bus.start_portal()
    assert run(bus, WITH_NETWORK.format(app="org.example.App")) == "ok"
    assert "Caller" in d.output() and "a Flatpak app 'org.example.App'" in d.output()


def test_flatpak_without_network_is_refused(bus):
    bus.start_portal()
    assert run(bus, "[Application]\nname=org.example.App\n") == "org.freedesktop.portal.Error.NotAllowed"


@pytest.mark.parametrize("info", [
    "",                                                   # empty: no [Application]
    "[Runtime]\nname=org.example.Platform\n",
    "[Application]\nname=\n",
    "[Application]\nname=../../etc\n",
    "[Application]\nname=org/example/App\n[Context]\nshared=network;\n",
    "[Application]\nname=org.example..App\n[Context]\nshared=network;\n",
    "\x00\x01garbage",
])
def test_bad_flatpak_info_is_refused_not_host(bus, info):
    d = bus.start_portal()
    assert run(bus, info) == "org.freedesktop.portal.Error.NotAllowed"
    assert "Refusing caller" in d.output()
    # The daemon keeps serving everyone else.
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetAvailable")[0] in (True, False)


def test_flatpak_info_symlink_is_refused(bus, tmp_path):
    # A symlink to another app's (valid) metadata must not lend that identity.
    target = tmp_path / "other-info"
    target.write_text(WITH_NETWORK.format(app="org.example.Other"))
    bus.start_portal()
    out = run(bus, False, extra_args=("--ro-bind", str(tmp_path), str(tmp_path),
                                      "--symlink", str(target), "/.flatpak-info"))
    assert out == "org.freedesktop.portal.Error.NotAllowed"
    out = run(bus, False, extra_args=("--symlink", "/nonexistent", "/.flatpak-info"))
    assert out == "org.freedesktop.portal.Error.NotAllowed"


def test_flatpak_info_directory_is_refused(bus):
    bus.start_portal()
    out = run(bus, False, extra_args=("--dir", "/.flatpak-info"))
    assert out == "org.freedesktop.portal.Error.NotAllowed"


def test_caller_environment_changes_nothing(bus):
    bus.start_portal()
    r = limentest.run_sandboxed(
        bus, "org.example.App", CALL_NETWORK, flatpak_info="[Application]\nname=org.example.App\n",
        extra_args=("--setenv", "XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND", "host",
                    "--setenv", "FLATPAK_ID", "org.example.Host"))
    assert r.stdout.strip() == "org.freedesktop.portal.Error.NotAllowed"


def test_host_caller_unit_name(bus):
    """A host process in an app-ID scope would be identified by it; here we check the
    plain host case: no sandbox, no id, full access."""
    d = bus.start_portal()
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")[0]
    assert "is a host app" in d.output()


hooks = pytest.mark.skipif(
    "test hooks: compiled in" not in subprocess.run([limentest.binary("limen-portal"), "--version"],
                                                    capture_output=True, text=True).stdout,
    reason="built without LIMEN_TEST_HOOKS")


@hooks
def test_hook_flatpak(bus, tmp_path):
    md = tmp_path / "metadata"
    md.write_text("[Application]\nname=org.example.Hooked\n")
    d = bus.start_portal(env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "flatpak",
                              "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA": str(md)})
    assert "Test hook active" in d.output()
    # No shared=network in that metadata: the sandbox rule applies to an unsandboxed caller.
    with pytest.raises(Exception) as e:
        bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotAllowed"
    assert "a Flatpak app 'org.example.Hooked'" in d.output()


@hooks
def test_hook_malformed_metadata(bus, tmp_path):
    md = tmp_path / "metadata"
    md.write_text("this is [not a keyfile\n")
    d = bus.start_portal(env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "flatpak",
                              "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA": str(md)})
    with pytest.raises(Exception) as e:
        bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotAllowed"
    assert "Unparsable Flatpak metadata" in d.output()
    assert d.alive()


@hooks
def test_hook_snap_and_host(bus, tmp_path):
    md = tmp_path / "snap"
    md.write_text("[Snap Info]\nInstanceName=hello\nAppName=hello\nCommonID=org.example.Hello\n"
                  "DesktopFile=hello.desktop\nHasNetworkStatus=true\n")
    d = bus.start_portal(env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "snap",
                              "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA": str(md)})
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")[0]
    assert "a Snap app 'snap.hello'" in d.output()


@hooks
def test_hook_host_id(bus):
    d = bus.start_portal(env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "host",
                              "XDG_DESKTOP_PORTAL_TEST_HOST_APPID": "org.example.HostApp"})
    bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")
    assert "a host app 'org.example.HostApp'" in d.output()


# A sandboxed process connects, hands the socket to its child and exits; a host process
# then gets its pid. The child's calls must never be taken for that host process's.
PID_REUSE_SANDBOX = r"""
import os, sys, time
sys.path.insert(0, {here!r})
import rawbus
work = {work!r}
s = rawbus.connect('/run/user/0/bus')
name = rawbus.hello(s)
if os.fork() == 0:
    # The child: wait until the host has reused our parent's pid, then call. Both files are
    # written whole under another name and renamed, so the test (polling for the name to
    # exist) never reads one half-written: a slow sandbox (ASan) once showed an empty result.
    def publish(base, text):
        with open(work + '/' + base + '.tmp', 'w') as f:
            f.write(text)
            {slow_write}
        os.rename(work + '/' + base + '.tmp', work + '/' + base)
    publish('name', name)
    while not os.path.exists(work + '/go'):
        time.sleep(0.02)
    err, body = rawbus.call(s, 2, 'org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                            'org.freedesktop.portal.NetworkMonitor', 'GetStatus')
    publish('result', err or 'ok')
    os._exit(0)
os._exit(0)
"""


def test_pid_reuse_is_refused(bus, tmp_path):
    if os.geteuid() != 0 or not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        pytest.skip("needs root to steer pid allocation")
    d = bus.start_portal()
    work = str(tmp_path)
    here = os.path.dirname(os.path.abspath(__file__))
    # LIMEN_TEST_SLOW_SANDBOX_WRITE stretches each write (flush, then a pause before the file
    # is closed) to show that the test never reads a file the sandbox is still writing.
    slow = "f.flush(); time.sleep(1.0)" if os.environ.get("LIMEN_TEST_SLOW_SANDBOX_WRITE") else "pass"
    script = PID_REUSE_SANDBOX.format(here=here, work=work, slow_write=slow)
    # The app has no network permission: only a host process would get an answer.
    info = "[Application]\nname=org.example.App\n"
    r, w = os.pipe()
    os.write(w, info.encode())
    os.close(w)
    argv = limentest.bwrap_argv(bus, binds=(work,), ro_binds=(here,)) + [
        "--ro-bind-data", str(r), "/.flatpak-info", "/bin/sh", "-c",
        f"/usr/bin/python3 -c \"$0\"; while [ ! -e {work}/done ]; do sleep 0.05; done", script]
    sandbox = subprocess.Popen(argv, pass_fds=(r,), env={"PATH": "/usr/bin:/bin"})
    os.close(r)
    try:
        assert limentest.wait_until(lambda: os.path.exists(f"{work}/name"), 30)
        name = open(f"{work}/name").read()
        pid = bus.call("org.freedesktop.DBus", "GetConnectionUnixProcessID", (name,), "(s)",
                       dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
        assert limentest.wait_until(lambda: not os.path.exists(f"/proc/{pid}") or
                                    open(f"/proc/{pid}/stat").read().split()[2] == "Z", 10)
        limentest.wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 5)
        # An answered call means the daemon has seen the sandbox's connection appear (the bus
        # delivers in order); two clock ticks later a new process is unmistakably younger.
        bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")
        time.sleep(0.03)
        # Hand the pid to a fresh host process.
        impostor = None
        for _ in range(50):
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
            p = subprocess.Popen(["sleep", "60"])
            if p.pid == pid:
                impostor = p
                break
            p.kill()
            p.wait()
        if impostor is None:
            pytest.skip("could not steer the pid")
        try:
            open(f"{work}/go", "w").close()
            assert limentest.wait_until(lambda: os.path.exists(f"{work}/result"), 30)
            assert open(f"{work}/result").read() == "org.freedesktop.portal.Error.NotAllowed"
            assert "pid reused" in d.output()
        finally:
            impostor.kill()
            impostor.wait()
    finally:
        open(f"{work}/done", "w").close()
        sandbox.wait(timeout=10)


def test_held_new_caller_is_served_as_itself(bus):
    """While the bus is asked who a new peer is (held 1.5 s here by a test hook), limen-portal
    serves the peers it knows; the held calls then run as the sandboxed app that sent them —
    refused for lack of network access, never answered as if from the host."""
    d = bus.start_portal(env={"LIMEN_TEST_IDENTIFY_DELAY_MS": "1500"})
    known = bus.new_connection()
    t0 = time.monotonic()
    bus.call("org.freedesktop.portal.NetworkMonitor", "GetAvailable", conn=known, timeout=20000)
    assert time.monotonic() - t0 >= 1.4          # the hook holds every new peer, this one too

    result = {}

    def sandboxed():
        t = time.monotonic()
        result["out"] = run(bus, "[Application]\nname=org.example.App\n")
        result["took"] = time.monotonic() - t

    th = threading.Thread(target=sandboxed)
    th.start()
    slowest = 0.0
    while th.is_alive():
        # Not a worker-thread fast-path method: this one needs the main thread.
        t = time.monotonic()
        bus.call("org.freedesktop.DBus.Properties", "Get",
                 ("org.freedesktop.portal.NetworkMonitor", "version"), "(ss)", conn=known)
        slowest = max(slowest, time.monotonic() - t)
        time.sleep(0.05)
    th.join()
    assert result["out"] == "org.freedesktop.portal.Error.NotAllowed"
    assert result["took"] >= 1.4, result                  # its first call was held
    assert slowest < 1.0, slowest                         # the known peer never waited for it
    assert "a Flatpak app 'org.example.App'" in d.output()


# One sandboxed parent that, on each "spawn", forks a caller: it connects, sends a portal call
# without waiting for the answer and learns its own pid from the bus (which answers in order,
# so the call has been routed by then); the test kills it, and the parent reaps it at once.
RACE_SANDBOX = r"""
import os, signal, sys
sys.path.insert(0, {here!r})
from gi.repository import Gio, GLib
import rawbus
cmd = open({work!r} + '/cmd')
ack = open({work!r} + '/ack', 'w')
for line in cmd:
    if line.strip() != 'spawn':
        break
    child = os.fork()
    if child == 0:
        s = rawbus.connect('/run/user/0/bus')
        name = rawbus.hello(s)
        m = Gio.DBusMessage.new_method_call('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                                            'org.freedesktop.portal.NetworkMonitor', 'GetStatus')
        m.set_serial(2)
        s.sendall(m.to_blob(Gio.DBusCapabilityFlags.NONE))
        err, body = rawbus.call(s, 3, 'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                                'GetConnectionUnixProcessID', GLib.Variant('(s)', (name,)))
        ack.write('%s %d\n' % (name, body.unpack()[0]))
        ack.flush()
        while True:
            signal.pause()
    os.waitpid(child, 0)
    ack.write('reaped\n')
    ack.flush()
"""

TICK = 1.0 / os.sysconf("SC_CLK_TCK")


def _after_tick_boundary():
    """Returns just after the boot-time clock (/proc/PID/stat's start time) enters a new tick."""
    now = int(time.clock_gettime(time.CLOCK_BOOTTIME) / TICK)
    while int(time.clock_gettime(time.CLOCK_BOOTTIME) / TICK) == now:
        pass


def _start_tick(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def _steer_pid(pid):
    """A host process with @pid (the last one freed), or None when another process took it."""
    for _ in range(10):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(["sleep", "60"])
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    return None


def test_exited_caller_whose_pid_a_host_process_got_is_never_host(bus, tmp_path):
    """The race of issue 39: a sandboxed caller sends a call and exits, the bus still names its
    pid when asked, and a host process has that pid by the time /proc is read, started within
    the clock tick in which the daemon saw the caller arrive. Forced here by holding the daemon
    (SIGSTOP) while the caller connects, then the bus while the daemon asks it who the caller
    is, the caller is killed and a host process is given its pid (ns_last_pid) right after.
    The caller must never be taken for that host process."""
    if os.geteuid() != 0 or not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        pytest.skip("needs root to steer pid allocation")
    d = bus.start_portal()
    work = str(tmp_path)
    here = os.path.dirname(os.path.abspath(__file__))
    os.mkfifo(f"{work}/cmd")
    os.mkfifo(f"{work}/ack")
    r, w = os.pipe()
    os.write(w, b"[Application]\nname=org.example.App\n")
    os.close(w)
    argv = limentest.bwrap_argv(bus, binds=(work,), ro_binds=(here,)) + [
        "--ro-bind-data", str(r), "/.flatpak-info", "/usr/bin/python3", "-c",
        RACE_SANDBOX.format(here=here, work=work)]
    sandbox = subprocess.Popen(argv, pass_fds=(r,), env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    os.close(r)
    cmd = open(f"{work}/cmd", "w", buffering=1)
    ack = open(f"{work}/ack")
    daemon_pid, bus_pid = d.pid, bus.bus_proc.pid
    known = bus.new_connection()
    names, same_tick, tries, impostor = [], 0, 0, None
    started = time.monotonic()
    try:
        while tries < 300 and time.monotonic() - started < 50:
            tries += 1
            os.kill(daemon_pid, signal.SIGSTOP)
            cmd.write("spawn\n")
            name, pid = ack.readline().split()
            pid = int(pid)
            names.append(name)
            os.kill(bus_pid, signal.SIGSTOP)
            _after_tick_boundary()
            tick = int(time.clock_gettime(time.CLOCK_BOOTTIME) / TICK)
            # The daemon reads the caller's arrival and call now and asks the stopped bus.
            os.kill(daemon_pid, signal.SIGCONT)
            time.sleep(0.002)
            os.kill(pid, signal.SIGKILL)
            assert ack.readline().strip() == "reaped"
            impostor = _steer_pid(pid)
            same_tick += impostor is not None and _start_tick(pid) == tick
            os.kill(bus_pid, signal.SIGCONT)
            # A few round trips through the daemon's main loop: its verdict is in by then.
            for _ in range(4):
                bus.call("org.freedesktop.DBus.Properties", "Get",
                         ("org.freedesktop.portal.NetworkMonitor", "version"), "(ss)", conn=known)
            if impostor is not None:
                impostor.kill()
                impostor.wait()
                impostor = None
            assert f"Caller {name} is a host app" not in d.output()
    finally:
        os.kill(bus_pid, signal.SIGCONT)
        os.kill(daemon_pid, signal.SIGCONT)
        if impostor is not None:
            impostor.kill()
            impostor.wait()
        try:
            cmd.write("quit\n")
            cmd.close()
            sandbox.wait(timeout=10)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            sandbox.kill()          # bwrap's --die-with-parent ends the sandbox with it
            sandbox.wait()
    log = d.output()
    taken = [n for n in names if f"Caller {n} is a host app" in log]
    assert not taken, f"{len(taken)} of {tries} exited callers taken for the host process that got their pid"
    # The race was run: pids were handed over within the tick, and the daemon got some from the bus.
    reached = sum(f"Refusing caller {n} " in log or f"Refusing caller {n}:" in log for n in names)
    reasons = collections.Counter(re.sub(r":1\.\d+|\d+", "N", line.split("Refusing caller", 1)[1].split(": ", 1)[1])
                                  for line in log.splitlines() if "Refusing caller :" in line)
    print(f"{tries} tries, {same_tick} pids handed to a host process within the tick, "
          f"{reached} refused after the bus named the pid: {dict(reasons)}")
    assert same_tick > 0
    assert reached > 0
