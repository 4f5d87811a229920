"""limen-portal ended by a signal at any moment of its start-up leaves nothing behind.

Start-up runs on two threads (the main thread connects to the bus while limen-prepare
reads the configuration and installs the signal watch; see src/core/daemon.c), so a
signal can land before the watch exists, while the connection is being made, while the
portals are exported or after the name is requested. At each of those moments the daemon
must end promptly and completely. What it does today, and what is asserted:

- before the signal watch is installed, SIGTERM/SIGINT have their default action: the
  process dies of the signal (status -SIG; systemd counts that as a clean stop too);
- from then on it leaves through its own exit path with status 0 and nothing on stderr;
- either way no thread and no child of it is left, and the bus is free of its name.

Also: a bus address whose socket does not exist is a prompt exit 1 with a message, and a
bus that accepts the connection but never answers (in the authentication, or to Hello)
does not make the daemon deaf to SIGTERM/SIGINT."""
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

import limentest
from limentest import PORTAL_BUS_NAME

RUNS = 30
MAX_DELAY = 0.060      # seconds after spawn, spread evenly over RUNS (at least: see startup_time)
EXIT_WITHIN = 5.0


def spawn(bus, env=None):
    """limen-portal in a session of its own (so that whatever it leaves can be found), its
    stderr in a file (a pipe would block the reader while a leftover holds it open)."""
    e = dict(bus.env)
    if env:
        e.update(env)
    err = tempfile.TemporaryFile(dir=bus.root)
    proc = subprocess.Popen([limentest.binary("limen-portal")], env=e, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    proc.err_file = err
    return proc


def stderr_of(proc):
    proc.err_file.seek(0)
    text = proc.err_file.read().decode("utf-8", "replace")
    proc.err_file.close()
    return text


def session_members(sid):
    """PIDs of live processes in session @sid (the daemon started one of its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the ")" that ends comm: state ppid pgrp session ...
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return found


def threads_of(pid):
    try:
        return {t: open(f"/proc/{pid}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{pid}/task")}
    except OSError:
        return {}


def end_and_check(proc, sig, delay):
    """Signal @proc @delay seconds after spawn; returns (status, stderr) or raises with why."""
    time.sleep(delay)
    proc.send_signal(sig)
    try:
        proc.wait(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        threads = threads_of(proc.pid)
        proc.kill()
        proc.wait()
        stderr_of(proc)
        raise AssertionError(f"{sig.name} at {delay * 1000:.0f} ms: still running after {EXIT_WITHIN} s; "
                             f"threads {threads}")
    err = stderr_of(proc)
    assert not os.path.exists(f"/proc/{proc.pid}"), f"/proc/{proc.pid} outlived the wait"
    left = session_members(proc.pid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{sig.name} at {delay * 1000:.0f} ms: processes left in its session: {left}"
    return proc.returncode, err


def startup_time(bus):
    """Seconds from spawn to the name on the bus, once (a slow build, e.g. with sanitizers,
    takes longer than MAX_DELAY: the delays are stretched to cover its start-up too)."""
    t0 = time.monotonic()
    proc = spawn(bus)
    limentest.wait_until(lambda: bus.has_owner(PORTAL_BUS_NAME) or proc.poll() is not None, 15)
    took = time.monotonic() - t0
    assert bus.has_owner(PORTAL_BUS_NAME), stderr_of(proc)
    end_and_check(proc, signal.SIGTERM, 0)
    bus.wait_for_name_gone(PORTAL_BUS_NAME, timeout=EXIT_WITHIN)
    return took


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_startup_leaves_nothing(bus, sig):
    outcomes = {"own exit": 0, "default action": 0}
    max_delay = max(MAX_DELAY, 1.2 * startup_time(bus))
    for i in range(RUNS):
        delay = max_delay * i / (RUNS - 1)
        status, err = end_and_check(spawn(bus), sig, delay)
        where = f"{sig.name} at {delay * 1000:.0f} ms"
        assert status in (0, -sig), f"{where}: exit status {status}, stderr:\n{err}"
        if status == 0:
            # Its own exit path: nothing to say about a requested stop.
            assert err == "", f"{where}: stderr:\n{err}"
            outcomes["own exit"] += 1
        else:
            outcomes["default action"] += 1
        # The bus drops a dead connection's names; nobody owns the portal's now.
        bus.wait_for_name_gone(PORTAL_BUS_NAME, timeout=EXIT_WITHIN)
    print(f"{sig.name}, delays up to {max_delay * 1000:.0f} ms: {outcomes}")
    # The later delays fall after the signal watch is installed: its path must have been
    # exercised, not only the default action.
    assert outcomes["own exit"] > 0, outcomes


def test_signal_once_serving_is_status_zero(bus):
    """Reference point for the above: once the name is owned, SIGTERM is a plain exit 0."""
    proc = spawn(bus)
    limentest.wait_until(lambda: bus.has_owner(PORTAL_BUS_NAME) or proc.poll() is not None, 15)
    assert bus.has_owner(PORTAL_BUS_NAME)
    status, err = end_and_check(proc, signal.SIGTERM, 0)
    assert status == 0 and err == "", err


def test_missing_bus_socket_is_a_prompt_clear_failure(bus):
    missing = os.path.join(bus.root, "no-such-dir", "bus")
    proc = spawn(bus, env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={missing}"})
    try:
        proc.wait(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("limen-portal hung on a bus address whose socket does not exist")
    err = stderr_of(proc)
    assert proc.returncode == 1, (proc.returncode, err)
    assert "session bus" in err and "No such file or directory" in err, err
    assert not session_members(proc.pid)


class SilentBus:
    """A socket standing in for the session bus that takes connections and then says nothing
    (stage "auth": a stopped dbus-daemon), or says nothing after the authentication (stage
    "hello": the daemon then waits for the reply to Hello, which GDBus cannot cancel)."""

    GUID = b"0123456789abcdef0123456789abcdef"

    def __init__(self, path, stage):
        self.stage = stage
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.peers = []
        self.began = threading.Event()
        if stage == "hello":
            threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        try:
            peer, _ = self.sock.accept()
        except OSError:
            return
        self.peers.append(peer)
        buf = b""
        while not self.began.is_set():
            data = peer.recv(4096)
            if not data:
                return
            buf += data
            while b"\r\n" in buf and not self.began.is_set():
                line, buf = buf.split(b"\r\n", 1)
                self._answer(peer, line.lstrip(b"\0"))

    def _answer(self, peer, line):
        """The client side of SASL as GDBus speaks it, EXTERNAL only."""
        if line == b"AUTH":
            peer.sendall(b"REJECTED EXTERNAL\r\n")
        elif line == b"AUTH EXTERNAL":
            peer.sendall(b"DATA\r\n")
        elif line.startswith((b"AUTH EXTERNAL ", b"DATA")):
            peer.sendall(b"OK " + self.GUID + b"\r\n")
        elif line == b"NEGOTIATE_UNIX_FD":
            peer.sendall(b"AGREE_UNIX_FD\r\n")
        elif line == b"BEGIN":
            self.began.set()        # the Hello that follows gets no reply
        else:
            peer.sendall(b"ERROR\r\n")

    def close(self):
        for peer in self.peers:
            peer.close()
        self.sock.close()


@pytest.mark.parametrize("stage", ["auth", "hello"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_while_the_bus_never_answers(bus, sig, stage):
    """Waiting on a bus that does not answer, the daemon must still end on a signal."""
    path = os.path.join(bus.runtime_dir, "silent-bus")
    silent = SilentBus(path, stage)
    try:
        proc = spawn(bus, env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={path}"})
        # Long enough for the signal watch to be in place and the connection to be waiting.
        time.sleep(0.5)
        if stage == "hello":
            assert silent.began.wait(10), "limen-portal never finished the authentication"
        assert proc.poll() is None, stderr_of(proc)
        status, err = end_and_check(proc, sig, 0)
        assert status == 0, (status, err)
        assert err == "", err
    finally:
        silent.close()
