"""Device type names and numbers (DLPack's DLDeviceType)."""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from ._core import Device


class DLDeviceType(IntEnum):
    """DLPack's device types (DLPack 1.1 numbering)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
    kDLTrn = 18


def device(device_type: Any, index: Any = None) -> Device:
    """A Device: ``device("cuda:1")``, ``device("cuda", 1)``, ``device(DLDeviceType.kDLCUDA, 1)``."""
    return Device(device_type, index)
