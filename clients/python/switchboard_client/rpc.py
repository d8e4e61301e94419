"""JSON-RPC 2.0 over TCP to a Switchboard daemon, as seed 000's EnsoRPCClient does it.

One request per line, one reply per line, the token in ``params.token``. Where the daemon is:
the arguments, else ``SWITCHBOARD_RPC_HOST`` / ``_PORT`` / ``_TOKEN``, else seed 000's
``ENSO_RPC_HOST`` / ``_PORT`` / ``_TOKEN``, else the daemon's runtime file
(``$SWITCHBOARD_HOME/daemon.json``, by default ``~/.switchboard/daemon.json``), else
127.0.0.1:8765. Inside a Switchboard pane (``SWITCHBOARD_PANE_ID`` or a ``SWITCHBOARD_RPC_*``
variable set) only the pane's own variables and token are used, never the runtime file (its token
is the owner's); a pane whose token or port is missing is refused. The runtime file is read under
the trust rule every Switchboard reader follows: refused when it is a symbolic link, not a regular
file, not this user's, writable by others or in a folder others can write; used with one warning
when others can read it. Connecting is tried three times, half a second apart; every socket
operation has a 5 s timeout unless a call asks for longer. Standard library only; Python 3.8 and
later.
"""
import json
import os
import re
import socket
import stat
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
    -32017: "KEY_MISMATCH",
    -32018: "NODE_UNREACHABLE",
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


#: The variable every pane's programs get naming their pane; with it, or any of the endpoint
#: variables, a program knows it runs inside a pane.
PANE_ID_VARIABLE = "SWITCHBOARD_PANE_ID"
PANE_MARKS = (PANE_ID_VARIABLE, "SWITCHBOARD_RPC_HOST", "SWITCHBOARD_RPC_PORT", "SWITCHBOARD_RPC_SOCKET", "SWITCHBOARD_RPC_TOKEN")
#: The largest runtime file read (the daemon writes a few hundred bytes).
MAX_RUNTIME_FILE_BYTES = 64 * 1024
#: A value that is still a reference to a variable (``$NAME``, ``${NAME}``, ``${NAME:-x}``): unset.
_UNEXPANDED = re.compile(r"^\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*(?::?-[^}]*)?\})$")
_warned_files = set()


def _usable(env, name: str) -> str:
    """A variable's value, or "" when it says nothing (unset, empty, or an unexpanded reference)."""
    value = (env.get(name) or "").strip()
    return "" if not value or _UNEXPANDED.match(value) else value


def _mode(st) -> str:
    return "{:03o}".format(stat.S_IMODE(st.st_mode))


def _untrusted(what: str, st) -> Optional[str]:
    if st.st_uid != os.getuid():
        return "{} belongs to another user (uid {})".format(what, st.st_uid)
    if st.st_mode & 0o022:
        return "{} can be written by other users (mode {})".format(what, _mode(st))
    return None


def _refuse(problem: str) -> ConnectionFailed:
    return ConnectionFailed("refusing to trust the runtime file: {}; only the daemon writes it, with mode 0600 in a private folder (remove it and run `switchboard up`)".format(problem))


def read_runtime_file(home: Optional[str] = None, warn=None) -> Optional[Dict[str, Any]]:
    """The running daemon's runtime file (host, port, socket, token, pid), or None when there is none.

    Raises ConnectionFailed when the file cannot be trusted; calls ``warn`` (default: a line on
    stderr), once per process, when others can read it.
    """
    path = os.path.join(home or switchboard_home(), "daemon.json")
    if os.name == "nt":
        try:
            with open(path, "r", encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("token"), str) else None
    try:
        link = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(link.st_mode):
        raise _refuse("{} is a symbolic link".format(path))
    if not stat.S_ISREG(link.st_mode):
        raise _refuse("{} is not a regular file".format(path))
    folder = os.path.dirname(path)
    problem = _untrusted(path, link) or _untrusted(folder, os.lstat(folder))
    if problem:
        raise _refuse(problem)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise _refuse("{} cannot be read ({})".format(path, err.strerror))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        # Checked again on what is read: the file cannot be swapped between the check and the read.
        if not stat.S_ISREG(st.st_mode):
            raise _refuse("{} is not a regular file".format(path))
        problem = _untrusted(path, st)
        if problem:
            raise _refuse(problem)
        if st.st_size > MAX_RUNTIME_FILE_BYTES:
            raise _refuse("{} is larger than {} bytes".format(path, MAX_RUNTIME_FILE_BYTES))
        text = f.read(MAX_RUNTIME_FILE_BYTES + 1)
    if st.st_mode & 0o044 and path not in _warned_files:
        _warned_files.add(path)
        message = "the runtime file {} can be read by other users (mode {}), so they can take the daemon's owner token from it; make it private: chmod 600 {}".format(path, _mode(st), path)
        if warn is None:
            sys.stderr.write("switchboard: warning: {}\n".format(message))
        else:
            warn(message)
    try:
        data = json.loads(text.decode("utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("token"), str) else None


def _pane_refusal(env, missing: str) -> ConnectionFailed:
    pane = _usable(env, PANE_ID_VARIABLE)
    where = "inside pane {}".format(pane) if pane else "inside a Switchboard pane ({} set)".format(", ".join(n for n in PANE_MARKS if _usable(env, n)))
    return ConnectionFailed("{} but its {} is not in the environment; refusing to use the runtime file, whose token is the owner's (a program in a pane has its pane's grant only)".format(where, missing))


def discover(env=None, home: Optional[str] = None) -> Dict[str, Any]:
    """Host, port and token: an explicit home's runtime file; a pane's own variables inside a pane; else the environment, then the runtime file."""
    env = os.environ if env is None else env
    # An explicit home names the daemon to call, wherever the caller runs; the daemon still holds a
    # pane's programs to their pane, whatever token they show.
    if home is None and any(_usable(env, name) for name in PANE_MARKS):
        token = _usable(env, "SWITCHBOARD_RPC_TOKEN") or _usable(env, "ENSO_RPC_TOKEN")
        if not token:
            raise _pane_refusal(env, "token (SWITCHBOARD_RPC_TOKEN)")
        for prefix in ("SWITCHBOARD_RPC_", "ENSO_RPC_"):
            port = _usable(env, prefix + "PORT")
            if port:
                return {"host": _usable(env, prefix + "HOST") or DEFAULT_HOST, "port": int(port), "token": token, "source": prefix + "*"}
        raise _pane_refusal(env, "daemon's TCP port (SWITCHBOARD_RPC_PORT)")
    token = _usable(env, "ENSO_RPC_TOKEN")
    port = _usable(env, "ENSO_RPC_PORT")
    if token and port:
        return {"host": _usable(env, "ENSO_RPC_HOST") or DEFAULT_HOST, "port": int(port), "token": token, "source": "ENSO_RPC_*"}
    info = read_runtime_file(home or switchboard_home(env))
    if info and info.get("port") is not None:
        return {"host": info.get("host") or DEFAULT_HOST, "port": int(info["port"]), "token": info["token"], "source": "runtime file"}
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
