"""A selection of thousands of files in limen-kde's real file dialog reaches a sandboxed
app whole: the dialog takes it from the view, not from the Name field's quoted list (a
QLineEdit keeps at most 32,767 characters, about 3,000 names). Through limen-portal and
limen-documents, driven under Xvfb as a person does it (see many_files.py). The times are
printed; the benchmark with the reference beside it is autotests/bench/bench-kde-many-files.py."""

import os
import time

import pytest

import kde_helpers as kh
import limentest
import many_files as mf

N = int(os.environ.get("LIMEN_MANY_FILES", "5000"))


@pytest.fixture(params=[("", "1"), ("de", "2")], ids=["en-100", "de-200"])
def look(request):
    """(LANGUAGE, QT_SCALE_FACTOR) of the dialog."""
    return request.param


@pytest.fixture
def stack(bus, x, look):
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    return mf.start_limen_stack(bus, x, env={"LANGUAGE": look[0], "QT_SCALE_FACTOR": look[1]})


def test_thousands_of_files_selected_in_the_view_all_come_back(bus, x, stack, look):
    folder, names = mf.make_folder(bus.home, N)
    proc = mf.start_client(bus, "org.example.Many", folder, "Pick many", 120)
    try:
        wid = x.wait_window("Pick many", timeout=30)
        mf.wait_listed(stack, N, 60)
        mf.select_all_in_view(x, wid)
        time.sleep(0.5)
        x.screenshot(f"file-dialog-many-selected-{look[0] or 'en'}-{look[1]}00.png")
        t0 = mf.press_open(x)
        res = mf.client_result(proc, 150)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not res.get("timeout"), stack.output()[-3000:]
    print(f"{N} files: Open to Response {res['at'] - t0:.2f} s")
    assert res["response"] == 0
    got = mf.doc_names(res["uris"], bus.runtime_dir)
    assert len(res["uris"]) == N
    assert sorted(got) == names
    assert len(set(res["uris"])) == N
    # And the app reads them through its documents: the first, one in the middle, the last.
    for u in (res["uris"][0], res["uris"][N // 2], res["uris"][-1]):
        assert os.path.exists(u[len("file://"):]), u


@pytest.mark.parametrize("look", [("", "1")], ids=["en-100"], indirect=True)
def test_typed_names_still_win_over_the_view(bus, x, stack):
    """After the selection the user types names into the Name field: those are opened
    (KFileWidget's own parsing), not the view's selection."""
    folder, names = mf.make_folder(bus.home, 50)
    proc = mf.start_client(bus, "org.example.Many", folder, "Pick typed", 60)
    try:
        wid = x.wait_window("Pick typed", timeout=30)
        mf.wait_listed(stack, 50, 60)
        mf.select_all_in_view(x, wid)
        time.sleep(0.3)
        # alt+n: the Name field's mnemonic ("&Name:") in KFileWidget
        x.run("xdotool", "key", "alt+n", "ctrl+a", "BackSpace")
        x.type_text(f'"{names[3]}" "{names[7]}"')
        mf.press_open(x)
        res = mf.client_result(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not res.get("timeout"), stack.output()[-3000:]
    assert res["response"] == 0
    assert sorted(mf.doc_names(res["uris"], bus.runtime_dir)) == [names[3], names[7]]
