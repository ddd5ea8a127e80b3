"""What every benchmark prints around its figures: the machine, and whether each target
was met.

`header()` names the machine (host, processor, core count, memory), the software and the
load average before the run; `footer()` the load average after it, so a figure taken on
a busy machine reads as such. `target(...)` prints one line in a fixed shape,

    target | ingest, 200,000 records, end to end | 10,000 records/s | 11,230 records/s | met

which `benchmarks/suite.py` collects from every script into one table.
"""

import os
import platform
import sys


def _processor():
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return 0.0


def load():
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def header(*software):
    """Lines naming the machine and the load before the run; `software` adds names
    and versions ("pyarrow 16.1")."""
    parts = [f"python {sys.version.split()[0]}", *software]
    return (f"machine: {platform.node()}, {_processor()}, {os.cpu_count()} cores, "
            f"{_memory_gb():.0f} GB; {', '.join(parts)}\n"
            f"load average before: {load()}")


def footer():
    return f"load average after: {load()}"


def target(what, wanted, figure, met):
    """One target's line: what was measured, the target, the figure, met or missed."""
    return f"target | {what} | {wanted} | {figure} | {'met' if met else 'missed'}"
