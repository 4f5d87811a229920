"""A selection in limen-kde's real file dialog is answered from the view, as it is at the
moment the person accepts, whichever way they accept: Return in the view, Return in the
Name field, the Open button, a double-click; while the folder is still being listed (a
folder of many files takes KDE's view seconds) and after. Before, a select-all during the
listing made KFileWidget read the Name field (cut at 32,767 characters) and answer
"The file ... could not be found", and the app got nothing. Driven under Xvfb with xdotool
on limen-kde's impl interface."""

import os
import re
import subprocess
import time

import pytest

import kde_helpers as kh
import many_files as mf
from limentest import GLib

# Large enough that KDE's view is still listing when the keys arrive (it lists 20,000 files
# in several seconds here); every "during" test checks, from limen-kde's log, that it was.
N = int(os.environ.get("LIMEN_LISTING_FILES", "20000"))
# During the listing the keys come once this many are listed: more quoted names than the
# Name field holds (32,767 characters, about 3,000 names).
EARLY = 5000
LISTED = "file list loaded:"
READY = "file widget ready:"


@pytest.fixture
def kde(bus, x):
    # Double-click mode, so that one click only selects (KDE's default since Plasma 5.25).
    kh.write_kdeglobals(bus, "[KDE]\nSingleClick=false\n")
    return kh.start_kde_x11(bus, x, QT_LOGGING_RULES="limen.shim.debug=true")


@pytest.fixture
def kde_by_size(bus, x):
    """limen-kde as kde(), its file view sorted by size, largest first (limen-kde reads the
    view settings from its own limen-kderc, not from kdeglobals)."""
    kh.write_kdeglobals(bus, "[KFileWidget]\nSort by=Size\nSort reversed=true\n", name="limen-kderc")
    kh.write_kdeglobals(bus, "[KDE]\nSingleClick=false\n")
    return kh.start_kde_x11(bus, x, QT_LOGGING_RULES="limen.shim.debug=true")


def open_many(bus, x, kde, folder, title):
    handle = kh.new_handle(bus)
    opts = {"multiple": GLib.Variant("b", True),
            "current_folder": GLib.Variant("ay", folder.encode() + b"\0")}
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile", (handle, "org.example.App", "", title, opts),
                        "(osssa{sv})", timeout=120000)
    wid = x.wait_window(title, timeout=60)
    limen_wait(kde, READY, 60)
    return call, wid


def limen_wait(kde, marker, timeout):
    deadline = time.monotonic() + timeout
    while marker not in kde.output():
        assert time.monotonic() < deadline, f"no {marker!r}: {kde.output()[-2000:]}"
        time.sleep(0.02)


def wait_partly_listed(kde, timeout=120):
    """Until limen-kde's view lists EARLY files or more (limen.shim debug: "listing: N files
    so far"); asserts that the listing has not finished yet."""
    deadline = time.monotonic() + timeout
    while True:
        out = kde.output()
        counts = [int(m) for m in re.findall(r"listing: (\d+) files so far", out)]
        assert LISTED not in out, "the listing finished too soon: raise LIMEN_LISTING_FILES"
        if counts and max(counts) >= EARLY:
            return
        assert time.monotonic() < deadline, out[-2000:]
        time.sleep(0.01)


def accepted_count(kde, during):
    """How many files the dialog took from its view, as it logged on accepting."""
    m = re.findall(r"accepted from the view: (\d+) files, (\w+ ?\w*)", kde.output())
    assert m, kde.output()[-3000:]
    n, when = m[-1]
    assert when == ("while listing" if during else "listed")
    return int(n)


def view_point(x, wid):
    """A point in the file view: right of the places panel, below the navigator."""
    wx, wy, w, h = x.geometry(wid)
    return wx + int(w * 0.62), wy + int(h * 0.42)


def highlighted_rows(x, wid, px):
    """The runs (top, height) of highlight-coloured pixels down window @wid's column @px on
    the screen: selected rows in the view. Runs shorter than 6 pixels (a focus frame's line)
    are left out."""
    _, wy, _, h = x.geometry(wid)
    col = subprocess.run(["import", "-window", "root", "-crop", f"1x{h}+{px}+{wy}", "+repage", "-depth", "8",
                          "rgb:-"], env=dict(os.environ, **x.env()), capture_output=True, check=True).stdout
    runs, top = [], None
    for i in range(len(col) // 3 + 1):
        rgb = col[3 * i:3 * i + 3]
        # Saturated: the selection's colour, not the greys and black of the rest.
        if len(rgb) == 3 and max(rgb) - min(rgb) > 60:
            top = i if top is None else top
        elif top is not None:
            if i - top >= 6:
                runs.append((wy + top, i - top))
            top = None
    return runs


def select_all_find_first_row(x, wid, timeout=90):
    """mf.select_all_in_view(), watching the view on the screen at view_point()'s column: the
    ctrl+clicked row is highlighted first (a row's height; rows inserted above it while the
    folder is listed move it down, never up), then the select-all, whose topmost highlighted
    row above the ctrl+clicked one is the view's first row. A point in that row."""
    x.focus(wid, 0.3)
    px, py = view_point(x, wid)
    x.run("xdotool", "mousemove", "--sync", str(px), str(py))
    x.run("xdotool", "keydown", "ctrl", "click", "1", "keyup", "ctrl")
    deadline = time.monotonic() + timeout
    while not (runs := highlighted_rows(x, wid, px)):
        assert time.monotonic() < deadline, f"no row selected by the click: {x.screenshot('first-row.png')}"
        time.sleep(0.1)
    clicked_top, row_height = runs[0]
    x.run("xdotool", "key", "ctrl+a")
    while not (above := [r for r in highlighted_rows(x, wid, px) if r[0] < clicked_top]):
        assert time.monotonic() < deadline, f"no selected first row in the view: {x.screenshot('first-row.png')}"
        time.sleep(0.1)
    return px, above[0][0] + row_height // 2


def accept(x, wid, way):
    """Accept the dialog's selection @way; the view has the focus and a selection."""
    if way == "view-return":
        x.run("xdotool", "key", "Return")
    elif way == "name-return":
        # alt+n: the Name field's mnemonic ("&Name:"); its text is not touched.
        x.run("xdotool", "key", "alt+n")
        time.sleep(0.1)
        x.run("xdotool", "key", "Return")
    elif way == "open-button":
        # alt+o: the Open button's mnemonic ("&Open"), a click on it.
        x.run("xdotool", "key", "alt+o")


def outcome(call):
    # Bounded: a dialog that stays open (KDE's "could not be found") fails here.
    return call.wait(timeout=60)


@pytest.mark.parametrize("during", [True, False], ids=["during-listing", "after-listing"])
@pytest.mark.parametrize("way", ["view-return", "name-return", "open-button"])
def test_select_all_and_accept(bus, x, kde, way, during):
    folder, names = mf.make_folder(bus.home, N)
    call, wid = open_many(bus, x, kde, folder, "Pick while listing")
    if during:
        wait_partly_listed(kde)
    else:
        limen_wait(kde, LISTED, 120)
    mf.select_all_in_view(x, wid)
    accept(x, wid, way)
    sent = time.monotonic()
    response, results = outcome(call)
    assert response == 0, kde.output()[-3000:]
    uris = results["uris"]
    prefix = "file://" + folder + "/"
    assert all(u.startswith(prefix) for u in uris)
    got = [u[len(prefix):] for u in uris]
    assert len(set(got)) == len(got)
    assert set(got) <= set(names)
    # Exactly what the view held when the dialog was accepted: during the listing, more
    # than the Name field can carry (the selection grows with the rows listed inside it).
    assert len(got) == accepted_count(kde, during)
    if during:
        assert EARLY <= len(got) < N
    else:
        assert sorted(got) == names
    print(f"{way}, {'during' if during else 'after'} the listing: {len(got)} files, "
          f"{time.monotonic() - sent:.2f} s after the keys")


@pytest.mark.parametrize("during", [True, False], ids=["during-listing", "after-listing"])
def test_double_click_opens_the_file_clicked(bus, x, kde_by_size, during):
    """A double-click on a file in a multiple-selection dialog: the selection is that file
    (the click took the rest away), answered at once.

    The file clicked is the view's first row. The view sorts by size, largest first, and the
    only file that is not empty is the one the folder lists first (KIO's file worker lists in
    readdir order, as os.listdir() does): it is the first row from the first rows listed on,
    and no row is ever inserted before it. A row further down can change between the two
    presses of the double-click while the folder is listed (sorted by name, a row inserted
    above moves it); Qt then takes the second press for a new click on another file, as it
    would for a person, and the dialog stays open."""
    kde = kde_by_size
    folder, names = mf.make_folder(bus.home, N)
    first = os.listdir(folder)[0]
    with open(os.path.join(folder, first), "wb") as f:
        f.write(b"1")
    call, wid = open_many(bus, x, kde, folder, "Double-click while listing")
    if during:
        wait_partly_listed(kde)
    else:
        limen_wait(kde, LISTED, 120)
    px, py = select_all_find_first_row(x, wid)
    if during:
        assert LISTED not in kde.output(), "the listing finished too soon: raise LIMEN_LISTING_FILES"
    x.run("xdotool", "mousemove", "--sync", str(px), str(py), "click", "--repeat", "2", "--delay", "80", "1")
    response, results = outcome(call)
    assert response == 0, kde.output()[-3000:]
    assert results["uris"] == ["file://" + folder + "/" + first]
