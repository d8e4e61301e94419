"""The Python client against a real daemon: seed 000's lifecycle and every backend method."""
import json
import os
import socket
import socketserver
import threading
import time
import unittest

from switchboard_client import ConnectionFailed, EnsoBackend, EnsoRPCClient, RPCError, SwitchboardBackend, SwitchboardRPCClient, discover

from .daemon import TestDaemon

DAEMON = None  # type: TestDaemon


def setUpModule():
    global DAEMON
    DAEMON = TestDaemon()


def tearDownModule():
    DAEMON.stop()


def until(probe, timeout=15.0):
    """Polls ``probe`` until it returns something true; returns it, or fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError("never happened; last: {!r}".format(last))


SHELL = "bash --norc --noprofile"


class DiscoveryTest(unittest.TestCase):
    def test_runtime_file_when_no_environment(self):
        found = discover(env={"SWITCHBOARD_HOME": DAEMON.home})
        self.assertEqual(found["source"], "runtime file")
        self.assertEqual((found["host"], found["port"], found["token"]), (DAEMON.info["host"], DAEMON.info["port"], DAEMON.info["token"]))
        client = SwitchboardRPCClient(home=DAEMON.home)
        try:
            self.assertTrue(client.call("ping")["pong"])
        finally:
            client.close()

    def test_switchboard_variables_before_seed_variables_before_the_file(self):
        env = {"SWITCHBOARD_HOME": DAEMON.home, "ENSO_RPC_PORT": "1", "ENSO_RPC_TOKEN": "enso"}
        self.assertEqual(discover(env=env)["token"], "enso")
        self.assertEqual(discover(env=env)["port"], 1)
        env.update({"SWITCHBOARD_RPC_HOST": "127.0.0.1", "SWITCHBOARD_RPC_PORT": "2", "SWITCHBOARD_RPC_TOKEN": "sb"})
        self.assertEqual((discover(env=env)["port"], discover(env=env)["token"]), (2, "sb"))

    def test_seed_environment_names_reach_the_daemon(self):
        saved = {k: os.environ.get(k) for k in ("ENSO_RPC_HOST", "ENSO_RPC_PORT", "ENSO_RPC_TOKEN", "SWITCHBOARD_RPC_PORT", "SWITCHBOARD_RPC_TOKEN")}
        try:
            for k in ("SWITCHBOARD_RPC_PORT", "SWITCHBOARD_RPC_TOKEN"):
                os.environ.pop(k, None)
            os.environ.update({"ENSO_RPC_HOST": "127.0.0.1", "ENSO_RPC_PORT": str(DAEMON.info["port"]), "ENSO_RPC_TOKEN": DAEMON.info["token"]})
            client = EnsoRPCClient()
            try:
                self.assertTrue(client.call("ping")["pong"])
            finally:
                client.close()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class ErrorsTest(unittest.TestCase):
    def test_a_wrong_token_is_refused(self):
        client = SwitchboardRPCClient("127.0.0.1", DAEMON.info["port"], "wrong-token")
        try:
            with self.assertRaises(RPCError) as caught:
                client.call("list")
            self.assertEqual((caught.exception.code, caught.exception.name), (-32001, "INVALID_TOKEN"))
        finally:
            client.close()

    def test_an_unreachable_daemon_fails_after_the_retries(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        client = SwitchboardRPCClient("127.0.0.1", port, "t")
        with self.assertRaises(ConnectionFailed) as caught:
            client.call("ping")
        self.assertEqual((caught.exception.code, caught.exception.name), (-32003, "CONNECTION_FAILED"))
        self.assertIn("after 3 attempts", str(caught.exception))

    def test_errors_read_as_the_seed_s(self):
        backend = SwitchboardBackend(SwitchboardRPCClient(home=DAEMON.home))
        try:
            with self.assertRaises(RuntimeError) as caught:
                backend.send_text("no-such-pane", "x")
            self.assertEqual(str(caught.exception), "RPC Error -32002: pane not found: no-such-pane")
            self.assertEqual(caught.exception.name, "PANE_NOT_FOUND")
        finally:
            backend.client.close()


class LifecycleTest(unittest.TestCase):
    """Seed 000's lifecycle, then every backend method, on one pane."""

    def setUp(self):
        self.backend = EnsoBackend(EnsoRPCClient(home=DAEMON.home))
        self.assertIs(EnsoBackend, SwitchboardBackend)

    def tearDown(self):
        self.backend.client.close()

    def test_seed_lifecycle(self):
        b = self.backend
        pane = b.create_pane(SHELL, DAEMON.work, title="CCB-codex", env={"CCB_MARK": "forty"})
        self.assertRegex(pane, r"^p[0-9a-f]{8}$")
        b.set_current_pane_id(pane)
        self.assertEqual(b.get_current_pane_id(), pane)
        self.assertTrue(b.is_alive(pane))
        b.send_text(pane, "echo CCB_DONE: $((40+2)) $CCB_MARK", add_newline=True)
        text = until(lambda: (lambda t: t if "CCB_DONE: 42 forty" in t else None)(b.get_text(pane, lines=20)))
        self.assertIn("CCB_DONE: 42 forty", text)
        listed = [p for p in b.list_panes() if p["pane_id"] == pane]
        self.assertEqual(len(listed), 1)
        self.assertEqual((listed[0]["title"], listed[0]["alive"], listed[0]["cwd"]), ("CCB-codex", True, DAEMON.work))
        b.kill_pane(pane)
        until(lambda: not b.is_alive(pane))
        self.assertFalse(b.is_alive(pane))
        self.assertFalse(b.is_alive("p00000000"))

    def test_every_other_backend_method(self):
        b = self.backend
        pane = b.create_pane(SHELL, DAEMON.work, title="CCB-gemini-marker")
        try:
            self.assertEqual(b.find_pane_by_title_marker("CCB-gemini"), pane)
            self.assertEqual(b.find_pane_by_title_marker("gemini-marker"), pane)
            self.assertIsNone(b.find_pane_by_title_marker("no-such-marker"))
            b.activate(pane)
            self.assertEqual(b.get_current_pane_id(), pane)
            b.send_text(pane, "echo typed-then-$((6*7))")
            b.send_key(pane, "Enter")
            content = until(lambda: (lambda t: t if "typed-then-42" in t else None)(b.get_pane_content(pane, lines=10)))
            self.assertIn("typed-then-42", content)
            b.send_text(pane, "sleep 30")
            b.send_key(pane, "Enter")
            b.send_key(pane, "C-c")
            b.send_text(pane, "echo after-interrupt", add_newline=True)
            until(lambda: "after-interrupt\n" in b.get_text(pane, lines=10) + "\n")
            with self.assertRaises(RPCError) as bad_key:
                b.send_key(pane, "NoSuchKey")
            self.assertEqual(bad_key.exception.name, "INVALID_PARAMS")
            with self.assertRaises(RPCError) as missing:
                b.activate("p00000000")
            self.assertEqual(missing.exception.name, "PANE_NOT_FOUND")
        finally:
            b.kill_pane(pane)
        until(lambda: not b.is_alive(pane))
        with self.assertRaises(RPCError) as exited:
            b.activate(pane)
        self.assertEqual(exited.exception.name, "PANE_EXITED")
        self.assertIsNone(b.find_pane_by_title_marker("CCB-gemini"))

    def test_one_connection_carries_many_calls(self):
        b = self.backend
        for _ in range(50):
            self.assertIsInstance(b.list_panes(), list)
        self.assertGreaterEqual(b.client.request_id, 50)


class AskTest(unittest.TestCase):
    def test_the_daemon_answers_ask_and_names_what_is_wrong(self):
        backend = SwitchboardBackend(SwitchboardRPCClient(home=DAEMON.home))
        try:
            # No agent pane runs: the daemon says there is no such target, at once.
            with self.assertRaises(RPCError) as caught:
                backend.ask("codex", "What is 2+2?", timeout=5)
            self.assertEqual(caught.exception.name, "PANE_NOT_FOUND")
            with self.assertRaises(RPCError) as caught:
                backend.ask_get("0123456789")
            self.assertEqual(caught.exception.name, "ASK_NOT_FOUND")
            self.assertEqual(caught.exception.code, -32016)
        finally:
            backend.client.close()

    def test_the_request_ask_sends(self):
        """The wire shape of ask, ask_wait, ask_get and ask_cancel, as a line server receives it."""
        received = []

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                for line in self.rfile:
                    request = json.loads(line)
                    received.append(request)
                    result = {"ask_id": "0123456789", "status": "done" if request["method"] != "ask" or request["params"].get("wait") else "queued", "reply": "4"}
                    self.wfile.write((json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n").encode())

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        backend = SwitchboardBackend(SwitchboardRPCClient("127.0.0.1", server.server_address[1], "tok"))
        try:
            self.assertEqual(backend.ask("codex", "What is 2+2?", timeout=30, from_pane_id="p12345678")["reply"], "4")
            self.assertEqual(backend.ask("p1", "later", wait=False)["status"], "queued")
            backend.ask_wait("0123456789", timeout=2)
            backend.ask_get("0123456789")
            backend.ask_cancel("0123456789")
        finally:
            backend.client.close()
            server.shutdown()
            server.server_close()
        self.assertEqual(received[0]["method"], "ask")
        self.assertEqual(received[0]["params"], {"target": "codex", "question": "What is 2+2?", "timeout_ms": 30000, "wait": True, "from_pane_id": "p12345678", "token": "tok"})
        self.assertEqual(received[1]["params"]["wait"], False)
        self.assertEqual([r["method"] for r in received[2:]], ["ask_wait", "ask_get", "ask_cancel"])
        self.assertEqual(received[2]["params"], {"ask_id": "0123456789", "timeout_ms": 2000, "token": "tok"})


if __name__ == "__main__":
    unittest.main()
