"""The test harness hides what the machine happens to have installed. A base image's
vim.desktop answers text/plain and needs a terminal; a machine with a browser has http
handlers; a mimeapps.list picks defaults. None of that may reach a test: each test sees the
handlers it writes into its own XDG_DATA_HOME and nothing else, while the rest of the
system's data (the MIME database, icons, KDE's service data) stays visible."""

import os
import subprocess
import textwrap

import pytest

import limentest

PROBE = textwrap.dedent("""\
    import sys
    from gi.repository import Gio
    print(",".join(sorted(a.get_id() for a in Gio.AppInfo.get_all_for_type(sys.argv[1]))))
    d = Gio.AppInfo.get_default_for_type(sys.argv[1], False)
    print(d.get_id() if d else "")
    print(Gio.content_type_guess("x.png", None)[0])
    """)


def handlers(env, mime):
    r = subprocess.run([limentest.python_exe(), "-c", PROBE, mime], env=env, capture_output=True, text=True,
                       timeout=30, check=True)
    listed, default, png = r.stdout.splitlines()
    return set(filter(None, listed.split(","))), default, png


def write_entry(apps_dir, name, mime, terminal=False):
    os.makedirs(apps_dir, exist_ok=True)
    with open(os.path.join(apps_dir, name), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName={name}\nExec=true %f\nMimeType={mime};\n"
                f"Terminal={'true' if terminal else 'false'}\n")
    with open(os.path.join(apps_dir, "mimeinfo.cache"), "a") as f:
        f.write(f"[MIME Cache]\n{mime}={name};\n")


def test_machine_handlers_and_defaults_stay_out(tmp_path, monkeypatch):
    # A "machine" with a terminal-only handler for text/plain, chosen as the default both in
    # the system config and in the system data dir.
    share = tmp_path / "machine" / "share"
    write_entry(str(share / "applications"), "machine-vim.desktop", "text/plain", terminal=True)
    (share / "applications" / "mimeapps.list").write_text("[Default Applications]\ntext/plain=machine-vim.desktop\n")
    xdg = tmp_path / "machine" / "xdg"
    xdg.mkdir()
    (xdg / "mimeapps.list").write_text("[Default Applications]\ntext/plain=machine-vim.desktop\n")
    (xdg / "kde-mimeapps.list").write_text("[Default Applications]\ntext/plain=machine-vim.desktop\n")
    monkeypatch.setenv("XDG_DATA_DIRS", f"{share}:/usr/share")
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(xdg))

    # What the machine shows its own programs: the handler, as the default.
    machine_env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "empty"), XDG_CONFIG_HOME=str(tmp_path / "empty"))
    listed, default, _ = handlers(machine_env, "text/plain")
    assert "machine-vim.desktop" in listed and default == "machine-vim.desktop"

    bus = limentest.Bus()
    try:
        # A test's programs see none of it, but still have the MIME database.
        listed, default, png = handlers(bus.env, "text/plain")
        assert (listed, default, png) == (set(), "", "image/png")
        assert not os.path.exists(os.path.join(bus.env["XDG_CONFIG_DIRS"], "kde-mimeapps.list"))
        # The handler a test writes is the one it gets.
        write_entry(os.path.join(bus.data_home, "applications"), "own-editor.desktop", "text/plain")
        listed, default, _ = handlers(bus.env, "text/plain")
        assert listed == {"own-editor.desktop"}
    finally:
        bus.close()


def test_wireplumber_runs_where_logind_is_not(bus):
    """A fresh machine without systemd running has no /run/systemd/seats: WirePlumber's
    Bluetooth monitor, enabled by default, loads its logind plugin and WirePlumber ends at
    once, and every PipeWire test loses its session manager. The harness's WirePlumber runs
    without that monitor; here /run is empty, as on such a machine."""
    import shutil
    for tool in ("pipewire", "wireplumber", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    if os.geteuid() != 0:
        pytest.skip("needs root for a mount namespace")
    bus.start(["pipewire"])
    assert limentest.wait_until(lambda: os.path.exists(os.path.join(bus.runtime_dir, "pipewire-0")), 10)
    wp = bus.start(["unshare", "-m", "--propagation", "private", "sh", "-c",
                    "mount -t tmpfs none /run && exec wireplumber"])
    # WirePlumber either ends within its start-up (the logind plugin failing) or keeps running.
    assert not limentest.wait_until(lambda: not wp.alive(), 3), wp.output()[-2000:]
