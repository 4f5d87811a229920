"""Usb portal v1 (limen-portal) on umockdev devices: what a bwrap-sandboxed Flatpak app may
see from its [USB Devices] group, acquiring a device through a test backend and reading the
fd, the answer kept in the permission store, ReleaseDevices, DeviceEvents to the session
owner only, and hostile input; at the end, limen-kde's dialog on Xvfb (driven with xdotool,
photographed in English at 100% and German at 200%)."""

import os
import threading
import time

import pytest

import limentest
import request_helpers
import usb_helpers
from limentest import Gio, GLib

IFACE = usb_helpers.IFACE
STORE = "org.freedesktop.impl.portal.PermissionStore"
STORE_PATH = "/org/freedesktop/impl/portal/PermissionStore"
REGISTRY = "org.freedesktop.host.portal.Registry"
APP = "org.example.Flasher"
HOST_APP = "org.example.HostFlasher"

# Device events need the testbed's uevents, which only a process under umockdev-wrapper sends.
needs_uevents = pytest.mark.skipif("umockdev-preload" not in os.environ.get("LD_PRELOAD", ""),
                                   reason="run under umockdev-wrapper (ctest does)")

request_helpers.IMPL["usb"] = "org.freedesktop.impl.portal.Usb"


@pytest.fixture
def tb():
    t = usb_helpers.Testbed()
    try:
        yield t
    finally:
        t.close()


def portal_env(bus, tb):
    """limen-portal alone sees the testbed (and, in a sanitizer build, lets the preload go first)."""
    return dict(tb.env(), ASAN_OPTIONS=bus.env["ASAN_OPTIONS"] + ":verify_asan_link_order=0")


@pytest.fixture(autouse=True)
def no_preload_for_others(bus):
    """Under umockdev-wrapper the other daemons must not inherit the preload."""
    bus.env.pop("LD_PRELOAD", None)


def start(bus, tb, backend=True):
    """Permission store, the Usb test backend and limen-portal seeing the testbed."""
    request_helpers.start_documents(bus)
    return request_helpers.setup(bus, ["usb"], portal_env=portal_env(bus, tb), start_backend=backend)


def portal_fds_on(bus, tb, devnode):
    """How many fds limen-portal holds open on @devnode (umockdev's file behind it)."""
    pid = [d for d in bus.daemons if "limen-portal" in d.argv[0]][0].pid
    target = os.path.realpath(tb.root + devnode)
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.path.realpath(os.readlink(f"/proc/{pid}/fd/{fd}")) == target:
                n += 1
        except OSError:
            pass
    return n


class Host:
    """A host caller on its own connection, registered as HOST_APP (so answers are kept)."""

    def __init__(self, bus, app_id=HOST_APP):
        self.bus = bus
        self.conn = bus.new_connection()
        self.client = request_helpers.Client(bus, self.conn)
        if app_id:
            bus.install_app(app_id)
            bus.call(REGISTRY, "Register", (app_id, {}), "(sa{sv})", conn=self.conn)
        self.events = []
        self.conn.signal_subscribe(None, IFACE, "DeviceEvents", None, None, Gio.DBusSignalFlags.NONE,
                                   lambda c, s, p, i, n, params: self.events.append(params.unpack()))

    def call(self, method, args, sig, **kw):
        return self.bus.call(IFACE, method, args, sig, conn=self.conn, **kw)

    def enumerate(self):
        return dict(self.call("EnumerateDevices", ({},), "(a{sv})")[0])

    def acquire(self, devices, token="a1"):
        devs = [(d, {"writable": GLib.Variant("b", w)}) for d, w in devices]
        return self.client.start(IFACE, "AcquireDevices", ("", devs, {"handle_token": GLib.Variant("s", token)}),
                                 "(sa(sa{sv})a{sv})")

    def finish(self, handle):
        """FinishAcquireDevices until finished: [(id, result dict with 'fd' an int fd)]."""
        got = []
        while True:
            params = GLib.Variant("(oa{sv})", (handle, {}))
            reply, fds = self.conn.call_with_unix_fd_list_sync(
                limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, IFACE, "FinishAcquireDevices", params, None,
                Gio.DBusCallFlags.NONE, 5000, None, None)
            results, finished = reply.unpack()
            for dev_id, res in results:
                if res.get("success"):
                    res["fd"] = fds.get(res["fd"])
                got.append((dev_id, res))
            if finished:
                return got


def store_lookup(bus, dev_id):
    """The stored permissions of (usb, @dev_id); {} when there is no entry."""
    try:
        perms, _ = bus.call(STORE, "Lookup", ("usb", dev_id), "(ss)",
                            dest="org.freedesktop.impl.portal.PermissionStore", path=STORE_PATH)
    except GLib.Error as e:
        assert limentest.dbus_error_name(e) == "org.freedesktop.portal.Error.NotFound"
        return {}
    return perms


def store_set(bus, app_id, id_, value):
    bus.call(STORE, "SetPermission", ("usb", True, id_, app_id, [value]), "(sbssas)",
             dest="org.freedesktop.impl.portal.PermissionStore", path=STORE_PATH)


def by_serial(devices):
    return {info["properties"]["ID_SERIAL"]: dev_id for dev_id, info in devices.items()}


def three_devices(tb):
    a = tb.add("1234", "5678", serial="Acme_Key_A")                 # allowed
    b = tb.add("1234", "9999", serial="Acme_Hidden_B")              # hidden by vnd+dev
    c = tb.add("abcd", "0001", cls="03", serial="Other_Hid_C")      # another vendor, HID
    return a, b, c


# ---- enumeration --------------------------------------------------------------------------

def test_sandboxed_app_sees_only_allowed_devices(bus, tb):
    a, b, c = three_devices(tb)
    start(bus, tb)
    info = usb_helpers.flatpak_info(APP, enumerable="vnd:1234;", hidden="vnd:1234+dev:9999;")
    out = usb_helpers.run_in_sandbox(bus, APP, [["enumerate"]], info=info)
    assert out[0][0] == "devices", out
    devices = dict(out[0][1])
    assert [i["properties"]["ID_SERIAL"] for i in devices.values()] == ["Acme_Key_A"]
    (dev_id, info_a), = devices.items()
    assert len(dev_id) == 36 and "1234" not in dev_id
    assert info_a["device-file"] == a[1]
    assert info_a["readable"] is True
    assert info_a["properties"]["ID_VENDOR_ID"] == "1234"
    # Only the fixed set of udev properties travels.
    assert set(info_a["properties"]) <= {"ID_MODEL_ID", "ID_MODEL_ENC", "ID_MODEL_FROM_DATABASE", "ID_SERIAL",
                                         "ID_VENDOR_ENC", "ID_VENDOR_ID", "ID_VENDOR_FROM_DATABASE", "ID_REVISION",
                                         "ID_SERIAL_SHORT", "ID_TYPE", "ID_INPUT_JOYSTICK"}

    # Hidden wins over "all"; a class rule.
    info = usb_helpers.flatpak_info(APP, enumerable="all;", hidden="cls:03:*;")
    out = usb_helpers.run_in_sandbox(bus, APP, [["enumerate"]], info=info)
    assert sorted(i["properties"]["ID_SERIAL"] for i in dict(out[0][1]).values()) == ["Acme_Hidden_B", "Acme_Key_A"]
    info = usb_helpers.flatpak_info(APP, enumerable="cls:03:00;vnd:zz;dev:5678;")
    out = usb_helpers.run_in_sandbox(bus, APP, [["enumerate"]], info=info)
    assert [i["properties"]["ID_SERIAL"] for i in dict(out[0][1]).values()] == ["Other_Hid_C"]
    # The entitlement data group (flatpak --add-policy=org.freedesktop.portal.Usb.Devices.…)
    # is merged with [USB Devices]: its enumerable query adds a device, its hidden one hides.
    info = usb_helpers.flatpak_info(APP, enumerable="cls:03:00;") + \
        "\n[Policy org.freedesktop.portal.Usb.Devices]\nenumerable-devices=vnd:1234;\nhidden-devices=vnd:1234+dev:9999;\n"
    out = usb_helpers.run_in_sandbox(bus, APP, [["enumerate"]], info=info)
    assert sorted(i["properties"]["ID_SERIAL"] for i in dict(out[0][1]).values()) == ["Acme_Key_A", "Other_Hid_C"]

    # A host app sees every device.
    assert sorted(by_serial(Host(bus).enumerate())) == ["Acme_Hidden_B", "Acme_Key_A", "Other_Hid_C"]


def test_sandbox_without_usb_rules_gets_nothing(bus, tb):
    three_devices(tb)
    backend = start(bus, tb)
    # --device=all does not open the portal: only the [USB Devices] group does.
    info = usb_helpers.flatpak_info(APP, devices="all;usb;")
    host_ids = list(Host(bus).enumerate())
    out = usb_helpers.run_in_sandbox(bus, APP, [["enumerate"], ["session"], ["pump", 0.5], ["events"],
                                                ["acquire", [[host_ids[0], False]], "x1"]], info=info)
    assert out[0] == ["devices", []]
    assert out[1][0] == "session"
    # No device to tell of: no DeviceEvents at all, not an empty one.
    assert out[2] == ["events", []], out
    assert out[3][0] == "error" and out[3][1] == "org.freedesktop.portal.Error.InvalidArgument"
    assert backend.requests("AcquireDevices") == []


# ---- acquiring ----------------------------------------------------------------------------

def test_sandboxed_acquire_reads_fd_and_remembers(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host_ids = by_serial(Host(bus).enumerate())
    info = usb_helpers.flatpak_info(APP, enumerable="vnd:1234;", hidden="vnd:1234+dev:9999;")
    dev_a = host_ids["Acme_Key_A"]
    out = usb_helpers.run_in_sandbox(bus, APP, [["acquire", [[dev_a, False]], "x1"],
                                                ["acquire", [[dev_a, True]], "x2"],
                                                ["release", [dev_a]],
                                                ["release", [dev_a]],
                                                ["acquire", [[host_ids["Acme_Hidden_B"], False]], "x3"]], info=info)
    assert out[0] == ["response", 0], out
    assert out[1][0] == "finished"
    (got,) = out[1][1]
    assert got["id"] == dev_a and got["success"] is True
    assert got["data"].encode() == a[2]
    assert got["mode"] == os.O_RDONLY
    # The backend was asked once, with the device's information and the access wanted.
    (args,) = backend.args("AcquireDevices")
    (dev,) = args[1]
    assert dev[0] == dev_a and dev[1]["device-file"] == a[1] and dev[2] == {"writable": False}
    # Allowed before: granted again without asking, this time read-write.
    assert out[2] == ["response", 0]
    assert out[3][1][0]["success"] is True and out[3][1][0]["mode"] == os.O_RDWR
    assert len(backend.requests("AcquireDevices")) == 1
    assert out[4] == ["released", True]
    assert out[5][0] == "error" and out[5][1] == "org.freedesktop.portal.Error.InvalidArgument"
    # A hidden device cannot be asked for, even by its id.
    assert out[6][0] == "error" and out[6][1] == "org.freedesktop.portal.Error.InvalidArgument"
    assert "not available" in out[6][2]
    assert len(backend.requests("AcquireDevices")) == 1
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {APP: ["yes"]}


def test_denial_is_remembered(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    ids = by_serial(host.enumerate())
    # The person grants nothing (limen-kde's "Deny"): response 0, as from the reference, and
    # FinishAcquireDevices has nothing to hand over.
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("a(sa{sv})", [])})
    handle, pending = host.acquire([(ids["Other_Hid_C"], True), (ids["Acme_Key_A"], False)])
    assert pending.wait() == (0, {})
    assert store_lookup(bus, "device:abcd/0001/Other_Hid_C") == {HOST_APP: ["no"]}
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {HOST_APP: ["no"]}
    assert host.finish(handle) == []
    # Finished: the handle is spent, and the refused devices are gone from the app's view.
    with pytest.raises(GLib.Error) as e:
        host.finish(handle)
    assert "InvalidArgument" in limentest.dbus_error_name(e.value)
    assert sorted(by_serial(host.enumerate())) == ["Acme_Hidden_B"]
    with pytest.raises(GLib.Error) as e:
        host.acquire([(ids["Acme_Key_A"], False)], token="a2")
    assert "InvalidArgument" in limentest.dbus_error_name(e.value)
    assert len(backend.requests("AcquireDevices")) == 1
    # A partial answer: what the backend left out is refused, the rest granted read-only.
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("a(sa{sv})", [(ids["Acme_Hidden_B"], {})])})
    handle, pending = host.acquire([(ids["Acme_Hidden_B"], True)], token="a3")
    assert pending.wait() == (0, {})
    ((dev_id, res),) = host.finish(handle)
    assert res["success"] and os.read(res["fd"], 100) == b[2]
    import fcntl
    assert fcntl.fcntl(res["fd"], fcntl.F_GETFL) & 3 == os.O_RDONLY
    os.close(res["fd"])


def test_blanket_permission_shuts_the_portal(bus, tb):
    three_devices(tb)
    start(bus, tb)
    store_set(bus, HOST_APP, "usb", "no")
    host = Host(bus)
    for method, args, sig in (("EnumerateDevices", ({},), "(a{sv})"),
                              ("CreateSession", ({"session_handle_token": GLib.Variant("s", "s")},), "(a{sv})")):
        with pytest.raises(GLib.Error) as e:
            host.call(method, args, sig)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotAllowed"
    # Another app is unaffected.
    assert len(Host(bus, "org.example.Other").enumerate()) == 3


def test_store_changes_are_seen_at_once(bus, tb):
    """The frontend caches the store's answers; a change made by anyone else reaches it."""
    three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    ids = by_serial(host.enumerate())
    store_set(bus, HOST_APP, "device:abcd/0001/Other_Hid_C", "no")
    limentest.wait_until(lambda: "Other_Hid_C" not in by_serial(host.enumerate()), 5)
    assert sorted(by_serial(host.enumerate())) == ["Acme_Hidden_B", "Acme_Key_A"]
    store_set(bus, HOST_APP, "device:1234/5678/Acme_Key_A", "yes")
    limentest.pump(0.3)   # the store's Changed signal reaches limen-portal
    handle, pending = host.acquire([(ids["Acme_Key_A"], False)])
    assert pending.wait() == (0, {})
    assert backend.requests("AcquireDevices") == []   # allowed before: nobody asked
    ((_, res),) = host.finish(handle)
    os.close(res["fd"])
    store_set(bus, HOST_APP, "usb", "no")
    limentest.pump(0.3)   # the store's Changed signal reaches limen-portal
    with pytest.raises(GLib.Error) as e:
        host.enumerate()
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotAllowed"


def test_many_devices_come_in_batches(bus, tb):
    for i in range(11):
        tb.add("1234", f"{i:04x}", serial=f"Batch_{i}")
    start(bus, tb)
    host = Host(bus)
    ids = list(host.enumerate())
    assert len(ids) == 11
    handle, pending = host.acquire([(d, False) for d in ids])
    assert pending.wait() == (0, {})
    batches = []
    while True:
        reply, fds = host.conn.call_with_unix_fd_list_sync(
            limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, IFACE, "FinishAcquireDevices",
            GLib.Variant("(oa{sv})", (handle, {})), None, Gio.DBusCallFlags.NONE, 5000, None, None)
        results, finished = reply.unpack()
        batches.append(len(results))
        assert fds.get_length() == len(results)
        if finished:
            break
    assert batches == [8, 3]


def test_release_and_leaving_close_the_portals_fds(bus, tb):
    a, b, c = three_devices(tb)
    start(bus, tb)
    host = Host(bus)
    ids = by_serial(host.enumerate())
    handle, pending = host.acquire([(ids["Acme_Key_A"], False), (ids["Other_Hid_C"], False)])
    assert pending.wait() == (0, {})
    for _, res in host.finish(handle):
        os.close(res["fd"])
    # The copies sent with the reply go once GDBus's worker has sent it: one fd each stays.
    one_each = lambda: portal_fds_on(bus, tb, a[1]) == 1 and portal_fds_on(bus, tb, c[1]) == 1  # noqa: E731
    assert limentest.wait_until(one_each, 5)
    host.call("ReleaseDevices", ([ids["Acme_Key_A"]], {}), "(asa{sv})")
    assert portal_fds_on(bus, tb, a[1]) == 0 and portal_fds_on(bus, tb, c[1]) == 1
    host.conn.close_sync(None)
    limentest.wait_until(lambda: portal_fds_on(bus, tb, c[1]) == 0, 5)
    assert portal_fds_on(bus, tb, c[1]) == 0


def test_one_acquisition_at_a_time_and_close(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    ids = by_serial(host.enumerate())
    backend.set_response("AcquireDevices", 0, {}, -1)     # the dialog stays up
    handle, pending = host.acquire([(ids["Acme_Key_A"], False)])
    limentest.wait_until(lambda: backend.requests("AcquireDevices"), 5)
    with pytest.raises(GLib.Error) as e:
        host.acquire([(ids["Other_Hid_C"], False)], token="a2")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    # The app closes its Request: the backend's is closed, and the app may ask again.
    bus.call("org.freedesktop.portal.Request", "Close", path=handle, conn=host.conn)
    limentest.wait_until(lambda: backend.closed(), 5)
    assert backend.closed() == [handle]
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("a(sa{sv})", [
        (ids["Other_Hid_C"], {"writable": GLib.Variant("b", True)})])})
    handle, pending = host.acquire([(ids["Other_Hid_C"], False)], token="a3")
    assert pending.wait() == (0, {})
    ((_, res),) = host.finish(handle)
    import fcntl
    # The backend cannot grant more than was asked.
    assert fcntl.fcntl(res["fd"], fcntl.F_GETFL) & 3 == os.O_RDONLY
    os.close(res["fd"])
    # Nothing was stored for the closed request.
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {}


# ---- sessions and events ------------------------------------------------------------------

@needs_uevents
def test_device_events_reach_the_session_owner_only(bus, tb):
    a, b, c = three_devices(tb)
    start(bus, tb)
    owner = Host(bus)
    other = Host(bus, "org.example.Other")   # subscribed, but has no session
    session = owner.call("CreateSession", ({"session_handle_token": GLib.Variant("s", "s1")},), "(a{sv})")[0]
    limentest.wait_until(lambda: owner.events, 5)
    ((path, first),) = owner.events
    assert path == session
    assert sorted(e[2]["properties"]["ID_SERIAL"] for e in first) == ["Acme_Hidden_B", "Acme_Key_A", "Other_Hid_C"]
    assert {e[0] for e in first} == {"add"}
    d = tb.add("5555", "0002", serial="Plugged_D")
    limentest.wait_until(lambda: len(owner.events) == 2, 5)
    (path, ev), = owner.events[1:]
    assert ev[0][0] == "add" and ev[0][2]["properties"]["ID_SERIAL"] == "Plugged_D"
    new_id = ev[0][1]
    assert new_id in owner.enumerate()
    tb.remove(d[0])
    limentest.wait_until(lambda: len(owner.events) == 3, 5)
    assert owner.events[2][1][0][:2] == ("remove", new_id)
    assert new_id not in owner.enumerate()
    limentest.pump(0.3)
    assert other.events == []


def test_session_with_no_visible_device_hears_nothing(bus, tb):
    """A session whose owner may see no device gets no DeviceEvents until one comes."""
    start(bus, tb)
    host = Host(bus)
    host.call("CreateSession", ({"session_handle_token": GLib.Variant("s", "s1")},), "(a{sv})")
    limentest.pump(0.5)
    assert host.events == []


@needs_uevents
def test_refused_device_leaves_the_session(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    host.call("CreateSession", ({"session_handle_token": GLib.Variant("s", "s1")},), "(a{sv})")
    limentest.wait_until(lambda: host.events, 5)
    ids = by_serial(host.enumerate())
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("a(sa{sv})", [])})
    handle, pending = host.acquire([(ids["Acme_Key_A"], False)])
    assert pending.wait() == (0, {})
    limentest.wait_until(lambda: len(host.events) == 2, 5)
    assert [e[:2] for e in host.events[1][1]] == [("remove", ids["Acme_Key_A"])]


@needs_uevents
def test_sandboxed_session_hears_only_its_devices(bus, tb):
    start(bus, tb)
    info = usb_helpers.flatpak_info(APP, enumerable="vnd:1234;", hidden="vnd:1234+dev:9999;")
    timer = threading.Timer(2.0, lambda: (tb.add("1234", "9999", serial="Hidden_Plug"),
                                          tb.add("1234", "0042", serial="Shown_Plug"),
                                          tb.add("beef", "0042", serial="Foreign_Plug")))
    timer.start()
    try:
        out = usb_helpers.run_in_sandbox(bus, APP, [["session"], ["pump", 4.0], ["events"]], info=info)
    finally:
        timer.join()
    events = out[1][1]
    # Nothing visible when the session began: no event until a visible device comes.
    assert all(evs for _, evs in events), events
    seen = [e for _, evs in events for e in evs]
    assert [(e[0], e[2]["properties"]["ID_SERIAL"]) for e in seen] == [("add", "Shown_Plug")]


# ---- hostile input ------------------------------------------------------------------------

def test_hostile_input(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    ids = list(host.enumerate())
    bad = [
        ("AcquireDevices", ("", [], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [("x" * 5000, {})], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        # An id is the portal's own random name, never a path or a sysfs name.
        ("AcquireDevices", ("", [("../../../dev/bus/usb/001/001", {})], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [(a[0], {})], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [(a[1], {})], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [(ids[0], {})] * 2, {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [(f"{i:036d}", {}) for i in range(5000)], {}), "(sa(sa{sv})a{sv})",
         "InvalidArgument"),
        ("AcquireDevices", ("", [(ids[0], {"writable": GLib.Variant("s", "yes")})], {}), "(sa(sa{sv})a{sv})",
         "InvalidArgument"),
        ("AcquireDevices", ("evil:1", [(ids[0], {})], {}), "(sa(sa{sv})a{sv})", "InvalidArgument"),
        ("AcquireDevices", ("", [(ids[0], {})], {"handle_token": GLib.Variant("u", 1)}), "(sa(sa{sv})a{sv})",
         "InvalidArgument"),
        ("AcquireDevices", ("", [ids[0]], {}), "(sasa{sv})", "InvalidArgs"),
        ("FinishAcquireDevices", ("/org/freedesktop/portal/desktop/request/1_1/nope", {}), "(oa{sv})",
         "InvalidArgument"),
        ("ReleaseDevices", ([ids[0]], {}), "(asa{sv})", "InvalidArgument"),
        ("ReleaseDevices", (["z" * 100000], {}), "(asa{sv})", "InvalidArgument"),
        ("ReleaseDevices", ([str(i) for i in range(100000)], {}), "(asa{sv})", "InvalidArgument"),
        ("EnumerateDevices", ("x",), "(s)", "InvalidArgs"),
        ("CreateSession", ({"session_handle_token": GLib.Variant("s", "../x")},), "(a{sv})", "InvalidArgument"),
    ]
    for method, args, sig, err in bad:
        with pytest.raises(GLib.Error) as e:
            host.call(method, args, sig, timeout=20000)
        assert err in limentest.dbus_error_name(e.value), (method, e.value.message)
        assert "/tmp" not in e.value.message
    assert backend.requests("AcquireDevices") == []
    # Unknown option keys are dropped, and the daemon still serves.
    assert len(host.call("EnumerateDevices", ({"x": GLib.Variant("s", "y")},), "(a{sv})")[0]) == 3
    handle, pending = host.acquire([(ids[0], False)])
    assert pending.wait() == (0, {})
    ((_, res),) = host.finish(handle)
    assert res["success"]
    os.close(res["fd"])


def test_hostile_backend_and_foreign_handles(bus, tb):
    a, b, c = three_devices(tb)
    backend = start(bus, tb)
    host = Host(bus)
    thief = Host(bus, "org.example.Thief")
    ids = by_serial(host.enumerate())
    # A backend answer of the wrong type grants nothing, and is not taken for a refusal.
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("s", "everything")})
    handle, pending = host.acquire([(ids["Acme_Key_A"], False)])
    assert pending.wait() == (2, {})
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {}
    backend.set_response("AcquireDevices", 0, {"granted": GLib.Variant("b", True)})   # no "devices"
    handle, pending = host.acquire([(ids["Acme_Key_A"], False)], token="a1b")
    assert pending.wait() == (2, {})
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {}
    # Ids the app did not ask for are ignored.
    backend.set_response("AcquireDevices", 0, {"devices": GLib.Variant("a(sa{sv})", [
        (ids["Other_Hid_C"], {}), ("made-up", {}), (ids["Acme_Hidden_B"], {})])})
    handle, pending = host.acquire([(ids["Acme_Hidden_B"], False)], token="a2")
    assert pending.wait() == (0, {})
    # Another peer cannot collect the fds of this one's answer.
    with pytest.raises(GLib.Error) as e:
        thief.finish(handle)
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    got = host.finish(handle)
    assert [g[0] for g in got] == [ids["Acme_Hidden_B"]]
    os.close(got[0][1]["fd"])
    # Finished: the handle is spent.
    with pytest.raises(GLib.Error):
        host.finish(handle)


# ---- limen-kde's dialog (Xvfb) ------------------------------------------------------------

TITLE = "USB Device Access"
TITLE_DE = "Zugriff auf USB-Geräte"


def start_with_kde(bus, tb, x, language="en", scale="1"):
    """Permission store, limen-kde on @x and limen-portal choosing it (XDG_CURRENT_DESKTOP=KDE)."""
    import shutil

    import kde_helpers as kh
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, HOST_APP + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Example Flasher\nExec=/bin/true\n")
    request_helpers.start_documents(bus)
    kh.start_kde(bus, env=dict(x.env(), QT_QPA_PLATFORM="xcb", QT_SCALE_FACTOR=scale,
                               LANGUAGE="de" if language == "de" else "",
                               LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale")))
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    bus.start_portal(env=dict(portal_env(bus, tb), XDG_CURRENT_DESKTOP="KDE"))


def test_kde_dialog_allow_and_deny(bus, tb, x):
    a, b, c = three_devices(tb)
    start_with_kde(bus, tb, x)
    host = Host(bus)
    ids = by_serial(host.enumerate())
    handle, pending = host.acquire([(ids["Acme_Key_A"], True)])
    x.answer(TITLE, "alt+a", shot="usb-allow-en-1x.png", shown=0.8)
    assert pending.wait(20) == (0, {})
    ((dev_id, res),) = host.finish(handle)
    assert dev_id == ids["Acme_Key_A"] and os.read(res["fd"], 100) == a[2]
    os.close(res["fd"])
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {HOST_APP: ["yes"]}
    # Escape is "Deny": refused and remembered; the app gets response 0 and nothing to
    # collect, as from the reference frontend.
    handle, pending = host.acquire([(ids["Other_Hid_C"], False)], token="a2")
    x.answer(TITLE, "Escape")
    assert pending.wait(20) == (0, {})
    assert host.finish(handle) == []
    assert store_lookup(bus, "device:abcd/0001/Other_Hid_C") == {HOST_APP: ["no"]}
    assert ids["Other_Hid_C"] not in host.enumerate()


def test_kde_dialog_for_a_sandboxed_app(bus, tb, x):
    a, b, c = three_devices(tb)
    start_with_kde(bus, tb, x)
    ids = by_serial(Host(bus, None).enumerate())
    info = usb_helpers.flatpak_info(APP, enumerable="vnd:1234;")
    answered = []
    clicker = threading.Thread(target=lambda: answered.append(x.answer(TITLE, "alt+a", shown=0.5)))
    clicker.start()
    try:
        out = usb_helpers.run_in_sandbox(bus, APP, [["acquire", [[ids["Acme_Key_A"], True]], "k1"]], info=info)
    finally:
        clicker.join()
    assert out[0] == ["response", 0], out
    (got,) = out[1][1]
    assert got["success"] and got["data"].encode() == a[2] and got["mode"] == os.O_RDWR
    assert store_lookup(bus, "device:1234/5678/Acme_Key_A") == {APP: ["yes"]}


def test_kde_refuses_bad_impl_input(bus, x):
    """limen-kde's impl AcquireDevices checks what a frontend sends, and keeps serving."""
    import kde_helpers as kh
    kh.start_kde_x11(bus, x)
    info = {"device-file": GLib.Variant("s", "/dev/bus/usb/001/002")}
    ok_dev = ("id1", info, {"writable": GLib.Variant("b", False)})
    cases = [
        [],
        [ok_dev] * 65,
        [("x" * 100, info, {})],
        [("id1", {"properties": GLib.Variant("a{sv}", {"ID_SERIAL": GLib.Variant("u", 1)})}, {})],
        [("id1", {"readable": GLib.Variant("s", "yes")}, {})],
        [("id1", info, {"writable": GLib.Variant("s", "yes")})],
    ]
    conn = bus.new_connection()
    for devices in cases:
        handle = kh.new_handle(bus, conn=conn)
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, "Usb", "AcquireDevices",
                         (handle, "", APP, devices, {}), "(ossa(sa{sv}a{sv})a{sv})", conn=conn)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument", devices[:1]
    assert bus.get_property("org.freedesktop.impl.portal.Usb", "version", dest=kh.KDE_NAME, path=kh.PATH) == 1


@pytest.mark.parametrize("language,scale", [("en", "1"), ("de", "2")], ids=["en-1x", "de-2x"])
def test_kde_dialog_screenshots(bus, tb, language, scale):
    import kde_helpers as kh
    x = kh.Xvfb(size="1600x1000x24")
    try:
        tb.add("1234", "5678", serial="Acme_Key_A", vendor_name="Acme Corporation",
               model_name="Hardware Wallet Nano")
        tb.add("0483", "df11", serial="STM_DFU", vendor_name="STMicroelectronics",
               model_name="STM Device in DFU Mode")
        start_with_kde(bus, tb, x, language, scale)
        host = Host(bus)
        ids = list(host.enumerate())
        handle, pending = host.acquire([(ids[0], True), (ids[1], False)])
        wid = x.wait_window(TITLE_DE if language == "de" else TITLE)
        time.sleep(1.0)
        path = x.screenshot(f"usb-{language}-{scale}x.png")
        assert os.path.getsize(path) > 1000
        x.press(wid, "Escape")
        assert pending.wait(20) == (0, {})
    finally:
        x.close()
