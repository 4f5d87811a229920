"""What the first dialog of limen-kde loads on X11, and what it leaves behind: no OpenGL
(Qt's xcb plugin would load Mesa for every widget window; QT_XCB_GL_INTEGRATION=none is
set only while the QApplication is made), no KWayland (liblimen-qt-wayland.so is only for
wayland: parents on Wayland), and no QT_XCB_GL_INTEGRATION in what limen-kde starts later.
A value the user set is honoured and passed on."""

import os

import kde_helpers as kh
import limentest
from limentest import GLib

# (libGL.so.1 itself, glvnd's dispatcher, is a dependency of Qt5Gui: always there.)
GL_LIBS = ("libGLX_mesa", "swrast_dri", "libLLVM")
WAYLAND_LIBS = ("libKF5WaylandClient", "liblimen-qt-wayland")


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {os.path.basename(line.split()[-1]) for line in f if "/" in line}


def first_file_chooser(bus, x, title):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile", (handle, "org.example.App", "", title, {}), "(osssa{sv})")
    x.wait_window(title)
    return handle, call


def close(bus, handle, call):
    kh.close_request(bus, handle)
    response, _ = call.wait()
    assert response == 2


def fake_mailer_env(bus):
    """Install a mailto: handler that writes its environment; returns where."""
    out = os.path.join(bus.root, "mailer-env.txt")
    script = os.path.join(bus.root, "env-mailer")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\nenv > {out}.tmp && mv {out}.tmp {out}\n")
    os.chmod(script, 0o755)
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "envmail.desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName=Env Mail\nExec={script} %u\n"
                "MimeType=x-scheme-handler/mailto;\n")
    with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\nx-scheme-handler/mailto=envmail.desktop\n")
    return out


def mailer_environment(bus, out):
    response, _ = kh.call_impl(bus, "Email", "ComposeEmail", (kh.new_handle(bus), "org.example.App", "", {
        "addresses": GLib.Variant("as", ["a@example.org"])}), "(ossa{sv})", timeout=60000)
    assert response == 0
    assert limentest.wait_until(lambda: os.path.exists(out), 10)
    with open(out) as f:
        return dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)


def test_first_dialog_loads_no_gl_nor_kwayland(bus, x):
    kde = kh.start_kde_x11(bus, x)
    out = fake_mailer_env(bus)
    assert not any(lib.startswith("liblimen-qt") for lib in mapped_libraries(kde.pid))
    handle, call = first_file_chooser(bus, x, "First dialog")
    libs = mapped_libraries(kde.pid)
    assert "liblimen-qt.so" in libs
    assert "libqxcb.so" in libs
    assert not [lib for lib in libs if lib.startswith(GL_LIBS)], sorted(libs)
    assert not [lib for lib in libs if lib.startswith(WAYLAND_LIBS)], sorted(libs)
    close(bus, handle, call)
    # A second dialog (a new window) still gets none.
    handle, call = first_file_chooser(bus, x, "Second dialog")
    libs = mapped_libraries(kde.pid)
    assert not [lib for lib in libs if lib.startswith(GL_LIBS + WAYLAND_LIBS)], sorted(libs)
    close(bus, handle, call)
    # The variable was only ours while Qt read it: a mail client started now has none.
    env = mailer_environment(bus, out)
    assert "QT_XCB_GL_INTEGRATION" not in env
    assert env.get("DISPLAY") == x.display
    assert kde.alive()


def test_user_gl_integration_is_honoured(bus, x):
    kde = kh.start_kde_x11(bus, x, QT_XCB_GL_INTEGRATION="xcb_glx")
    out = fake_mailer_env(bus)
    handle, call = first_file_chooser(bus, x, "GL dialog")
    # Xvfb has GLX: with the user's choice Qt gives the window a GLX visual, as before.
    assert [lib for lib in mapped_libraries(kde.pid) if lib.startswith(GL_LIBS)]
    close(bus, handle, call)
    assert mailer_environment(bus, out).get("QT_XCB_GL_INTEGRATION") == "xcb_glx"
    assert kde.alive()


def icon_theme_line(kde):
    lines = [line for line in kde.output().splitlines() if "icon theme:" in line]
    assert lines, kde.output()[-2000:]
    return lines[-1]


def test_icon_theme_outside_plasma_is_kdes(bus, x):
    """Without the KDE platform theme (XDG_CURRENT_DESKTOP is not KDE here) Qt would look up
    icons in hicolor; the first dialog uses the theme KDE's settings name: Breeze by
    default, the one kdeglobals' [Icons] Theme names when it does."""
    kde = kh.start_kde_x11(bus, x, QT_LOGGING_RULES="limen.shim.debug=true")
    handle, call = first_file_chooser(bus, x, "Icons default")
    assert 'icon theme: "breeze" (Qt chose "hicolor" )' in icon_theme_line(kde)
    close(bus, handle, call)
    assert kde.alive()


def test_icon_theme_follows_kdeglobals(bus, x):
    kh.write_kdeglobals(bus, "[Icons]\nTheme=breeze-dark\n")
    kde = kh.start_kde_x11(bus, x, QT_LOGGING_RULES="limen.shim.debug=true")
    handle, call = first_file_chooser(bus, x, "Icons dark")
    assert 'icon theme: "breeze-dark"' in icon_theme_line(kde)
    close(bus, handle, call)
    assert kde.alive()
