"""JSON-RPC 2.0 over TCP to a Switchboard daemon, as seed 000's EnsoRPCClient does it.

One request per line, one reply per line, the token in ``params.token``. Where the daemon is:
the arguments, else ``SWITCHBOARD_RPC_HOST`` / ``_PORT`` / ``_TOKEN``, else seed 000's
``ENSO_RPC_HOST`` / ``_PORT`` / ``_TOKEN``, else the daemon's runtime file
(``$SWITCHBOARD_HOME/daemon.json``, by default ``~/.switchboard/daemon.json``), else
127.0.0.1:8765. Connecting is tried three times, half a second apart; every socket operation has a
5 s timeout unless a call asks for longer. Standard library only; Python 3.8 and later.
"""
import json
import os
import socket
import sys
import time
from typing import Any, Dict, Optional

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
#: Seconds each socket operation may take (the seed's 5 s).
DEFAULT_TIMEOUT = 5.0
#: Connection attempts, and the pause between them (the seed's 3 and 0.5 s).
CONNECT_ATTEMPTS = 3
CONNECT_RETRY_DELAY = 0.5
#: The longest reply line read (the daemon's own request limit is 4 MiB).
MAX_REPLY_BYTES = 64 * 1024 * 1024

#: JSON-RPC codes the daemon sends (docs/rpc.md), by their stable names.
ERROR_NAMES = {
    -32700: "PARSE_ERROR",
    -32600: "INVALID_REQUEST",
    -32601: "METHOD_NOT_FOUND",
    -32602: "INVALID_PARAMS",
    -32603: "INTERNAL_ERROR",
    -32001: "INVALID_TOKEN",
    -32002: "PANE_NOT_FOUND",
    -32003: "CONNECTION_FAILED",
    -32004: "PANE_EXITED",
    -32005: "LIMIT_EXCEEDED",
    -32006: "SPAWN_FAILED",
    -32007: "TIMEOUT",
    -32008: "SHUTTING_DOWN",
    -32009: "SESSION_NOT_FOUND",
    -32010: "FORBIDDEN",
    -32011: "NOT_DELIVERED",
    -32012: "AGENT_ERROR",
    -32013: "CONFLICT",
    -32014: "NOT_AN_AGENT",
    -32015: "RUN_NOT_FOUND",
    -32016: "ASK_NOT_FOUND",
}


class RPCError(RuntimeError):
    """An error reply. ``code`` is the JSON-RPC number, ``name`` the stable string code.

    Its text is the seed's ``RPC Error <code>: <message>``, and it is a RuntimeError as the
    seed's errors are, so code written for the seed client keeps working.
    """

    def __init__(self, code: int, message: str, data: Any = None):
        self.code = code
        self.message = message
        self.data = data
        given = data.get("code") if isinstance(data, dict) else None
        self.name = given if isinstance(given, str) else ERROR_NAMES.get(code, "INTERNAL_ERROR")
        super().__init__("RPC Error {}: {}".format(code, message))


class ConnectionFailed(RPCError):
    """The daemon could not be reached (after every attempt), or the connection broke."""

    def __init__(self, message: str):
        super().__init__(-32003, message, {"code": "CONNECTION_FAILED"})


class CallTimeout(RPCError):
    """No reply within the call's timeout."""

    def __init__(self, message: str):
        super().__init__(-32007, message, {"code": "TIMEOUT"})


def switchboard_home(env=None) -> str:
    """The daemon's home: ``$SWITCHBOARD_HOME`` or ``~/.switchboard``."""
    env = os.environ if env is None else env
    return env.get("SWITCHBOARD_HOME") or os.path.join(os.path.expanduser("~"), ".switchboard")


def read_runtime_file(home: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The running daemon's runtime file (host, port, socket, token, pid), or None."""
    path = os.path.join(home or switchboard_home(), "daemon.json")
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("token"), str) else None


def discover(env=None, home: Optional[str] = None) -> Dict[str, Any]:
    """Host, port and token, from the environment first, then the runtime file."""
    env = os.environ if env is None else env
    for prefix in ("SWITCHBOARD_RPC_", "ENSO_RPC_"):
        token = env.get(prefix + "TOKEN", "").strip()
        port = env.get(prefix + "PORT", "").strip()
        if token and port:
            return {"host": env.get(prefix + "HOST", "").strip() or DEFAULT_HOST, "port": int(port), "token": token, "source": prefix + "*"}
    info = read_runtime_file(home or switchboard_home(env))
    if info and info.get("port") is not None:
        return {"host": info.get("host") or DEFAULT_HOST, "port": int(info["port"]), "token": info["token"], "source": "runtime file"}
    token = env.get("SWITCHBOARD_RPC_TOKEN", "") or env.get("ENSO_RPC_TOKEN", "")
    return {"host": DEFAULT_HOST, "port": DEFAULT_PORT, "token": token, "source": "defaults"}


class SwitchboardRPCClient:
    """A connection to the daemon; one request at a time (use one client per thread)."""

    def __init__(self, host: Optional[str] = None, port: Optional[int] = None, token: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT, home: Optional[str] = None):
        found = discover(home=home) if host is None or port is None or token is None else {}
        self.host = host or found.get("host", DEFAULT_HOST)
        self.port = int(port if port is not None else found.get("port", DEFAULT_PORT))
        self.token = token if token is not None else found.get("token", "")
        self.timeout = timeout
        self.socket = None  # type: Optional[socket.socket]
        self.request_id = 0
        self._buffer = b""
        self._debug = bool(os.environ.get("SWITCHBOARD_RPC_DEBUG") or os.environ.get("ENSO_RPC_DEBUG"))

    def connect(self) -> None:
        """Connects, trying CONNECT_ATTEMPTS times; raises ConnectionFailed."""
        if self.socket is not None:
            return
        last = None  # type: Optional[BaseException]
        for attempt in range(CONNECT_ATTEMPTS):
            try:
                self.socket = socket.create_connection((self.host, self.port), timeout=self.timeout)
                self._buffer = b""
                return
            except (OSError, socket.timeout) as err:
                last = err
                if attempt < CONNECT_ATTEMPTS - 1:
                    time.sleep(CONNECT_RETRY_DELAY)
        raise ConnectionFailed("cannot reach the Switchboard daemon at {}:{} after {} attempts: {}".format(self.host, self.port, CONNECT_ATTEMPTS, last))

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Calls ``method``; returns its result or raises RPCError (ConnectionFailed, CallTimeout)."""
        request_params = {k: v for k, v in (params or {}).items() if v is not None}
        request_params["token"] = self.token
        self.request_id += 1
        request_id = self.request_id
        line = (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": request_params}) + "\n").encode("utf-8")
        self._log("->", method, request_id)
        self._send(line)
        reply = self._read_reply(request_id, timeout if timeout is not None else self.timeout)
        if "error" in reply and reply["error"] is not None:
            error = reply["error"]
            raise RPCError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
        self._log("<-", method, request_id)
        return reply.get("result")

    def close(self) -> None:
        if self.socket is not None:
            try:
                self.socket.close()
            finally:
                self.socket = None
                self._buffer = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _send(self, line: bytes) -> None:
        # A connection the daemon closed while we were idle fails on write: connect again once. A
        # request that was written is never sent twice.
        for attempt in range(2):
            self.connect()
            try:
                assert self.socket is not None
                self.socket.settimeout(self.timeout)
                self.socket.sendall(line)
                return
            except (BrokenPipeError, ConnectionResetError) as err:
                self.close()
                if attempt == 1:
                    raise ConnectionFailed("the connection to the daemon broke: {}".format(err))

    def _read_reply(self, request_id: int, timeout: float) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            newline = self._buffer.find(b"\n")
            while newline >= 0:
                raw, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                newline = self._buffer.find(b"\n")
                if not raw.strip():
                    continue
                try:
                    message = json.loads(raw.decode("utf-8"))
                except ValueError:
                    self.close()
                    raise RPCError(-32700, "the daemon sent a line that is not JSON")
                # Notifications (subscriptions) and replies to others are not ours.
                if isinstance(message, dict) and message.get("id") == request_id:
                    return message
                if isinstance(message, dict) and message.get("id") is None and "error" in message:
                    error = message["error"] or {}
                    raise RPCError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise CallTimeout("no reply from the daemon within {:.1f} s".format(timeout))
            assert self.socket is not None
            self.socket.settimeout(left)
            try:
                chunk = self.socket.recv(65536)
            except socket.timeout:
                continue
            except OSError as err:
                self.close()
                raise ConnectionFailed("the connection to the daemon broke: {}".format(err))
            if not chunk:
                self.close()
                raise ConnectionFailed("the daemon closed the connection")
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_BYTES:
                self.close()
                raise RPCError(-32600, "a reply line over {} bytes".format(MAX_REPLY_BYTES))

    def _log(self, direction: str, method: str, request_id: int) -> None:
        if self._debug:
            sys.stderr.write("switchboard rpc {} {} #{}\n".format(direction, method, request_id))


#: Seed 000's name for the same client.
EnsoRPCClient = SwitchboardRPCClient
