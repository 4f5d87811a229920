"""What a sandboxed app hands over that ends up run, linked or trusted on the host (issue 39,
item 5): Background's autostart entry, files opened through OpenURI, the mail client's
command line, notification icons, shortcut ids and USB device ids. Each test plays the
hostile app and checks that nothing of its choosing runs outside its sandbox."""
import html
import os
import subprocess
import urllib.parse

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

HERE = os.path.dirname(os.path.abspath(__file__))
APP = "org.example.App"
BG = "org.freedesktop.portal.Background"
OPEN = "org.freedesktop.portal.OpenURI"

def built(name):
    try:
        return bool(limentest.binary(name))
    except FileNotFoundError:
        return False


hooks = pytest.mark.skipif(
    "test hooks: compiled in" not in subprocess.run([limentest.binary("limen-portal"), "--version"],
                                                    capture_output=True, text=True).stdout,
    reason="built without LIMEN_TEST_HOOKS")


def read_entry(path):
    kf = GLib.KeyFile()
    kf.load_from_file(path, GLib.KeyFileFlags.NONE)
    return {k: kf.get_string("Desktop Entry", k) for k in kf.get_keys("Desktop Entry")[0]}


# ---- Background: the autostart entry ------------------------------------------------------

SNAP_INFO = ("[Snap Info]\nInstanceName=hello\nAppName=hello\nCommonID=org.example.Hello\n"
             "DesktopFile=hello_hello.desktop\nHasNetworkStatus=true\n")


# What snapd writes (GIO loads a desktop file only when its program exists: env does).
SNAPD_EXEC = "env BAMF_DESKTOP_FILE_HINT=/var/lib/snapd/desktop/applications/hello_hello.desktop /snap/bin/hello %U"


def start_as_snap(bus):
    md = os.path.join(bus.root, "snap-info")
    with open(md, "w") as f:
        f.write(SNAP_INFO)
    rh.setup(bus, ["background", "access"], portal_env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "snap",
                                                        "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA": md})
    rh.start_documents(bus)


@hooks
@pytest.mark.parametrize("snapd_wrote_one", [True, False])
def test_snap_autostart_never_runs_its_own_command_line(bus, snapd_wrote_one):
    """A Snap asking for autostart with commandline ['/bin/sh', '-c', …]: the session would run
    that at the next login outside the snap's confinement. The entry starts the snap the way
    snapd's desktop file for it says, or there is no entry."""
    if snapd_wrote_one:
        apps = os.path.join(bus.data_home, "applications")
        os.makedirs(apps)
        with open(os.path.join(apps, "hello_hello.desktop"), "w") as f:
            f.write(f"[Desktop Entry]\nType=Application\nName=Hello\nExec={SNAPD_EXEC}\n")
    start_as_snap(bus)
    marker = os.path.join(bus.root, "escaped")
    response, results = rh.Client(bus).request(BG, "RequestBackground", ("", {
        "autostart": v("b", True), "commandline": v("as", ["/bin/sh", "-c", f"touch {marker}"])}), "(sa{sv})")
    path = os.path.join(bus.config_home, "autostart", "snap.hello.desktop")
    assert response == 0 and results["background"]
    assert results["autostart"] == snapd_wrote_one
    if snapd_wrote_one:
        assert read_entry(path)["Exec"] == SNAPD_EXEC
    else:
        assert not os.path.exists(path)


def test_flatpak_autostart_quotes_every_hostile_word(bus):
    """Field codes, quotes, shell words, newlines and option-like words of a Flatpak app's
    commandline stay words of the app's own command inside its sandbox: parsed back as the
    session does (GLib's desktop entry rules), the line is exactly `flatpak run --command=W0
    APP W1 …`."""
    rh.setup(bus, ["background", "access"])
    rh.start_documents(bus)
    words = ["/bin/sh -c 'touch /tmp/x'", "%f", "%%u", "--filesystem=host", '"; rm -rf ~; "', "$(id)",
             "`id`", "a\nExec=/bin/sh", "back\\slash", ""]
    text = "('', {'handle_token': <'bg'>, 'autostart': <true>, 'commandline': <%s>})" % (
        GLib.Variant("as", words).print_(False),)
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)
    assert result == (0, {"background": True, "autostart": True})
    path = os.path.join(bus.config_home, "autostart", APP + ".desktop")
    with open(path) as f:
        groups = [line for line in f if line.startswith("[")]
    assert groups == ["[Desktop Entry]\n"]
    entry = read_entry(path)
    assert set(entry) == {"Type", "Name", "Exec", "X-Flatpak", "X-XDP-Autostart"}
    # Split as GLib's launcher does, then each word's field codes expanded (only %% is left).
    ok, argv = GLib.shell_parse_argv(entry["Exec"])
    assert ok
    assert [a.replace("%%", "%") for a in argv] == ["flatpak", "run", "--command=" + words[0], APP] + words[1:]


# ---- OpenURI: a file the app hands over to a host handler --------------------------------

def install_app(bus, desktop_id, types, log, code="%f"):
    """A handler of @types that writes what it was given (@code: %f a path, %u a URI) to @log."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, desktop_id + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=" + desktop_id + "\n"
                f"Exec=sh -c 'echo \"{desktop_id} $1\" >> {log}' sh {code}\n"
                "MimeType=" + ";".join(types) + ";\n")
    with open(os.path.join(apps, "mimeinfo.cache"), "a") as f:
        if f.tell() == 0:
            f.write("[MIME Cache]\n")
        for t in types:
            f.write(f"{t}={desktop_id}.desktop;\n")


OPEN_FILE_CLIENT = r'''
import os, sys, time
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
path, method = %r
result = []
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda *a: result.append((a[2], a[5])))
fds = Gio.UnixFDList.new()
fds.append(os.open(path, os.O_RDONLY))
try:
    r, _ = conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                            "org.freedesktop.portal.OpenURI", method,
                                            GLib.Variant("(sha{sv})", ("", 0, {"handle_token": GLib.Variant("s", "o")})),
                                            None, 0, 10000, fds, None)
except GLib.Error as e:
    print("ERROR " + (Gio.DBusError.get_remote_error(e) or e.message))
    sys.exit(0)
handle = r.unpack()[0]
end = time.time() + 30
while not [x for p, x in result if p == handle] and time.time() < end:
    GLib.MainContext.default().iteration(True)
print("RESPONSE %%d" %% [x for p, x in result if p == handle][0].unpack()[0])
'''


def open_file_sandboxed(bus, path, method="OpenFile"):
    r = limentest.run_sandboxed(bus, APP, OPEN_FILE_CLIENT % ((path, method),), binds=[os.path.dirname(path)])
    assert r.stdout.strip(), r.stderr
    return r.stdout.strip().splitlines()[-1]


@pytest.fixture
def opener(bus):
    log = os.path.join(bus.root, "opened.log")
    open(log, "w").close()
    return log


PROGRAMS = [
    ("setup.exe", b"MZ\x90\x00" + bytes(60), "application/x-ms-dos-executable"),
    ("tool.jar", b"PK\x03\x04" + bytes(60), "application/x-java-archive"),
    ("evil.desktop", b"[Desktop Entry]\nType=Application\nName=x\nExec=sh -c id\n", "application/x-desktop"),
    ("run.sh", b"#!/bin/sh\nid\n", "application/x-shellscript"),
    ("a.out", b"\x7fELF\x02\x01\x01" + bytes(60), "application/x-executable"),
    ("noext", b"\x7fELF\x02\x01\x01" + bytes(60), "application/x-executable"),
    ("app.AppImage", b"\x7fELF\x02\x01\x01" + bytes(60), "application/vnd.appimage"),
]


@pytest.mark.parametrize("name,content,mime", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_sandboxed_open_file_of_a_program_is_refused(bus, opener, name, content, mime):
    """Wine's handler of .exe, Java's of .jar, a launcher, a script, a binary: with the only
    handler of its type, the reference opens it at once, which runs the app's program on the
    host. A sandboxed app's program is refused before anything is launched."""
    install_app(bus, "org.example.Runner", [mime], opener)
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    folder = os.path.join(bus.root, "sandbox-files")
    os.makedirs(folder)
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(content)
    os.chmod(path, 0o755)
    assert open_file_sandboxed(bus, path) == "ERROR org.freedesktop.portal.Error.NotAllowed"
    assert open(opener).read() == ""


def test_sandboxed_open_file_of_a_document_still_opens(bus, opener):
    """The counterpart: a text file (even one marked executable) opens in its only handler."""
    install_app(bus, "org.example.Editor", ["text/plain"], opener)
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    folder = os.path.join(bus.root, "sandbox-files")
    os.makedirs(folder)
    path = os.path.join(folder, "notes.txt")
    with open(path, "w") as f:
        f.write("words\n")
    os.chmod(path, 0o755)
    assert open_file_sandboxed(bus, path) == "RESPONSE 0"
    assert limentest.wait_until(lambda: f"org.example.Editor {path}" in open(opener).read().splitlines())


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "FILE:///etc/passwd", "File://localhost/etc/passwd"])
def test_sandboxed_open_uri_of_a_host_path_is_refused(bus, opener, uri):
    """A path names a file of the app's own view: a sandboxed app hands over a file only as an
    fd (OpenFile), so that a host file it cannot see is never opened for it."""
    install_app(bus, "org.example.Editor", ["text/plain"], opener)
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        "('', %s, {'handle_token': <'o'>})" % GLib.Variant("s", uri).print_(False))
    assert (kind, result) == ("ERROR", "org.freedesktop.portal.Error.InvalidArgument")
    assert open(opener).read() == ""


@pytest.mark.parametrize("uri", [
    "mailto:evil@example.org?subject=logs&attach=/home/me/.ssh/id_rsa",
    "mailto:evil@example.org?ATTACHMENT=file:///home/me/.ssh/id_rsa",
    "mailto:evil@example.org?body=x&%61ttach=%2Fhome%2Fme%2F.ssh%2Fid_rsa",
    "mailto:?attach=/etc/shadow#x",
])
def test_sandboxed_mailto_naming_files_to_attach_is_refused(bus, opener, uri):
    """mailto: opens in the default mail client without a question; clients that take
    "attach" (Evolution, KMail) attach the named host file to the app's message. A sandboxed
    app attaches only files it hands over as fds (Email)."""
    install_app(bus, "org.example.Mail", ["x-scheme-handler/mailto"], opener, code="%u")
    with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\nx-scheme-handler/mailto=org.example.Mail.desktop\n")
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        "('', %s, {'handle_token': <'o'>})" % GLib.Variant("s", uri).print_(False))
    assert (kind, result) == ("ERROR", "org.freedesktop.portal.Error.InvalidArgument")
    assert open(opener).read() == ""


def test_sandboxed_mailto_without_attachments_still_opens(bus, opener):
    install_app(bus, "org.example.Mail", ["x-scheme-handler/mailto"], opener, code="%u")
    with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\nx-scheme-handler/mailto=org.example.Mail.desktop\n")
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    uri = "mailto:a@example.org?subject=attach%20this&body=attachment"
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        "('', %s, {'handle_token': <'o'>})" % GLib.Variant("s", uri).print_(False))
    assert (kind, result[0]) == ("RESPONSE", 0)
    assert limentest.wait_until(lambda: f"org.example.Mail {uri}" in open(opener).read().splitlines())


# ---- Email: the mail client's command line ------------------------------------------------

def parse_compose_word(word):
    """Thunderbird's reading of -compose's key='value',key=value list: a quoted value runs to
    the next quote, an unquoted one to the next comma. [(key, value)] in order."""
    pairs, i = [], 0
    while i < len(word):
        eq = word.index("=", i)
        key = word[i:eq]
        if word[eq + 1:eq + 2] == "'":
            end = word.index("'", eq + 2)
            value, i = word[eq + 2:end], end + 2
        else:
            end = word.find(",", eq + 1)
            end = len(word) if end < 0 else end
            value, i = word[eq + 1:end], end + 1
        pairs.append((key, value))
    return pairs


@pytest.mark.skipif(not built("limen-kde"), reason="built without the KDE backend")
def test_thunderbird_compose_line_keeps_every_value_in_its_place(bus, tmp_path):
    """With Thunderbird as the mailto handler, KIO 5.103 writes the app's subject, body and
    attachment paths into `-compose to='…',subject='…',attachment='…'` as they are: a quote
    in any of them adds fields of the app's choosing, such as a second attachment naming the
    person's SSH key. Each value must stay one value."""
    import kde_helpers as kh
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out = tmp_path / "args"
    (bin_dir / "thunderbird").write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {out}.tmp\n"
                                         f"mv {out}.tmp {out}\n")
    (bin_dir / "thunderbird").chmod(0o755)
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps)
    with open(os.path.join(apps, "thunderbird.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Thunderbird\nExec=thunderbird %u\n"
                "MimeType=x-scheme-handler/mailto;\n")
    with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n")
    # A folder of the app's own whose name carries the rest of the attack.
    folder = os.path.join(bus.home, "x',attachment='", "a,b")
    os.makedirs(folder)
    attachment = os.path.join(folder, "report's.pdf")
    with open(attachment, "w") as f:
        f.write("%PDF")
    subject = "Hi',attachment='/home/me/.ssh/id_rsa"
    # Near the option table's 64 KiB, in a script of two bytes a letter: still one word that
    # the kernel takes (128 KiB at most).
    body = "Hello',to='evil@example.org,<b>x</b> 100%\n" + "Привет, мир! " * 2700
    kh.start_kde(bus, env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    response, _ = kh.call_impl(bus, "Email", "ComposeEmail", (kh.new_handle(bus), "org.example.App", "", {
        "addresses": GLib.Variant("as", ["a@example.org", "b@example.org"]),
        "subject": GLib.Variant("s", subject), "body": GLib.Variant("s", body),
        "attachments": GLib.Variant("as", [attachment])}), "(ossa{sv})", timeout=60000)
    assert response == 0
    assert limentest.wait_until(lambda: out.exists(), 10)
    args = out.read_text().splitlines()
    assert args[0] == "-compose" and len(args) == 2
    pairs = parse_compose_word(args[1])
    keys = [k for k, _ in pairs]
    assert sorted(keys) == ["attachment", "body", "subject", "to"], pairs
    fields = dict(pairs)
    assert fields["to"] == "a@example.org,b@example.org"
    assert [GLib.filename_from_uri(u)[0] for u in fields["attachment"].split(",")] == [attachment]
    assert urllib.parse.unquote(fields["subject"]) == subject
    # Thunderbird takes the body as HTML: the app's markup arrives as text.
    assert urllib.parse.unquote(fields["body"]) == html.escape(body, quote=False).replace('"', "&quot;")


@pytest.mark.parametrize("address", ["o'x@example.org", "a@example.org'"])
def test_email_address_with_a_quote_is_invalid(bus, address):
    """A quote would end the address on a mail client's command line: refused like a comma."""
    rh.setup(bus, ["email"])
    with pytest.raises(GLib.Error) as e:
        rh.Client(bus).request("org.freedesktop.portal.Email", "ComposeEmail",
                               ("", {"addresses": v("as", [address])}), "(sa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


ATTACH_CLIENT = r'''
import os, socket, sys
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
kind, folder = %r
if kind == "fifo":
    os.mkfifo(folder + "/pipe")
    fd = os.open(folder + "/pipe", os.O_RDWR | os.O_NONBLOCK)
elif kind == "dir":
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
elif kind == "socket":
    fd = socket.socketpair()[0].detach()
elif kind == "proc":
    fd = os.open("/proc/self/environ", os.O_RDONLY)
else:
    with open("/tmp/report.txt", "w") as f:   # the sandbox's own /tmp: no such file on the host
        f.write("x")
    fd = os.open("/tmp/report.txt", os.O_RDONLY)
fds = Gio.UnixFDList.new()
fds.append(fd)
try:
    conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                     "org.freedesktop.portal.Email", "ComposeEmail",
                                     GLib.Variant("(sa{sv})", ("", {"attachment_fds": GLib.Variant("ah", [0])})),
                                     None, 0, 10000, fds, None)
    print("ACCEPTED")
except GLib.Error as e:
    print("ERROR " + (Gio.DBusError.get_remote_error(e) or e.message) + " " + e.message)
'''


@pytest.mark.parametrize("kind", ["fifo", "dir", "socket", "proc", "sandbox-tmp"])
def test_sandboxed_email_attachment_that_is_no_host_file_is_refused(bus, tmp_path, kind):
    """An attachment becomes a path the mail client opens on the host: a FIFO (which would
    block it), a folder, a socket, the app's /proc files, or a file the host sees elsewhere
    (a file of the sandbox's own /tmp, here) never reach the backend, and no host path is told."""
    backend = rh.setup(bus, ["email"])
    folder = tmp_path / "files"
    folder.mkdir()
    r = limentest.run_sandboxed(bus, APP, ATTACH_CLIENT % ((kind, str(folder)),), binds=[str(folder)])
    out = r.stdout.strip()
    assert out.startswith("ERROR "), (out, r.stderr)
    name = out.split()[1]
    assert name in ("org.freedesktop.portal.Error.InvalidArgument", "org.freedesktop.portal.Error.NotAllowed"), out
    assert str(tmp_path) not in out and "/proc/" not in out
    assert backend.requests("ComposeEmail") == []
