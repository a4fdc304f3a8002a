"""The header every benchmark prints: interpreter, package versions, machine, load, build."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

__all__ = ["print_environment"]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for row in f:
                if row.startswith("model name"):
                    return row.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def print_environment() -> None:
    """Print what a figure depends on: these machines are noisy, so it travels with it."""
    u = platform.uname()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    print(
        f"python       {sys.version.split()[0]} ({platform.python_implementation()}, "
        f"{sys.executable})"
    )
    print(
        f"packages     msgspec {_version('msgspec')}, orjson {_version('orjson')}, "
        f"agent-client-protocol (acp) {_version('agent-client-protocol')}, "
        f"pydantic {_version('pydantic')}, pydantic-core {_version('pydantic-core')}, "
        f"acp-toolcalls {_version('acp-toolcalls')}"
    )
    print(
        f"machine      {u.system} {u.release} {u.machine}; processor "
        f"{platform.processor() or '?'!r}; cpu {_cpu_model()}"
    )
    print(
        f"cpus         os.cpu_count() = {os.cpu_count()}"
        + (f", usable = {affinity}" if affinity is not None else "")
    )
    if hasattr(os, "getloadavg"):
        print(f"load         {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    from acp_toolcalls import codec, schema

    print(f"fast path    acp_toolcalls.codec.FAST_PATH = {codec.FAST_PATH}")
    try:
        from acp_toolcalls import _compiled
        from acp_toolcalls.bridge import V2ToV1Bridge  # noqa: F401 - imported to be chosen
    except ImportError:  # a tree from before the bridges' compiled build (PYTHONPATH=<old>/src)
        print("bridges      interpreted (no acp_toolcalls._compiled)")
    else:
        builds = ", ".join(f"{name} {build}" for name, build in sorted(_compiled.BUILDS.items()))
        print(f"hot modules  acp_toolcalls._compiled.BUILDS: {builds}")
    print(
        f"schema       ENGINE = {schema.ENGINE} (jsonschema {_version('jsonschema')}, "
        f"jsonschema-rs {_version('jsonschema-rs')}, fastjsonschema {_version('fastjsonschema')}); "
        f"rich {_version('rich')}"
    )
