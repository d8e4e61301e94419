"""Switchboard's Python client: seed 000's EnsoRPCClient and a CCB terminal backend, standard library only."""
from .backend import EnsoBackend, SwitchboardBackend
from .rpc import CallTimeout, ConnectionFailed, EnsoRPCClient, RPCError, SwitchboardRPCClient, discover, read_runtime_file, switchboard_home

__all__ = [
    "CallTimeout",
    "ConnectionFailed",
    "EnsoBackend",
    "EnsoRPCClient",
    "RPCError",
    "SwitchboardBackend",
    "SwitchboardRPCClient",
    "discover",
    "read_runtime_file",
    "switchboard_home",
]
__version__ = "0.1.0"
