"""A real Switchboard daemon for the tests: the built CLI (``node dist/cli/main.js --home H daemon``)
in a fresh home on a free port, found through its runtime file, ended by its PID."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLI = os.environ.get("SWITCHBOARD_CLI") or os.path.join(REPO, "dist", "cli", "main.js")
#: How long the daemon may take to write its runtime file.
START_TIMEOUT = 30.0


def clean_env():
    """This environment without any Switchboard or seed variables (the test run's marker stays)."""
    return {k: v for k, v in os.environ.items() if k == "SWITCHBOARD_TEST_RUN" or not (k.startswith("SWITCHBOARD_") or k.startswith("ENSO_RPC_"))}


class TestDaemon:
    def __init__(self):
        if not os.path.exists(CLI):
            raise RuntimeError("{} is missing: run npm run build first".format(CLI))
        self.home = tempfile.mkdtemp(prefix="sb-py-home-")
        os.chmod(self.home, 0o700)
        self.work = tempfile.mkdtemp(prefix="sb-py-work-")
        self.process = subprocess.Popen(
            [os.environ.get("NODE", "node"), CLI, "--home", self.home, "daemon", "--port", "0"],
            env=clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.info = self._await_runtime_file()

    def _await_runtime_file(self):
        path = os.path.join(self.home, "daemon.json")
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("the daemon exited: {}".format(self.process.stderr.read().decode("utf-8", "replace") if self.process.stderr else ""))
            try:
                with open(path, "r", encoding="utf-8") as f:
                    info = json.load(f)
                if info.get("port"):
                    return info
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("the daemon wrote no runtime file within {} s".format(START_TIMEOUT))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)
