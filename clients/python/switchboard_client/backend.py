"""A terminal backend for CCB (or any Python tool) over a Switchboard daemon.

It has the methods CCB's terminal backends (TmuxBackend, WeztermBackend) have, with seed 000's
EnsoBackend shapes, plus ``ask``: one agent asking another through the daemon's ask engine.
"""
from typing import Any, Dict, List, Optional

from .rpc import RPCError, SwitchboardRPCClient

#: How long ``ask`` waits for a reply unless told (the daemon's own default is 10 minutes).
DEFAULT_ASK_TIMEOUT = 600.0
#: Extra seconds the client waits beyond an ask's own timeout for the daemon's answer.
ASK_REPLY_MARGIN = 10.0


class SwitchboardBackend:
    """Panes in a Switchboard daemon, driven the way CCB drives tmux or WezTerm panes."""

    def __init__(self, client: Optional[SwitchboardRPCClient] = None):
        self.client = client or SwitchboardRPCClient()
        self._current_pane_cache = None  # type: Optional[str]

    # -- seed 000's EnsoBackend ------------------------------------------------------------

    def create_pane(self, command: str, cwd: str, title: Optional[str] = None, env: Optional[Dict[str, str]] = None) -> str:
        """Starts ``command`` (a shell command line) in a new pane; returns its pane id."""
        result = self.client.call("create_pane", {"command": command, "cwd": cwd, "title": title, "env": env or {}})
        return result["pane_id"]

    def send_text(self, pane_id: str, text: str, add_newline: bool = False) -> None:
        """Types ``text`` into the pane (and Enter, as its own write, with ``add_newline``)."""
        self.client.call("send_text", {"pane_id": pane_id, "text": text, "add_newline": add_newline})

    def is_alive(self, pane_id: str) -> bool:
        """True while the pane's program runs (False for an unknown pane, as in the seed)."""
        return bool(self.client.call("is_alive", {"pane_id": pane_id})["alive"])

    def get_text(self, pane_id: str, lines: int = 100) -> str:
        """The last ``lines`` lines of the pane: its history and screen."""
        return self.client.call("get_text", {"pane_id": pane_id, "lines": lines})["text"]

    def list_panes(self) -> List[Dict[str, Any]]:
        """Every pane: pane_id, title, alive, pid, cwd (and more, see docs/rpc.md)."""
        return self.client.call("list", {})["panes"]

    def kill_pane(self, pane_id: str) -> None:
        """Ends the pane's program (and what it started); the pane stays listed, not alive."""
        self.client.call("kill", {"pane_id": pane_id})

    def get_current_pane_id(self) -> Optional[str]:
        return self._current_pane_cache

    def set_current_pane_id(self, pane_id: str) -> None:
        self._current_pane_cache = pane_id

    # -- what CCB's other backends also have ------------------------------------------------

    def get_pane_content(self, pane_id: str, lines: int = 100) -> str:
        """CCB's name for get_text."""
        return self.get_text(pane_id, lines)

    def send_key(self, pane_id: str, key: str) -> None:
        """Presses one named key (``Enter``, ``Escape``, ``C-c``, ``Up``…, or a character)."""
        self.client.call("send_keys", {"pane_id": pane_id, "keys": [key]})

    def activate(self, pane_id: str) -> None:
        """Brings the pane forward. Switchboard has no focus to move (every client shows every
        pane), so this only checks the pane exists and runs: PANE_NOT_FOUND or PANE_EXITED."""
        for pane in self.list_panes():
            if pane.get("pane_id") == pane_id:
                if not pane.get("alive"):
                    raise RPCError(-32004, "pane {} has exited".format(pane_id), {"code": "PANE_EXITED", "pane_id": pane_id})
                self.set_current_pane_id(pane_id)
                return
        raise RPCError(-32002, "pane not found: {}".format(pane_id), {"code": "PANE_NOT_FOUND", "pane_id": pane_id})

    def find_pane_by_title_marker(self, marker: str) -> Optional[str]:
        """The first live pane whose title starts with ``marker`` (else contains it), or None."""
        live = [p for p in self.list_panes() if p.get("alive")]
        for pane in live:
            if str(pane.get("title", "")).startswith(marker):
                return pane["pane_id"]
        for pane in live:
            if marker in str(pane.get("title", "")):
                return pane["pane_id"]
        return None

    # -- asking another agent ---------------------------------------------------------------

    def ask(self, target: str, question: str, timeout: float = DEFAULT_ASK_TIMEOUT, wait: bool = True, from_pane_id: Optional[str] = None, cwd: Optional[str] = None, deliver: Optional[bool] = None) -> Dict[str, Any]:
        """Asks the agent ``target`` (a pane id or title, or an agent name) ``question``.

        With ``wait`` (the default) returns once the ask is final: a dict with ``ask_id``,
        ``status`` (done, failed, timed_out, cancelled) and ``reply``. Without it, returns at once
        with the ask's id; with ``from_pane_id`` the reply is then delivered into that pane
        (``deliver=False`` when you will collect it with ``ask_wait`` instead).
        """
        params = {"target": target, "question": question, "timeout_ms": int(timeout * 1000), "wait": wait, "from_pane_id": from_pane_id, "cwd": cwd}
        if deliver is not None:
            params["deliver"] = deliver
        return self.client.call("ask", params, timeout=(timeout + ASK_REPLY_MARGIN) if wait else None)

    def ask_wait(self, ask_id: str, timeout: float = DEFAULT_ASK_TIMEOUT) -> Dict[str, Any]:
        """Waits up to ``timeout`` seconds for an ask to be final; returns it as it stands then."""
        return self.client.call("ask_wait", {"ask_id": ask_id, "timeout_ms": int(timeout * 1000)}, timeout=timeout + ASK_REPLY_MARGIN)

    def ask_get(self, ask_id: str) -> Dict[str, Any]:
        return self.client.call("ask_get", {"ask_id": ask_id})

    def ask_cancel(self, ask_id: str) -> Dict[str, Any]:
        return self.client.call("ask_cancel", {"ask_id": ask_id})


#: Seed 000's name for the same backend.
EnsoBackend = SwitchboardBackend
