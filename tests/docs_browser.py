"""Headless Chromium driven through the DevTools protocol over ``--remote-debugging-pipe`` (the
standard library only: JSON messages ended by a NUL byte on file descriptors 3 and 4), for the
documentation site's test (tests/test_docs_site.py)."""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any


class Browser:
    """One headless Chromium process; every call is bounded by ``timeout`` seconds in all."""

    def __init__(self, chromium: str, timeout: float = 60.0) -> None:
        to_chromium, self._write_fd = os.pipe()
        self._read_fd, from_chromium = os.pipe()

        def give_pipes() -> None:  # in the child: the pipe's ends become its fds 3 and 4
            read_end, write_end = os.dup(to_chromium), os.dup(from_chromium)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--window-size=1280,900", "--hide-scrollbars", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=give_pipes,
            close_fds=False,
        )
        os.close(to_chromium)
        os.close(from_chromium)
        self._deadline = time.monotonic() + timeout
        self._id, self._buffer = 0, b""

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Call a DevTools method and return its result."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._write_fd, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self._deadline - time.monotonic()
            if left <= 0 or not select.select([self._read_fd], [], [], left)[0]:
                raise TimeoutError("headless chromium did not answer in time")
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError("headless chromium closed its pipe (did it crash?)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def open(self, url: str) -> str:
        """A new tab at ``url``; returns its session."""
        target = self.send("Target.createTarget", url=url)["targetId"]
        return self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def evaluate(self, session: str, expression: str) -> Any:
        """The value of a JavaScript expression in the tab."""
        result = self.send("Runtime.evaluate", session, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, session: str, expression: str, timeout: float = 15.0) -> Any:
        """Evaluate ``expression`` until it is truthy (or ``timeout`` passes); return its value."""
        end = time.monotonic() + timeout
        value = None
        while time.monotonic() < end:
            try:
                value = self.evaluate(session, expression)
            except RuntimeError as error:  # the tab is between two documents
                if "context" not in str(error):
                    raise
            if value:
                return value
            time.sleep(0.1)
        return value

    def screenshot(self, session: str, path: Path) -> None:
        """Save what the tab shows as a PNG."""
        data = self.send("Page.captureScreenshot", session, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write_fd)
        os.close(self._read_fd)
