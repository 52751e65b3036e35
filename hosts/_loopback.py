"""Which hosts are this machine alone: for a server's bind address and a request's Origin."""

from __future__ import annotations

import ipaddress


def on_loopback(host: str | None) -> bool:
    """Whether `host` (a name, or an address with or without brackets) can only be this
    machine: ``localhost`` or a loopback address in any spelling, an IPv4-mapped one
    (``::ffff:127.0.0.1``, which Python 3.11 does not call loopback) too. Any other name
    may resolve to anything."""
    if host is None:
        return False
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return address.is_loopback or (mapped is not None and mapped.is_loopback)
