"""Sub-commands of the OpenCL back end: ``mcl devices`` (and, with code
generation, ``mcl gen`` and ``mcl run``)."""

from __future__ import annotations

import argparse

from mcl.opencl import device


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("devices", help="list the OpenCL devices mcl can run on",
                       description="List OpenCL platforms and devices. Choose one with "
                                   "--device PLATFORM:DEVICE or MCL_DEVICE (substrings).")
    p.set_defaults(func=cmd_devices)


def cmd_devices(args: argparse.Namespace) -> int:
    devices = device.all_devices()
    if not devices:
        print("no OpenCL device found")
    for d in devices:
        i = device.describe(d)
        print(f"{i.platform}:{i.name}\n    {i.kind}, {i.compute_units} compute units, "
              f"{i.local_memory // 1024} kB local memory, work-groups up to "
              f"{i.max_work_group_size}, {i.global_memory / 2**30:.1f} GiB, {i.version}")
    hint = device.registration_hint()
    if hint:
        print(f"note: {hint}")
    if devices:
        print(f"default: {device.describe(device.select_device()).spec}")
    return 0 if devices else 1
