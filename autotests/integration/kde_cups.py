"""A private cupsd with a cups-pdf queue for limen-kde's print tests (RECIPES.md)."""

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time

import limentest

CUPSD = "/usr/sbin/cupsd"
PPD = "/usr/share/ppd/cups-pdf/CUPS-PDF_opt.ppd"


def available():
    return all(os.path.exists(p) for p in (CUPSD, PPD, "/usr/lib/cups/backend/cups-pdf")) and \
        shutil.which("pdfinfo") and shutil.which("gs") and shutil.which("lpadmin")


class Cupsd:
    def __init__(self):
        # cupsd runs filters as "lp": the tree must be reachable by it, so a temp dir
        # of its own, not inside the test's 0700 dirs.
        self.dir = tempfile.mkdtemp(prefix="limen-cups-")
        os.chmod(self.dir, 0o755)
        for sub in ("spool", "cache", "state", "log", "ppd"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
            os.chmod(os.path.join(self.dir, sub), 0o1777 if sub == "spool" else 0o755)
        self.socket = os.path.join(self.dir, "cups.sock")
        with open(os.path.join(self.dir, "cupsd.conf"), "w") as f:
            f.write(f"""Listen {self.socket}
LogLevel warn
WebInterface No
Browsing No
DefaultAuthType None
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order allow,deny
    Allow all
  </Limit>
</Policy>
""")
        with open(os.path.join(self.dir, "cups-files.conf"), "w") as f:
            f.write(f"""ServerRoot {self.dir}
RequestRoot {self.dir}/spool
CacheDir {self.dir}/cache
StateDir {self.dir}/state
ErrorLog {self.dir}/log/error_log
AccessLog {self.dir}/log/access_log
PageLog {self.dir}/log/page_log
TempDir {self.dir}/spool
""")
        self.proc = subprocess.Popen([CUPSD, "-f", "-c", os.path.join(self.dir, "cupsd.conf"), "-s",
                                      os.path.join(self.dir, "cups-files.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.env = {"CUPS_SERVER": self.socket}
        limentest.wait_until(lambda: os.path.exists(self.socket), 15)
        self.run("lpadmin", "-p", "PDF", "-E", "-v", "cups-pdf:/", "-P", PPD)
        self.run("lpadmin", "-d", "PDF")

    def run(self, *argv):
        return subprocess.run(list(argv), env=dict(os.environ, **self.env), capture_output=True, text=True,
                              check=True, timeout=30)

    def wait_output(self, title, timeout=60):
        """The PDF cups-pdf wrote for the job titled @title (in the job owner's ~/PDF)."""
        out = os.path.join(os.path.expanduser("~root"), "PDF")
        deadline = time.time() + timeout
        while time.time() < deadline:
            hits = [p for p in glob.glob(os.path.join(out, "*.pdf")) if title in os.path.basename(p)]
            if hits:
                # cups-pdf writes then renames; give it a moment to finish.
                time.sleep(0.5)
                return hits[0]
            time.sleep(0.2)
        with open(os.path.join(self.dir, "log", "error_log"), errors="replace") as f:
            raise TimeoutError(f"no PDF for {title!r}; cupsd log:\n{f.read()[-3000:]}")

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def make_pdf(path, pages):
    """A PDF with @pages numbered pages (Ghostscript's pdfwrite from a tiny PostScript)."""
    ps = path + ".ps"
    with open(ps, "w") as f:
        f.write("%!PS\n")
        for i in range(1, pages + 1):
            f.write(f"/Helvetica findfont 48 scalefont setfont 100 500 moveto (Page {i}) show showpage\n")
    subprocess.run(["gs", "-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=pdfwrite", f"-sOutputFile={path}", ps],
                   check=True, capture_output=True, timeout=60)
    return path


def page_count(path):
    r = subprocess.run(["pdfinfo", path], capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    raise ValueError("pdfinfo gave no page count")
