"""Background version 2 through limen-portal: SetStatus (sandboxed callers only, one line of at
most 96 characters) and the org.freedesktop.background.Monitor listing of sandboxed instances
without windows, from callers that set a status and from Flatpak's instance folders, with the
window states of the Background backend (dbusmock, templates/background.py)."""
import fcntl
import json
import os
import shutil
import subprocess

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

BG = "org.freedesktop.portal.Background"
MON_NAME = "org.freedesktop.background.Monitor"
MON_PATH = "/org/freedesktop/background/monitor"
APP = "org.example.Bg"
INSTANCE = "1234567890"   # limentest.FLATPAK_INFO's instance-id
INVALID = "org.freedesktop.portal.Error.InvalidArgument"


@pytest.fixture
def bg(bus):
    backend = rh.setup(bus, ["background", "access"])
    bus.wait_for_name(MON_NAME)
    return backend


def apps(bus):
    return bus.get_property(MON_NAME, "BackgroundApps", dest=MON_NAME, path=MON_PATH)


def set_app_state(bus, states, emit=True):
    bus.call(rh.CONTROL_IFACE, "SetAppState", ({k: v("u", s) for k, s in states.items()}, emit), "(a{sv}b)",
             dest=rh.BACKEND_NAME)


# The sandboxed app: SetStatus calls given as JSON, each answered "ok" or the error's name,
# and the monitor's listing as the app itself reads it afterwards.
SANDBOX = r'''
import json, sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
out = []
for opts in json.loads(sys.argv[1]):
    args = GLib.Variant("(a{sv})", ({k: GLib.Variant(t, x) for k, (t, x) in opts.items()},))
    try:
        bus.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                      "org.freedesktop.portal.Background", "SetStatus", args, None, 0, 10000, None)
        out.append("ok")
    except GLib.Error as e:
        out.append(Gio.DBusError.get_remote_error(e))
r = bus.call_sync("org.freedesktop.background.Monitor", "/org/freedesktop/background/monitor",
                  "org.freedesktop.DBus.Properties", "Get",
                  GLib.Variant("(ss)", ("org.freedesktop.background.Monitor", "BackgroundApps")),
                  None, 0, 10000, None)
print(json.dumps({"calls": out, "apps": r.unpack()[0]}))
'''


def sandboxed_set_status(bus, calls, app_id=APP, **kw):
    script = SANDBOX.replace("sys.argv[1]", repr(json.dumps(calls)))
    p = limentest.run_sandboxed(bus, app_id, script, **kw)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_versions_and_empty_listing(bus, bg):
    assert bus.get_property(BG, "version") == 2
    assert bus.get_property(MON_NAME, "version", dest=MON_NAME, path=MON_PATH) == 1
    assert apps(bus) == []


def test_host_caller_is_not_allowed(bus, bg):
    with pytest.raises(GLib.Error) as e:
        bus.call(BG, "SetStatus", ({"message": v("s", "Syncing")},), "(a{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"
    assert "sandboxed" in e.value.message
    assert apps(bus) == []


def test_sandboxed_status_is_listed_until_the_app_leaves(bus, bg):
    r = sandboxed_set_status(bus, [{"message": ["s", "Syncing 3 files"]}])
    assert r["calls"] == ["ok"]
    assert r["apps"] == [{"app_id": APP, "instance": INSTANCE, "message": "Syncing 3 files"}]
    # The app left the bus with its sandbox: no longer running, no longer listed.
    assert limentest.wait_until(lambda: apps(bus) == [], 5)


def test_bad_messages_are_refused_and_the_last_good_one_stays(bus, bg):
    calls = [
        {"message": ["s", "x" * 96]},                 # at the limit: taken
        {"message": ["s", "y" * 97]},                 # one character too many
        {"message": ["s", "ü" * 97]},                 # counted in characters, not bytes
        {"message": ["s", "two\nlines"]},
        {"message": ["i", 5]},                        # wrong type
        {"message": ["as", ["a"]]},
        {"unknown": ["s", "dropped"]},                # no message: the status line goes
        {"message": ["s", "ä" * 96]},                 # 192 bytes, 96 characters: taken
    ]
    r = sandboxed_set_status(bus, calls)
    assert r["calls"] == ["ok", INVALID, INVALID, INVALID, INVALID, INVALID, "ok", "ok"]
    assert r["apps"] == [{"app_id": APP, "instance": INSTANCE, "message": "ä" * 96}]
    # The daemon keeps serving.
    assert bus.get_property(BG, "version") == 2
    assert bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)") is not None


def test_status_without_message_lists_the_app_without_one(bus, bg):
    r = sandboxed_set_status(bus, [{}])
    assert r == {"calls": ["ok"], "apps": [{"app_id": APP, "instance": INSTANCE}]}


def test_app_with_windows_is_not_listed(bus, bg):
    set_app_state(bus, {APP: 1, "org.example.Other": 2}, emit=False)
    r = sandboxed_set_status(bus, [{"message": ["s", "Playing"]}])
    assert r == {"calls": ["ok"], "apps": []}
    set_app_state(bus, {APP: 2}, emit=False)
    assert sandboxed_set_status(bus, [{"message": ["s", "Playing"]}])["apps"] == []


def test_sandbox_without_instance_id_fails_clearly(bus, bg):
    info = f"[Application]\nname={APP}\n"
    r = sandboxed_set_status(bus, [{"message": ["s", "x"]}], flatpak_info=info)
    assert r == {"calls": ["org.freedesktop.portal.Error.Failed"], "apps": []}


def test_backend_gone_fails_clearly_and_daemon_serves(bus, bg):
    bg.kill()
    bus.wait_for_name_gone(rh.BACKEND_NAME)
    r = sandboxed_set_status(bus, [{"message": ["s", "x"]}])
    assert r == {"calls": ["org.freedesktop.portal.Error.Failed"], "apps": []}
    assert bus.get_property(BG, "version") == 2


def make_instance(bus, instance, app_id, pid=None):
    d = os.path.join(bus.runtime_dir, ".flatpak", instance)
    os.makedirs(d)
    with open(os.path.join(d, "info"), "w") as f:
        f.write(f"[Application]\nname={app_id}\n\n[Instance]\ninstance-id={instance}\n")
    if pid is not None:
        with open(os.path.join(d, "bwrapinfo.json"), "w") as f:
            f.write('{\n    "child-pid": %d,\n    "mnt-namespace": 4026532\n}\n' % pid)
    return d


def hold_ref(d):
    """Flatpak's read lock on the instance's .ref, held by this process until closed."""
    path = os.path.join(d, ".ref")
    open(path, "w").close()
    ref = open(path, "r")
    fcntl.lockf(ref, fcntl.LOCK_SH)
    return ref


def test_flatpak_instance_folders_follow_window_states(bus, bg):
    # Flatpak holds a read lock on .ref while the instance runs.
    d = make_instance(bus, "4242", "org.example.Dir")
    ref = hold_ref(d)
    entry = {"app_id": "org.example.Dir", "instance": "4242"}
    assert limentest.wait_until(lambda: apps(bus) == [entry], 5)
    set_app_state(bus, {"org.example.Dir": 1})
    assert limentest.wait_until(lambda: apps(bus) == [], 5)
    set_app_state(bus, {})
    assert limentest.wait_until(lambda: apps(bus) == [entry], 5)
    # The instance ended (lock released): gone at the next refresh.
    ref.close()
    set_app_state(bus, {})
    assert limentest.wait_until(lambda: apps(bus) == [], 5)
    shutil.rmtree(d)


def test_instance_folder_without_ref_goes_by_its_pid(bus, bg):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        make_instance(bus, "777", "org.example.Pid", pid=sleeper.pid)
        make_instance(bus, "778", "org.example.Dead", pid=2 ** 22 + 7)   # above pid_max: not running
        make_instance(bus, "not-a-number", "org.example.Bad", pid=sleeper.pid)
        entry = {"app_id": "org.example.Pid", "instance": "777"}
        assert limentest.wait_until(lambda: apps(bus) == [entry], 5)
    finally:
        sleeper.kill()
        sleeper.wait()
    set_app_state(bus, {})
    assert limentest.wait_until(lambda: apps(bus) == [], 5)


def test_status_of_a_running_flatpak_instance_stays_while_it_runs(bus, bg):
    d = make_instance(bus, INSTANCE, APP)
    ref = hold_ref(d)
    assert limentest.wait_until(lambda: apps(bus) == [{"app_id": APP, "instance": INSTANCE}], 5)
    r = sandboxed_set_status(bus, [{"message": ["s", "Downloading"]}])
    assert r["apps"] == [{"app_id": APP, "instance": INSTANCE, "message": "Downloading"}]
    # The caller left the bus, the instance runs on (its folder says so): still listed.
    set_app_state(bus, {})
    limentest.pump(0.5)
    assert apps(bus) == [{"app_id": APP, "instance": INSTANCE, "message": "Downloading"}]
    # Another app cannot speak for this instance.
    r = sandboxed_set_status(bus, [{"message": ["s", "x"]}], app_id="org.example.Liar")
    assert r["calls"] == ["org.freedesktop.portal.Error.Failed"]
    ref.close()
    set_app_state(bus, {})
    assert limentest.wait_until(lambda: apps(bus) == [], 5)
