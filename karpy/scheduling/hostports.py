"""Host-port usage on a node.

Mirrors ``pkg/scheduling/hostportusage.go``: each ``<hostIP, hostPort, protocol>`` used by
pods on a node must be unique; an unspecified IP (``0.0.0.0`` or ``::``) conflicts with
every IP. Only app containers' ports with a non-zero ``hostPort`` count.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from karpy.api.pod import Pod

__all__ = ["HostPort", "HostPortUsage", "get_host_ports"]


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    port: int
    protocol: str

    def _unspecified(self) -> bool:
        try:
            return ipaddress.ip_address(self.ip).is_unspecified
        except ValueError:
            return False

    def _ip_equal(self, other: HostPort) -> bool:
        try:
            return ipaddress.ip_address(self.ip) == ipaddress.ip_address(other.ip)
        except ValueError:
            return self.ip == other.ip

    def matches(self, other: HostPort) -> bool:
        """``HostPort.Matches``: same protocol and port, and equal IPs or either unspecified."""
        if self.protocol != other.protocol or self.port != other.port:
            return False
        return self._ip_equal(other) or self._unspecified() or other._unspecified()

    def __str__(self) -> str:
        return f"IP={self.ip} Port={self.port} Proto={self.protocol}"


def get_host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """``GetHostPorts``: the app containers' host ports (hostIP defaults to 0.0.0.0)."""
    usage: list[HostPort] = []
    for container in pod.spec.containers:
        for p in container.ports or ():
            host_port = getattr(p, "host_port", None) or 0
            if host_port == 0:
                continue
            usage.append(HostPort(getattr(p, "host_ip", None) or "0.0.0.0", host_port,
                                  getattr(p, "protocol", None) or "TCP"))
    return tuple(usage)


class HostPortUsage:
    """Host ports reserved on one node, by pod key (``namespace/name``)."""

    __slots__ = ("_reserved",)

    def __init__(self, reserved: dict[str, tuple[HostPort, ...]] | None = None) -> None:
        self._reserved: dict[str, tuple[HostPort, ...]] = dict(reserved or {})

    def add(self, pod_key: str, ports: Iterable[HostPort]) -> None:
        ports = tuple(ports)
        if ports:
            self._reserved[pod_key] = ports

    def conflicts(self, pod_key: str, ports: Iterable[HostPort]) -> str | None:
        """None when ``ports`` fit; else upstream's conflict message."""
        for new in ports:
            for key, entries in self._reserved.items():
                if key == pod_key:
                    continue
                for existing in entries:
                    if new.matches(existing):
                        return ("pod hostport conflicts with existing hostport configuration "
                                f"(pod-hostport-ip={new.ip}, pod-hostport-port={new.port}, "
                                f"pod-hostport-protocol={new.protocol}, existing-hostport-ip={existing.ip}, "
                                f"existing-hostport-port={existing.port}, "
                                f"existing-hostport-protocol={existing.protocol})")
        return None

    def delete_pod(self, pod_key: str) -> None:
        self._reserved.pop(pod_key, None)

    def copy(self) -> HostPortUsage:
        out = HostPortUsage.__new__(HostPortUsage)  # (every existing node, every simulation: no __init__)
        out._reserved = self._reserved.copy()
        return out

    def __bool__(self) -> bool:
        return bool(self._reserved)

    def __len__(self) -> int:
        return len(self._reserved)
