"""libpipewire and libgudev are opened on first use (src/portal/pipewire-lazy.c,
gudev-lazy.c through src/core/lazy-library.c), never at start: an idle limen-portal maps
neither, the first camera question maps libpipewire and nothing of udev, and the first
device query maps libgudev."""
import limentest
import request_helpers as rh

CAM = "org.freedesktop.portal.Camera"
USB = "org.freedesktop.portal.Usb"
rh.IMPL.setdefault("usb", "org.freedesktop.impl.portal.Usb")


def mapped(pid):
    """Base names of the shared objects mapped by @pid."""
    names = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            path = line.split(maxsplit=5)[5].strip() if len(line.split(maxsplit=5)) == 6 else ""
            if ".so" in path:
                names.add(path.rsplit("/", 1)[-1])
    return names


def having(names, prefix):
    return sorted(n for n in names if n.startswith(prefix))


def test_idle_portal_maps_no_pipewire_or_udev_until_a_camera_question(bus):
    rh.start_documents(bus)
    rh.write_config(bus, ["access", "usb"])
    rh.Backend(bus, ["access", "usb"])
    portal = bus.start_portal()
    # Served and idle: other portals used, the deferred start (memory monitor, Realtime) done.
    bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")
    assert {CAM, USB} <= bus.interfaces()
    limentest.pump(0.5)
    idle = mapped(portal.pid)
    assert having(idle, "libglib-2.0.so"), idle      # the reading itself works
    for lib in ("libpipewire-", "libgudev-", "libudev."):
        assert not having(idle, lib), f"idle limen-portal maps {having(idle, lib)}"

    # No PipeWire runs here, so no camera; asking opens libpipewire all the same.
    assert bus.get_property(CAM, "IsCameraPresent") is False
    after = mapped(portal.pid)
    assert having(after, "libpipewire-0.3.so"), "the camera question did not open libpipewire"
    assert not having(after, "libgudev-") and not having(after, "libudev."), after

    # A host app's device list (whatever this machine has) opens libgudev.
    bus.call(USB, "EnumerateDevices", ({},), "(a{sv})")
    assert having(mapped(portal.pid), "libgudev-1.0.so"), "the device query did not open libgudev"
    assert portal.alive()
