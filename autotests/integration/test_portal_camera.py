"""Camera v1 through limen-portal with a real PipeWire + WirePlumber on the private bus, a
GStreamer test source published as a camera node (media.class Video/Source, media.role
Camera), limen-documents as the permission store, the dbusmock Access and Lockdown backends,
host callers and bwrap-sandboxed Flatpak callers."""
import json
import os
import shutil
import subprocess

import pytest
from gi.repository import Gio, GLib

import limentest
import request_helpers as rh
from request_helpers import v

CAM = "org.freedesktop.portal.Camera"
PS = "org.freedesktop.impl.portal.PermissionStore"
PS_PATH = "/org/freedesktop/impl/portal/PermissionStore"
NOT_ALLOWED = "org.freedesktop.portal.Error.NotAllowed"
APP_YES, APP_NO, APP_NEW = "org.example.CamYes", "org.example.CamNo", "org.example.CamNew"


def probe_binary():
    path = os.path.join(limentest.BUILD_DIR, "autotests", "limen-pw-probe")
    if not os.path.exists(path):
        pytest.skip("limen-pw-probe not built")
    return path


class PipeWire:
    def __init__(self, bus):
        for tool in ("pipewire", "wireplumber", "gst-launch-1.0", "pw-cli"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} not installed")
        self.bus = bus
        self.daemon = bus.start(["pipewire"])
        assert limentest.wait_until(lambda: os.path.exists(os.path.join(bus.runtime_dir, "pipewire-0")), 10)
        bus.start(["wireplumber"])

    def publish(self, name, camera=True):
        """A live test source as a node; with @camera it carries media.role Camera."""
        props = f"p,node.name={name},media.class=Video/Source" + (",media.role=Camera" if camera else "")
        proc = self.bus.start(["gst-launch-1.0", "videotestsrc", "is-live=true", "!",
                               "video/x-raw,width=320,height=240", "!", "pipewiresink", "mode=provide",
                               f"stream-properties={props}"])
        node = limentest.wait_until(lambda: self.node(name), 15)
        assert node, f"{name} did not appear"
        return proc, self.node(name)

    def node(self, name):
        """(id, properties) of the node called @name, or None."""
        out = subprocess.run(["pw-cli", "ls", "Node"], env=self.bus.env, capture_output=True, text=True,
                             timeout=10).stdout
        current, props = None, {}
        found = None
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("id "):
                if props.get("node.name") == name:
                    found = (current, props)
                current, props = int(line.split()[1].rstrip(",")), {}
            elif " = " in line:
                k, _, val = line.partition(" = ")
                props[k] = val.strip('"')
        if props.get("node.name") == name:
            found = (current, props)
        return found


@pytest.fixture
def cam(bus):
    rh.start_documents(bus)            # the permission store WirePlumber reads too
    pw = PipeWire(bus)
    rh.write_config(bus, ["access", "lockdown"])
    backend = rh.Backend(bus, ["lockdown", "access"])
    pw.portal = bus.start_portal()
    return pw, backend


def present(bus):
    return bus.get_property(CAM, "IsCameraPresent")


def stored(bus):
    try:
        perms, _ = bus.call(PS, "Lookup", ("devices", "camera"), "(ss)", dest=PS, path=PS_PATH)
    except GLib.Error:
        return {}
    return perms


def probe(fd, timeout=20):
    p = subprocess.run([probe_binary(), str(fd)], pass_fds=(fd,), capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return [int(line.split()[0]) for line in p.stdout.splitlines() if " PipeWire:Interface:Node " in line]


def error_of(fn):
    with pytest.raises(GLib.Error) as e:
        fn()
    return limentest.dbus_error_name(e.value)


def open_remote(conn, args=({},), sig="(a{sv})"):
    r, fds = conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, CAM,
                                              "OpenPipeWireRemote", GLib.Variant(sig, args),
                                              None, 0, 10000, None, None)
    return fds.get(r.unpack()[0])


def pipewire_clients(bus):
    out = subprocess.run(["pw-cli", "ls", "Client"], env=bus.env, capture_output=True, text=True, timeout=10).stdout
    return [line.split("=", 1)[1].strip().strip('"') for line in out.splitlines()
            if "application.name" in line]


def test_watch_starts_with_first_camera_use_and_first_read_is_true(bus):
    """No PipeWire connection before an app asks about cameras; the first read waits for the
    watch's first answer, so a camera already there is present at once."""
    rh.start_documents(bus)
    pw = PipeWire(bus)
    pw.publish("limen-test-early-camera")
    rh.write_config(bus, ["access", "lockdown"])
    rh.Backend(bus, ["lockdown", "access"])
    portal = bus.start_portal()
    # Other portals are used; the camera watch stays off.
    bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")
    limentest.pump(1.0)
    assert "limen-portal camera monitor" not in pipewire_clients(bus)
    assert present(bus) is True
    assert "limen-portal camera monitor" in pipewire_clients(bus)
    # GetAll answers the same, and a property that does not exist is a clear error.
    props = bus.call("org.freedesktop.DBus.Properties", "GetAll", (CAM,), "(s)")[0]
    assert props["IsCameraPresent"] is True and props["version"] == 1, props
    assert portal.alive()


def test_first_read_without_pipewire_answers_false(bus):
    rh.start_documents(bus)
    rh.write_config(bus, ["access"])
    rh.Backend(bus, ["access"])
    portal = bus.start_portal()
    assert present(bus) is False
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.DBus.Properties", "Get", (CAM, "NoSuchProperty"), "(ss)")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.DBus.Error.InvalidArgs"
    assert portal.alive()


def test_camera_presence_follows_pipewire(cam, bus):
    pw, _ = cam
    assert bus.get_property(CAM, "version") == 1
    assert present(bus) is False
    changes = []
    watcher = bus.new_connection()
    watcher.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", limentest.PORTAL_PATH,
                             None, 0, lambda *a: changes.append(a[5].unpack()))
    # A video source without the Camera role is no camera.
    pw.publish("limen-test-screen", camera=False)
    camera, (node, props) = pw.publish("limen-test-camera")
    assert props["media.class"] == "Video/Source" and props["media.role"] == "Camera", props
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    assert limentest.wait_until(lambda: any(c[1].get("IsCameraPresent") is True for c in changes), 5), changes
    camera.stop()
    assert limentest.wait_until(lambda: present(bus) is False, 10)
    assert limentest.wait_until(lambda: any(c[1].get("IsCameraPresent") is False for c in changes), 5), changes
    # And back.
    pw.publish("limen-test-camera-2")
    assert limentest.wait_until(lambda: present(bus) is True, 10)


def test_no_pipewire_means_no_camera_until_it_starts(bus):
    rh.start_documents(bus)
    rh.write_config(bus, ["access"])
    rh.Backend(bus, ["access"])
    portal = bus.start_portal()
    limentest.pump(0.5)
    assert present(bus) is False
    pw = PipeWire(bus)
    pw.publish("limen-test-late-camera")
    # The watch retries every 2 s.
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    pw.daemon.stop()
    assert limentest.wait_until(lambda: present(bus) is False, 10)
    assert portal.alive()
    assert "PipeWire is not running" in portal.output()


def test_host_caller_gets_a_camera_only_remote(cam, bus):
    pw, backend = cam
    _, (screen, _) = pw.publish("limen-test-screen", camera=False)
    _, (camera, _) = pw.publish("limen-test-camera")
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    c = rh.Client(bus)
    # As the reference: before AccessCamera, not even an unsandboxed caller gets a remote.
    with pytest.raises(GLib.Error) as e:
        open_remote(c.conn)
    assert "NotAllowed" in str(e.value)
    # It is asked like any app; one without an app id under the empty id, for all such apps.
    assert c.request(CAM, "AccessCamera", ({},), "(a{sv})") == (0, {})
    (method, handle, app_id, options), = backend.requests("AccessDialog")
    assert app_id == ""
    fd = open_remote(c.conn)
    nodes = probe(fd)
    assert nodes == [camera], nodes
    assert screen not in nodes
    # Plugged in later: a camera shows up on the remote (WirePlumber's portal script follows the
    # tags limen-portal put on it), another kind of node does not.
    _, (camera2, _) = pw.publish("limen-test-camera-2")
    _, (screen2, _) = pw.publish("limen-test-screen-2", camera=False)
    assert limentest.wait_until(lambda: set(probe(fd)) == {camera, camera2}, 10), probe(fd)
    assert screen2 not in probe(fd)
    os.close(fd)


SANDBOX_CAMERA = r'''
import json, subprocess, sys, time
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
params = json.loads(sys.argv[1])
responses = {}
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda *a: responses.__setitem__(a[2], a[5].unpack()))
def call(method, args, sig):
    r = conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                       "org.freedesktop.portal.Camera", method, GLib.Variant(sig, args), None, 0, 10000, None)
    return r.unpack()[0]
def wait(handle):
    end = time.time() + 20
    while handle not in responses and time.time() < end:
        GLib.MainContext.default().iteration(True)
    return responses.get(handle, (None, {}))[0]
out = {}
try:
    if params["access"]:
        out["access"] = wait(call("AccessCamera", ({"handle_token": GLib.Variant("s", "cam")},), "(a{sv})"))
    r, fds = conn.call_with_unix_fd_list_sync(
        "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Camera",
        "OpenPipeWireRemote", GLib.Variant("(a{sv})", ({},)), None, 0, 10000, None, None)
    fd = fds.get(r.unpack()[0])
    end = time.time() + 20
    while True:
        p = subprocess.run([params["probe"], str(fd)], pass_fds=(fd,), capture_output=True, text=True, timeout=20)
        out["probe"] = p.stdout
        out["probe_status"] = p.returncode
        if p.stdout.count(" PipeWire:Interface:Node ") >= params["wait_nodes"] or time.time() > end:
            break
        print("WAITING", flush=True)
        time.sleep(0.3)
except GLib.Error as e:
    out["error"] = Gio.DBusError.get_remote_error(e)
print(json.dumps(out))
'''


def run_app(bus, app_id, access=True, wait_nodes=0):
    """AccessCamera (with @access), OpenPipeWireRemote and the node ids the remote shows (probed
    again until @wait_nodes are seen, for at most 20 s) from a bwrap sandbox as @app_id."""
    probe = probe_binary()
    script = SANDBOX_CAMERA
    r = limentest.run_sandboxed(bus, app_id, "import sys; sys.argv[1:] = [%r]\n" % json.dumps(
        {"access": access, "probe": probe, "wait_nodes": wait_nodes}) + script, ro_binds=(probe,))
    assert r.stdout.strip(), r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if "probe" in out:
        out["nodes"] = [int(line.split()[0]) for line in out["probe"].splitlines()
                        if " PipeWire:Interface:Node " in line]
    return out


def test_sandboxed_app_is_asked_once_and_sees_only_cameras(cam, bus):
    pw, backend = cam
    _, (screen, _) = pw.publish("limen-test-screen", camera=False)
    _, (camera, _) = pw.publish("limen-test-camera")
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    # Never asked: no remote.
    assert run_app(bus, APP_NEW, access=False) == {"error": NOT_ALLOWED}
    # Asked, says yes: stored, the remote shows the camera and nothing else.
    backend.set_response("AccessDialog", 0)
    out = run_app(bus, APP_YES)
    assert out["access"] == 0 and out["probe_status"] == 0, out
    assert out["nodes"] == [camera], out
    asks = backend.requests("AccessDialog")
    assert len(asks) == 1
    assert asks[0][2] == APP_YES and asks[0][3]["icon"] == "camera-web-symbolic", asks
    assert backend.args("AccessDialog")[0][0] == "Allow this app to use the camera?"
    assert stored(bus)[APP_YES] == ["yes"]
    # The stored answer is honoured without asking again.
    backend.set_response("AccessDialog", 1)
    out = run_app(bus, APP_YES)
    assert out["access"] == 0 and out["nodes"] == [camera], out
    assert len(backend.requests("AccessDialog")) == 1
    # Another app says no: Response 1 (as the reference), stored, no remote, not asked again.
    out = run_app(bus, APP_NO)
    assert out == {"access": 1, "error": NOT_ALLOWED}, out
    assert stored(bus)[APP_NO] == ["no"]
    backend.set_response("AccessDialog", 0)
    assert run_app(bus, APP_NO) == {"access": 1, "error": NOT_ALLOWED}
    assert len(backend.requests("AccessDialog")) == 2
    assert screen != camera


def test_sandboxed_remote_follows_cameras_plugged_in_later(cam, bus):
    import threading
    pw, backend = cam
    _, (camera, _) = pw.publish("limen-test-camera")
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    backend.set_response("AccessDialog", 0)
    result = []
    app = threading.Thread(target=lambda: result.append(run_app(bus, APP_YES, wait_nodes=2)))
    app.start()
    # Once the app holds its remote, a second camera and a non-camera node appear.
    assert limentest.wait_until(lambda: f"Camera remote for '{APP_YES}'" in pw.portal.output(), 15), \
        pw.portal.output()
    _, (screen, _) = pw.publish("limen-test-screen", camera=False)
    _, (camera2, _) = pw.publish("limen-test-camera-2")
    app.join(40)
    out = result[0]
    assert out["access"] == 0 and set(out["nodes"]) == {camera, camera2}, out
    assert screen not in out["nodes"]


def test_hostile_options_and_lockdown(bus):
    rh.start_documents(bus)
    rh.write_config(bus, ["access", "lockdown"])
    backend = rh.Backend(bus, ["lockdown", "access"], params={"disable-camera": True})
    portal = bus.start_portal()
    c = rh.Client(bus)
    for opts in ({"handle_token": v("i", 3)}, {"handle_token": v("s", "bad token/")}):
        assert error_of(lambda: bus.call(CAM, "AccessCamera", (opts,), "(a{sv})", conn=c.conn)) == \
            "org.freedesktop.portal.Error.InvalidArgument"
    assert error_of(lambda: bus.call(CAM, "AccessCamera", ("x",), "(s)", conn=c.conn)) == \
        "org.freedesktop.DBus.Error.InvalidArgs"
    assert error_of(lambda: open_remote(c.conn, ("x",), "(s)")) == "org.freedesktop.DBus.Error.InvalidArgs"
    # Lockdown refuses both, for every caller.
    assert error_of(lambda: bus.call(CAM, "AccessCamera", ({},), "(a{sv})", conn=c.conn)) == NOT_ALLOWED
    assert error_of(lambda: open_remote(c.conn)) == NOT_ALLOWED
    assert run_app(bus, APP_YES, access=False) == {"error": NOT_ALLOWED}
    assert backend.requests("AccessDialog") == []
    assert portal.alive()


# ---- the question as limen-kde shows it ----------------------------------------------------
@pytest.mark.parametrize("language,scale,caller", [("en", "1", "sandboxed"), ("de", "2", "sandboxed"),
                                                   ("en", "1", "unidentified"), ("de", "1", "unidentified")],
                         ids=["en-1x", "de-2x", "en-1x-unidentified-host", "de-1x-unidentified-host"])
def test_access_dialog_screenshots(bus, language, scale, caller):
    """AccessCamera through limen-portal and limen-kde, from a sandboxed app or a host app
    without an app id: the KDE Access dialog with the portal's (translated) question, for the
    host app saying the answer counts for every unidentified app; closing it refuses and
    stores "no" under the app's id (the empty one for the host app)."""
    import threading
    import time
    import kde_helpers as kh
    try:
        kh.portal_file_path()
        limentest.binary("limen-kde")
    except (FileNotFoundError, OSError):
        pytest.skip("limen-kde not built")
    x = kh.Xvfb(size="1600x1000x24")
    try:
        rh.start_documents(bus)
        env = dict(x.env(), QT_QPA_PLATFORM="xcb", QT_SCALE_FACTOR=scale,
                   LANGUAGE="de" if language == "de" else "",
                   LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
        kh.start_kde(bus, env=env)
        shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
        conf = os.path.join(bus.config_home, "xdg-desktop-portal")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
            f.write("[preferred]\ndefault=limen\n")
        bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE", "LANGUAGE": env["LANGUAGE"],
                              "LIMEN_LOCALEDIR": env["LIMEN_LOCALEDIR"]})
        result = []
        if caller == "sandboxed":
            call = lambda: result.append(rh.sandboxed_request(bus, APP_NEW, CAM, "AccessCamera", "(a{sv})", "({},)"))
            app_id = APP_NEW
        else:
            host = rh.Client(bus)
            call = lambda: result.append(("RESPONSE", host.request(CAM, "AccessCamera", ({},), "(a{sv})")))
            app_id = ""
        thread = threading.Thread(target=call)
        thread.start()
        title = "Darf diese Anwendung die Kamera verwenden?" if language == "de" else \
            "Allow this app to use the camera?"
        wid = x.wait_window(title)
        time.sleep(1.0)
        path = x.screenshot(f"camera-access-{language}-{scale}x-{caller}.png")
        assert os.path.getsize(path) > 1000
        x.press(wid, "Escape")
        thread.join(40)
        assert result and result[0][0] == "RESPONSE" and result[0][1][0] == 1, result
        assert limentest.wait_until(lambda: stored(bus).get(app_id) == ["no"], 5), stored(bus)
    finally:
        x.close()


def nodes_or_none(fd):
    """The nodes the remote @fd shows, or None once PipeWire has ended it."""
    p = subprocess.run([probe_binary(), str(fd)], pass_fds=(fd,), capture_output=True, text=True, timeout=20)
    if p.returncode != 0:
        return None
    return [int(line.split()[0]) for line in p.stdout.splitlines() if " PipeWire:Interface:Node " in line]


@pytest.mark.parametrize("how", ["deny", "revoke"])
def test_camera_taken_back_while_the_remote_is_open(cam, bus, how):
    """The person denies (the page's "Deny", flatpak permission-set) or revokes (the page's
    "Revoke", flatpak permission-reset) the camera while the app holds its remote: the remote
    is ended at once, so a camera plugged in later does not reach the app either."""
    pw, backend = cam
    _, (camera, _) = pw.publish("limen-test-camera")
    assert limentest.wait_until(lambda: present(bus) is True, 10)
    c = rh.Client(bus)
    assert c.request(CAM, "AccessCamera", ({},), "(a{sv})") == (0, {})
    fd = open_remote(c.conn)
    assert probe(fd) == [camera]
    if how == "deny":
        bus.call(PS, "SetPermission", ("devices", False, "camera", "", ["no"]), "(sbssas)", dest=PS, path=PS_PATH)
    else:
        bus.call(PS, "DeletePermission", ("devices", "camera", ""), "(sss)", dest=PS, path=PS_PATH)
    assert limentest.wait_until(lambda: nodes_or_none(fd) is None, 10), nodes_or_none(fd)
    pw.publish("limen-test-camera-2")
    assert nodes_or_none(fd) is None
    assert f"Camera taken back from ''" in pw.portal.output()
    os.close(fd)
