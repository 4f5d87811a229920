"""Firefox driven over Marionette (its own remote protocol: TCP, each message "LENGTH:JSON",
commands [0, id, name, params], answers [1, id, error, result]), for tests where a real
Firefox is the portal's client.

    ff = firefox.Firefox(env, profile_dir, prefs={...})
    ff.navigate("file:///page.html")
    ff.script("return 1 + 1")           # -> 2
    ff.click("#button")                 # a trusted click: counts as the person's gesture
    ff.close()
"""

import json
import os
import shutil
import socket
import subprocess
import time

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox") or "/usr/bin/firefox-esr"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def available():
    return os.path.exists(FIREFOX)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Firefox:
    def __init__(self, env, profile_dir, prefs=None, log_path=None, timeout=60):
        self.port = free_port()
        os.makedirs(profile_dir, exist_ok=True)
        base = {"marionette.port": self.port, "browser.shell.checkDefaultBrowser": False,
                "browser.startup.homepage_override.mstone": "ignore", "datareporting.policy.dataSubmissionEnabled": False,
                "toolkit.telemetry.reportingpolicy.firstRun": False, "app.update.disabledForTesting": True,
                "browser.aboutwelcome.enabled": False, "browser.startup.page": 0}
        base.update(prefs or {})
        with open(os.path.join(profile_dir, "user.js"), "w") as f:
            for key, value in base.items():
                f.write(f"user_pref({json.dumps(key)}, {json.dumps(value)});\n")
        self.log_path = log_path
        log = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen([FIREFOX, "--marionette", "--no-remote", "--profile", profile_dir, "about:blank"],
                                     env=env, stdout=log, stderr=log, start_new_session=True)
        if log_path:
            log.close()
        self.sock = self._connect(time.monotonic() + timeout)
        self.buffer = b""
        self.next_id = 0
        self._read(time.monotonic() + timeout)          # the server's hello
        self.call("WebDriver:NewSession", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}},
                  timeout=timeout)

    def output(self):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def _connect(self, deadline):
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("firefox exited:\n" + self.output()[-4000:])
            try:
                return socket.create_connection(("127.0.0.1", self.port), timeout=1)
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError("no Marionette port:\n" + self.output()[-4000:])
                time.sleep(0.1)

    def _read(self, deadline):
        while True:
            if b":" in self.buffer:
                length, rest = self.buffer.split(b":", 1)
                if len(rest) >= int(length):
                    message, self.buffer = rest[:int(length)], rest[int(length):]
                    return json.loads(message)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Marionette")
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("Marionette closed its socket:\n" + self.output()[-4000:])
            self.buffer += chunk

    def call(self, name, params=None, timeout=30):
        self.next_id += 1
        data = json.dumps([0, self.next_id, name, params or {}]).encode()
        self.sock.sendall(str(len(data)).encode() + b":" + data)
        deadline = time.monotonic() + timeout
        while True:
            kind, mid, error, result = self._read(deadline)
            if kind == 1 and mid == self.next_id:
                if error:
                    raise RuntimeError(f"{name}: {error}")
                return result

    def navigate(self, url):
        self.call("WebDriver:Navigate", {"url": url})

    def script(self, source, *args):
        return self.call("WebDriver:ExecuteScript", {"script": source, "args": list(args)})["value"]

    def click(self, selector):
        element = self.call("WebDriver:FindElement", {"using": "css selector", "value": selector})["value"]
        self.call("WebDriver:ElementClick", {"id": element[ELEMENT]})

    def close(self):
        try:
            self.call("WebDriver:DeleteSession", timeout=5)
        except Exception:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
