"""Whether a server bound to a host can be reached only from this machine: `is_loopback_bind`, and
`bind_addresses`, every address a host resolves to. The web stack's security layer (web/security.py) and the
commands that check an address (`chainrule serve`, `chainrule lesson`, `chainrule lti` and `chainrule sso`'s
--url) share it; it lives beside the engine, importing nothing of the project, so that a command that only checks
an address does not load the web app (about a second of CPU)."""

from __future__ import annotations

import ipaddress
import socket

__all__ = ["bind_addresses", "is_loopback_bind"]


def bind_addresses(host: str) -> list[str]:
    """Every address `host` (an IP address or a name) resolves to; [] when it does not resolve."""
    name = host.strip().strip("[]")
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):  # socket.gaierror is an OSError
        return []
    return sorted({str(info[4][0]) for info in infos})


def _loopback_address(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback  # 127.0.0.0/8 or ::1


def is_loopback_bind(host: str) -> bool:
    """True when every address `host` resolves to is loopback (127.0.0.0/8, ::1), so that only this
    machine can reach a server listening there. Judged by resolving, never by the name: a name such
    as "127.0.0.1.example.com" can resolve anywhere. A name that does not resolve is not loopback."""
    addresses = bind_addresses(host)
    return bool(addresses) and all(_loopback_address(address) for address in addresses)
