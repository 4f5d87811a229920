"""Live previews in the screen-sharing picker, on the headless Plasma 5.27 Wayland session
of wayland_session.py (kwin_wayland --virtual, PipeWire, WirePlumber): each screen and
window the picker offers gets a stream of its own from KWin, consumed by limen-kde's
preview module (loaded with the first picker, never at start) and shown in place of the
still; the streams end with the dialog. KWin 5.27 records no frames of a screen on
--virtual, so the live picture looked at is a window's (a probe that changes colour)."""

import json
import os
import subprocess

import pytest

import kde_helpers as kh
import limentest
import test_kde_screencast as sc
from limentest import GLib

GREEN = sc.GREEN
BLUE = (0x30, 0x60, 0xd0)
KEY_ESC = 1
PREVIEW_NODE = "limen-picker-preview"   # the media.name of limen-kde's preview streams


def maps(pid):
    with open(f"/proc/{pid}/maps") as f:
        text = f.read()
    return {"preview": "liblimen-kde-preview.so" in text, "pipewire": "libpipewire-0.3.so" in text}


def video_nodes(bus):
    """(KWin's screen-cast streams, the picker's preview streams) now in the PipeWire graph."""
    out = subprocess.run(["pw-dump"], env=bus.env, capture_output=True, text=True, timeout=20, check=True).stdout
    props = [o.get("info", {}).get("props", {}) for o in json.loads(out) if o.get("type") == "PipeWire:Interface:Node"]
    return (sum(1 for p in props if str(p.get("media.name", "")).startswith("kwin-screencast")),
            sum(1 for p in props if p.get("media.name") == PREVIEW_NODE))


def open_picker(bus, session, title):
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 3))[0] == 0
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    return handle, call, session.wait_window(title)


def picker_colours(bus, session, win, name):
    """Pixels of GREEN and of BLUE in the picker (a crop of KWin's screenshot), kept as @name."""
    shot = session.screenshot(os.path.join(bus.root, "picker.png"))
    crop = sc.crop_window(session, shot, win, name)
    return sc.count_colour(crop, GREEN), sc.count_colour(crop, BLUE)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_picker_shows_a_window_live(bus, session, lang):
    """A window that turns from green to blue while the picker is open turns blue in the
    picker too (a still would stay green); the preview module and libpipewire are mapped
    only once a picker opened; Cancel (Escape) or Request.Close ends every preview stream,
    KWin's and ours."""
    kde = sc.start_kde_in(session, lang)
    probe = session.probe("Live window", GREEN)
    probe.wait_for("FOCUS")
    session.wait_window("Live window")
    limentest.pump(0.5)
    assert maps(kde.pid) == {"preview": False, "pipewire": False}, "an idle limen-kde maps the previews"
    title = "Bildschirmfreigabe" if lang == "de" else "Screen Sharing"
    handle, call, win = open_picker(bus, session, title)
    name = f"screencast-picker-live-{lang}.png"
    assert limentest.wait_until(lambda: picker_colours(bus, session, win, name)[0] > 2000, 15), \
        "no picture of the window in the picker"
    probe.command("colour %02x%02x%02x" % BLUE)
    probe.wait_for("COLOUR")
    seen = []

    def turned_blue():
        seen[:] = picker_colours(bus, session, win, name)
        return seen[1] > 2000 and seen[0] < 100

    assert limentest.wait_until(turned_blue, 15), f"the picker's picture did not follow the window: {seen}"
    assert maps(kde.pid) == {"preview": True, "pipewire": True}
    kwin_nodes, ours = video_nodes(bus)
    assert kwin_nodes >= 2 and ours >= 2, (kwin_nodes, ours)   # the screen and the window
    if lang == "en":
        rd, _ = sc.rd_start(bus, devices=1)
        session.activate(title)
        limentest.pump(0.5)
        sc.press(bus, rd, KEY_ESC)
        assert call.wait()[0] == 1
    else:
        kh.close_request(bus, handle)
        assert call.wait()[0] == 2
    sc.assert_gone_without_input(session, title)
    assert limentest.wait_until(lambda: video_nodes(bus) == (0, 0), 10), \
        f"preview streams outlived the picker: {video_nodes(bus)}"
    assert kde.alive()


def test_without_pipewire_the_picker_keeps_its_stills(bus, session):
    """limen-kde that cannot reach PipeWire opens the picker as before, with KWin's stills,
    says nothing to the person, asks KWin for no preview streams, and shares as asked."""
    kde = sc.start_kde_in(session, "en", PIPEWIRE_REMOTE="limen-no-such-pipewire")
    probe = session.probe("Still window", GREEN)
    probe.wait_for("FOCUS")
    session.wait_window("Still window")
    handle, call, win = open_picker(bus, session, "Screen Sharing")
    assert limentest.wait_until(lambda: picker_colours(bus, session, win, "screencast-picker-stills.png")[0] > 2000,
                                15), "no still of the window in the picker"
    assert video_nodes(bus) == (0, 0)
    assert [w["caption"] for w in session.windows() if w["pid"] == kde.pid] == ["Screen Sharing"]
    rd, _ = sc.rd_start(bus, devices=1)
    session.activate("Screen Sharing")
    limentest.pump(0.5)
    sc.press(bus, rd, sc.KEY_DOWN, sc.KEY_ENTER)   # the window, below the screen
    response, results = call.wait()
    assert response == 0, results
    (node, props), = results["streams"]
    assert props["source_type"] == 2
    assert kde.alive()


def test_previews_end_while_a_region_is_drawn(bus, session):
    """Share with "A region you draw" hides the picker for the rectangle to be drawn; the
    answer waits for it, but the previews end at once (the window's next picture finds the
    dialog gone), not when the rectangle is done."""
    kde = sc.start_kde_in(session, "en")
    probe = session.probe("Live window", GREEN)
    probe.wait_for("FOCUS")
    handle, call, win = open_picker(bus, session, "Screen Sharing")
    assert limentest.wait_until(lambda: video_nodes(bus)[1] >= 2, 15), video_nodes(bus)
    rd, _ = sc.rd_start(bus, devices=1)
    session.activate("Screen Sharing")
    limentest.pump(0.5)
    sc.press(bus, rd, sc.KEY_DOWN, sc.KEY_DOWN, sc.KEY_ENTER)   # screen, window, then the region
    session.wait_window("Draw the Region to Share")
    assert limentest.wait_until(lambda: video_nodes(bus) == (0, 0), 10), \
        f"previews outlived the picker while the region is drawn: {video_nodes(bus)}"
    assert not call.done, "the answer came before the region was drawn"
    session.activate("Draw the Region to Share")
    limentest.pump(0.3)
    sc.press(bus, rd, KEY_ESC)   # gives up the region: nothing shared
    assert call.wait()[0] == 1
    assert kde.alive()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_pipewire_ending_under_the_picker(bus, session):
    """PipeWire killed while the picker shows live previews: limen-kde neither ends nor spins
    on the dead connection, the picker keeps its last pictures and still answers, and the
    next picker opens with stills."""
    kde = sc.start_kde_in(session, "en")
    probe = session.probe("Live window", GREEN)
    probe.wait_for("FOCUS")
    handle, call, win = open_picker(bus, session, "Screen Sharing")
    assert limentest.wait_until(lambda: video_nodes(bus)[1] >= 2, 15), video_nodes(bus)
    assert limentest.wait_until(lambda: picker_colours(bus, session, win, "screencast-picker-pw-gone.png")[0] > 2000,
                                15), "no picture of the window in the picker"
    session.pipewire.stop(sig=9)
    limentest.pump(1)
    before = cpu_seconds(kde.pid)
    limentest.pump(3)
    used = cpu_seconds(kde.pid) - before
    assert used < 0.6, f"limen-kde used {used:.2f} s of CPU in 3 s with PipeWire gone"
    assert kde.alive()
    rd, _ = sc.rd_start(bus, devices=1)
    session.activate("Screen Sharing")
    limentest.pump(0.5)
    sc.press(bus, rd, KEY_ESC)
    assert call.wait()[0] == 1
    sc.assert_gone_without_input(session, "Screen Sharing")
    # A second picker: no PipeWire to preview with, KWin's stills, answered as asked.
    handle, call, win = open_picker(bus, session, "Screen Sharing")
    assert limentest.wait_until(lambda: picker_colours(bus, session, win, "screencast-picker-pw-gone2.png")[0] > 2000,
                                15), "no still of the window in the second picker"
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()
