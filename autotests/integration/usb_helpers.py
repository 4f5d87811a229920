"""Helpers for the Usb portal tests: a umockdev testbed whose devices limen-portal sees
(it runs with libumockdev-preload.so), and a script run inside a bwrap sandbox that drives
the portal from a JSON list of steps and prints what it got as JSON."""

import gc
import json
import os

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

import limentest  # noqa: E402

IFACE = "org.freedesktop.portal.Usb"


class Testbed:
    """Mocked USB devices; each has a device node (a file with known contents)."""

    def __init__(self):
        self.tb = UMockdev.Testbed.new()
        self.root = self.tb.get_root_dir()
        self.n = 1

    def env(self):
        return {"LD_PRELOAD": "libumockdev-preload.so", "UMOCKDEV_DIR": self.root}

    def add(self, vendor, product, cls="ff", subclass="00", serial=None, vendor_name="Acme",
            model_name="Widget", content=None):
        """A whole USB device (DEVTYPE usb_device); returns (syspath, devnode, content)."""
        self.n += 1
        devnode = f"/dev/bus/usb/001/{self.n:03d}"
        serial = serial or f"{vendor_name}_{model_name}_{self.n}"
        sp = self.tb.add_device(
            "usb", f"usb1/1-{self.n}", None,
            ["idVendor", vendor, "idProduct", product, "bDeviceClass", cls, "bDeviceSubClass", subclass,
             "dev", f"189:{self.n}", "busnum", "1", "devnum", str(self.n)],
            ["DEVNAME", devnode, "DEVTYPE", "usb_device", "ID_VENDOR_ID", vendor, "ID_MODEL_ID", product,
             "ID_SERIAL", serial, "ID_VENDOR_FROM_DATABASE", vendor_name, "ID_MODEL_FROM_DATABASE", model_name,
             "ID_VENDOR_ENC", vendor_name, "ID_MODEL_ENC", model_name])
        content = content if content is not None else f"device {vendor}:{product} #{self.n}".encode()
        path = self.root + devnode
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
        os.chmod(path, 0o666)
        # Under umockdev-wrapper the testbed sends the "add" uevent itself.
        return sp, devnode, content, serial

    def remove(self, syspath):
        self.tb.uevent(syspath, "remove")

    def close(self):
        # Finalised now, not whenever the collector runs: a testbed going away unsets
        # UMOCKDEV_DIR, which would cut the next test's testbed off from its uevents.
        self.tb.clear()
        self.tb = None
        gc.collect()


SANDBOX_SCRIPT = r'''
import fcntl, json, os, sys, time
from gi.repository import Gio, GLib
steps = json.loads(%r)
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
out = []
events = []
responses = {}
conn.signal_subscribe(None, "org.freedesktop.portal.Usb", "DeviceEvents", None, None, 0,
                      lambda c, s, p, i, n, params: events.append(params.unpack()))
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda c, s, p, i, n, params: responses.__setitem__(p, params.unpack()))
ctx = GLib.MainContext.default()
def pump(sec):
    end = time.time() + sec
    while time.time() < end:
        ctx.iteration(False)
        time.sleep(0.01)
def call(method, sig, args):
    r = conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
        "org.freedesktop.portal.Usb", method, GLib.Variant(sig, tuple(args)) if sig else None, None, 0, 20000,
        None, None)
    return r
for step in steps:
    kind = step[0]
    try:
        if kind == "enumerate":
            r, _ = call("EnumerateDevices", "(a{sv})", [{}])
            out.append(["devices", r.unpack()[0]])
        elif kind == "session":
            r, _ = call("CreateSession", "(a{sv})", [{"session_handle_token": GLib.Variant("s", "s1")}])
            out.append(["session", r.unpack()[0]])
        elif kind == "pump":
            pump(step[1])
        elif kind == "ready":
            print("READY", flush=True)
            sys.stdin.readline()
        elif kind == "events":
            out.append(["events", events[:]])
        elif kind == "acquire":
            devs = [(d, {"writable": GLib.Variant("b", w)}) for d, w in step[1]]
            r, _ = call("AcquireDevices", "(sa(sa{sv})a{sv})", ["", devs, {"handle_token": GLib.Variant("s", step[2])}])
            handle = r.unpack()[0]
            end = time.time() + 20
            while handle not in responses and time.time() < end:
                ctx.iteration(False); time.sleep(0.01)
            resp = responses.get(handle, (None, None))[0]
            out.append(["response", resp])
            if resp == 0:
                finished = False
                got = []
                while not finished:
                    r, fds = call("FinishAcquireDevices", "(oa{sv})", [handle, {}])
                    results, finished = r.unpack()
                    for dev_id, res in results:
                        entry = {"id": dev_id, "success": res["success"], "error": res.get("error")}
                        if res["success"]:
                            fd = fds.get(res["fd"])
                            entry["data"] = os.read(fd, 4096).decode()
                            entry["mode"] = fcntl.fcntl(fd, fcntl.F_GETFL) & 3
                            os.close(fd)
                        got.append(entry)
                out.append(["finished", got])
        elif kind == "release":
            call("ReleaseDevices", "(asa{sv})", [step[1], {}])
            out.append(["released", True])
    except GLib.Error as e:
        out.append(["error", Gio.DBusError.get_remote_error(e) or "", e.message])
print("RESULT " + json.dumps(out), flush=True)
'''


def flatpak_info(app_id, enumerable=None, hidden=None, devices="dri;"):
    text = limentest.FLATPAK_INFO.format(app_id=app_id) + f"\n[Context]\ndevices={devices}\n"
    if enumerable is not None or hidden is not None:
        text += "\n[USB Devices]\n"
        if enumerable is not None:
            text += f"enumerable-devices={enumerable}\n"
        if hidden is not None:
            text += f"hidden-devices={hidden}\n"
    return text


def run_in_sandbox(bus, app_id, steps, info=None, timeout=60):
    """Run @steps as Flatpak app @app_id; returns the list of results."""
    script = SANDBOX_SCRIPT % (json.dumps(steps),)
    r = limentest.run_sandboxed(bus, app_id, script, flatpak_info=info or flatpak_info(app_id), timeout=timeout)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"sandboxed client failed ({r.returncode}): {r.stdout} {r.stderr}")
