"""A real browser as the portal's client, on the host and as a Flatpak app (bwrap):
Chromium on a headless Plasma Wayland session (wayland_session.py) shares a window through
limen-portal and limen-kde with getDisplayMedia(), the way a video call in the browser does.
Chromium picks nothing itself on Wayland: it asks the ScreenCast portal, whose picker
(limen-kde's) the person answers (keys through KWin's fake input), then reads the stream
through the PipeWire remote the portal handed it. The page must see the shared window's
pixels; stopping the track in the page must end the portal's session. Firefox (on Wayland,
driven over Marionette) does the same as a host app."""

import os
import time

import pytest

import browser
import firefox
import kde_helpers as kh
import limentest
import wayland_session
from test_kde_screencast import KEY_DOWN, KEY_ENTER, press, rd_start
from test_portal_screencast import start_limen_on_kde


GREEN = (0x20, 0xc0, 0x40)

PAGE = """<!doctype html><title>Meeting</title>
<video id="v" autoplay muted></video><canvas id="c"></canvas>
<script>
window.share = () => {
  window.state = "asking";
  navigator.mediaDevices.getDisplayMedia({video: {displaySurface: "window"}, audio: false}).then(async (stream) => {
    window.stream = stream;
    const v = document.getElementById("v");
    v.srcObject = stream;
    await v.play();
    window.state = "shared";
  }, (e) => { window.state = "error: " + e.name + ": " + e.message; });
  return window.state;
};
window.sample = () => {
  const v = document.getElementById("v"), c = document.getElementById("c");
  if (!v.videoWidth) return null;
  c.width = v.videoWidth; c.height = v.videoHeight;
  const ctx = c.getContext("2d");
  ctx.drawImage(v, 0, 0);
  // A corner: the pointer (drawn into the frames from the stream's cursor metadata) may be
  // anywhere else.
  const p = ctx.getImageData(10, 10, 1, 1).data;
  const track = window.stream.getVideoTracks()[0];
  return {width: v.videoWidth, height: v.videoHeight, rgb: [p[0], p[1], p[2]], label: track.label,
          surface: track.getSettings().displaySurface || ""};
};
window.stop = () => { window.stream.getTracks().forEach((t) => t.stop()); return true; };
</script>
"""


def portal_sessions(bus):
    """The ScreenCast sessions limen-portal holds (object paths under .../session)."""
    import xml.etree.ElementTree as ET
    found = []

    def walk(path):
        xml = bus.call("org.freedesktop.DBus.Introspectable", "Introspect", path=path)[0]
        for node in ET.fromstring(xml).findall("node"):
            child = path.rstrip("/") + "/" + node.get("name")
            if child.count("/") >= 7:
                found.append(child)
            else:
                walk(child)

    walk("/org/freedesktop/portal/desktop/session")
    return found


def close_enough(rgb, want, slack=12):
    return all(abs(a - b) <= slack for a, b in zip(rgb, want))


APP = "org.chromium.Chromium"


def write_page(bus, html):
    page_dir = os.path.join(bus.root, "site")
    os.makedirs(page_dir, exist_ok=True)
    page_path = os.path.join(page_dir, "meeting.html")
    with open(page_path, "w") as f:
        f.write(html)
    return page_path


def stand_in_keyboard(bus):
    """The keyboard that stands in for the person's (a remote-desktop session of limen-kde),
    added to KWin's seat before any picker maps: a window mapped while a fake-input device
    is being added may never get the keyboard focus (KWin 5.27, see
    test_fake_input_reaches_a_wayland_window)."""
    rd, _ = rd_start(bus, devices=1)
    return rd


KEY_NAMES = {KEY_DOWN: "Down", KEY_ENTER: "Enter"}


def answer_picker(bus, session, kde, rd, title, keys, tries):
    """Press @keys in the picker titled @title until it closes: a key goes to the active
    window, and the browser may take the focus back while the picker maps, as a person
    would see, so up to @tries times. Fails, with the screen, KWin's window list and
    limen-kde's log, while the picker is still open."""
    def picker_open(windows):
        return any(w["caption"] == title for w in windows)

    for _ in range(tries):
        session.activate(title)
        time.sleep(0.5)
        press(bus, rd, *keys)
        if limentest.wait_until(lambda: not picker_open(session.windows()), 4):
            break
    windows = session.windows()
    if picker_open(windows):
        shot = os.path.join(kh.artifacts_dir(), "browser-picker-still-open.png")
        try:
            session.screenshot(shot)
        except Exception as e:  # noqa: BLE001 -- the failure below is what counts
            shot = f"no screenshot: {e}"
        pytest.fail(f"the picker did not take {', '.join(KEY_NAMES[k] for k in keys)}; windows: {windows}; "
                    f"screen: {shot}; limen-kde:\n{kde.output()[-3000:]}")


def start_chromium(bus, session, page_path, sandboxed):
    """Chromium on the session's Wayland display; @sandboxed: as the Flatpak app APP (bwrap
    with a .flatpak-info, only the bus, its Wayland socket and the page inside)."""
    args = ["--ozone-platform=wayland", "--enable-features=WebRTCPipeWireCapturer"]
    log = os.path.join(bus.logs, "chromium.log")
    if not sandboxed:
        env = dict(session.client_env(), XDG_CURRENT_DESKTOP="KDE", XDG_SESSION_TYPE="wayland")
        return browser.Chromium(env, os.path.join(bus.root, "chromium-profile"), "file://" + page_path,
                                extra_args=args, log_path=log), None
    socket = os.path.join(bus.runtime_dir, wayland_session.SOCKET)
    r, w = os.pipe()
    os.write(w, limentest.FLATPAK_INFO.format(app_id=APP).encode())
    os.close(w)
    wrapper = limentest.bwrap_argv(bus) + [
        "--bind", socket, "/run/user/0/" + wayland_session.SOCKET,
        "--ro-bind", os.path.dirname(page_path), os.path.dirname(page_path),
        "--ro-bind-data", str(r), "/.flatpak-info", "--setenv", "HOME", "/tmp/home",
        "--setenv", "XDG_RUNTIME_DIR", "/run/user/0"]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "XDG_CURRENT_DESKTOP": "KDE", "XDG_SESSION_TYPE": "wayland",
           "WAYLAND_DISPLAY": wayland_session.SOCKET}
    try:
        return browser.Chromium(env, "/tmp/profile", "file://" + page_path, extra_args=args + ["--disable-dev-shm-usage"],
                                log_path=log, wrapper=wrapper, pass_fds=(r,)), r
    except BaseException:
        os.close(r)
        raise


@pytest.mark.skipif(not browser.available(), reason="chromium not installed")
@pytest.mark.parametrize("sandboxed", [False, True], ids=["host", "flatpak"])
def test_chromium_shares_a_window(bus, sandboxed):
    """As a host app, and as the Flatpak app org.chromium.Chromium (named in the picker from
    its .desktop file; its PipeWire connection is the portal's restricted remote either way)."""
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    session = wayland_session.WaylandSession(bus)
    chromium = None
    info_fd = None
    try:
        apps = os.path.join(bus.data_home, "applications")
        os.makedirs(apps, exist_ok=True)
        with open(os.path.join(apps, APP + ".desktop"), "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=Chromium\nExec=chromium\nIcon=chromium\n")
        kde = session.start_kde()
        start_limen_on_kde(bus)
        probe = session.probe("Shared window", GREEN)
        probe.wait_for("FOCUS")
        rd = stand_in_keyboard(bus)
        page_path = write_page(bus, PAGE)
        chromium, info_fd = start_chromium(bus, session, page_path, sandboxed)
        page = chromium.page()
        assert limentest.wait_until(lambda: chromium.evaluate(page, "typeof share") == "function", 20)
        assert chromium.evaluate(page, "share()", user_gesture=True) == "asking"
        # Chromium's own dialog opens on its Window tab and asks the portal at once: the
        # picker is limen-kde's, naming no app (Chromium is an unidentified host app).
        title = "Screen Sharing"
        picker = session.wait_window(title, timeout=30)
        assert picker["pid"] == kde.pid
        time.sleep(1)
        shot = session.screenshot(os.path.join(bus.root, "picker.png"))
        limentest.subprocess.run(["convert", shot, "-crop", "%(width)dx%(height)d+%(x)d+%(y)d" % picker, "+repage",
                                  os.path.join(kh.artifacts_dir(), "browser-screencast-picker-%s.png" %
                                               ("flatpak" if sandboxed else "host"))], check=True)
        # The window is the first item: Share. No "Allow restoring" box: Chromium asks for
        # mode 1 (while it runs), granted without a question.
        answer_picker(bus, session, kde, rd, title, (KEY_ENTER,), tries=3)
        # Chromium shows the shared window's live preview; its Share starts a second portal
        # session with the first one's token: restored, no second picker.
        chrome_title = "Meeting - Chromium"
        time.sleep(1.5)
        session.activate(chrome_title)
        time.sleep(0.5)
        press(bus, rd, KEY_ENTER)
        assert limentest.wait_until(lambda: chromium.evaluate(page, "window.state") != "asking", 20), \
            "getDisplayMedia never answered"
        assert chromium.evaluate(page, "window.state") == "shared"
        assert not any(w["caption"] == title for w in session.windows()), "asked twice"
        assert f"restoring the sources of {APP if sandboxed else ''} without asking" in kde.output()
        # The page sees the window: its size and its colour, through the PipeWire remote
        # that limen-portal handed Chromium.
        sample = {}
        assert limentest.wait_until(
            lambda: sample.update(chromium.evaluate(page, "sample()") or {}) or
            (sample.get("width"), sample.get("height")) == (400, 300) and close_enough(sample["rgb"], GREEN), 20), \
            sample
        assert sample["surface"] == "window"
        sessions = portal_sessions(bus)
        assert len(sessions) == 1, sessions
        # Stopping the track in the page ends the portal's session.
        assert chromium.evaluate(page, "stop()") is True
        assert limentest.wait_until(lambda: portal_sessions(bus) == [], 10), portal_sessions(bus)
        assert kde.alive()
    finally:
        if chromium:
            chromium.close()
        if info_fd is not None:
            os.close(info_fd)
        session.close()


@pytest.mark.skipif(not firefox.available(), reason="firefox not installed")
def test_firefox_shares_a_window(bus):
    """Firefox on Wayland asks the ScreenCast portal for a screen or a window with no
    dialog of its own (its permission prompt switched off, as a site allowed before).
    The person picks the window in limen-kde's picker (the second item: the screen comes
    first, and a whole screen of the headless KWin sends no frames). The page sees the
    window; stopping the track ends the portal's session."""
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    session = wayland_session.WaylandSession(bus)
    ff = None
    try:
        kde = session.start_kde()
        start_limen_on_kde(bus)
        probe = session.probe("Shared window", GREEN)
        probe.wait_for("FOCUS")
        rd = stand_in_keyboard(bus)
        page_path = write_page(bus, PAGE.replace("<video", '<button id="share" onclick="share()">Share</button><video'))
        env = dict(session.client_env(), XDG_CURRENT_DESKTOP="KDE", XDG_SESSION_TYPE="wayland", MOZ_ENABLE_WAYLAND="1",
                   HOME=os.path.join(bus.root, "firefox-home"))
        ff = firefox.Firefox(env, os.path.join(bus.root, "firefox-profile"),
                             prefs={"media.navigator.permission.disabled": True},
                             log_path=os.path.join(bus.logs, "firefox.log"))
        ff.navigate("file://" + page_path)
        ff.click("#share")
        title = "Screen Sharing"
        picker = session.wait_window(title, timeout=30)
        assert picker["pid"] == kde.pid
        answer_picker(bus, session, kde, rd, title, (KEY_DOWN, KEY_ENTER), tries=5)
        assert limentest.wait_until(lambda: ff.script("return window.state") != "asking", 20), \
            "getDisplayMedia never answered"
        assert ff.script("return window.state") == "shared"
        sample = {}
        assert limentest.wait_until(
            lambda: sample.update(ff.script("return window.sample()") or {}) or
            (sample.get("width"), sample.get("height")) == (400, 300) and close_enough(sample["rgb"], GREEN), 20), \
            sample
        # The track's session ends when the page stops the track. Firefox may hold a second
        # one (seen: a second Start, restored from the first one's token with no picker),
        # which it keeps after the track stops, until it exits.
        sharing = set(portal_sessions(bus))
        assert sharing
        assert ff.script("return window.stop()") is True
        assert limentest.wait_until(lambda: len(sharing & set(portal_sessions(bus))) < len(sharing), 10), \
            portal_sessions(bus)
        assert kde.alive()
    finally:
        if ff:
            ff.close()
        session.close()
