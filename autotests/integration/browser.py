"""Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in,
fd 4 out, NUL-separated JSON), for tests where a real browser is the portal's client.

    b = browser.Chromium(env, profile_dir, url)
    page = b.page()                      # the session id of the first page
    b.evaluate(page, "1 + 1")           # -> 2; user_gesture=True counts as a click
    b.close()
"""

import json
import os
import select
import shutil
import subprocess
import time

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def available():
    return os.path.exists(CHROMIUM)


class Chromium:
    def __init__(self, env, profile_dir, url, extra_args=(), log_path=None, wrapper=(), pass_fds=()):
        """@wrapper: an argv Chromium runs under (bwrap ...), which must pass fds 3 and 4 on."""
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()
        argv = ["/bin/bash", "-c", f'exec "$0" "$@" 3<&{cmd_r} 4>&{res_w} {cmd_r}<&- {res_w}>&-', *wrapper, CHROMIUM,
                "--remote-debugging-pipe", "--no-sandbox", "--user-data-dir=" + profile_dir, "--no-first-run",
                "--no-default-browser-check", "--disable-gpu", "--password-store=basic", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                *extra_args, url]
        self.log_path = log_path
        log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(argv, env=env, pass_fds=(cmd_r, res_w) + tuple(pass_fds), stdout=log, stderr=log,
                                     start_new_session=True)
        if log_path:
            log.close()
        os.close(cmd_r)
        os.close(res_w)
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def output(self):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.res_r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.res_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe:\n" + self.output()[-4000:])
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self.cmd_w, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(f"chromium is gone (exit status {self.proc.poll()}):\n" + self.output()[-4000:]) from None
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply is None:
                raise TimeoutError(f"no answer to {method} within {timeout} s")
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def page(self, timeout=30):
        """Attach to the first page target; its session id."""
        deadline = time.monotonic() + timeout
        while True:
            pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if pages:
                return self.call("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})[
                    "sessionId"]
            if time.monotonic() > deadline:
                raise TimeoutError("chromium opened no page")
            time.sleep(0.2)

    def evaluate(self, session, expression, user_gesture=False, timeout=30):
        """The value of @expression in the page (awaited if it is a promise)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True,
                                           "userGesture": user_gesture}, session=session, timeout=timeout)
        if "exceptionDetails" in r:
            details = r["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return r["result"].get("value")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.call("Browser.close", timeout=5)
            except (RuntimeError, TimeoutError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        for fd in (self.cmd_w, self.res_r):
            try:
                os.close(fd)
            except OSError:
                pass
