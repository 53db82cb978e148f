"""Simulated device: interprets the PTX the generators emit (see ``docs/sim.md``).

Public entry points::

    SimDevice(faults=(), batch_clusters=32)   .load(ptx) .run(...) .launch(...)   (device.py)
    Fault, HOOKS, FaultSet, load_faults                                          (faults.py)
    opcode, Quals, Unsupported, Op/Plain/Branch/Exit/Block                       (registry.py)
    tensormap_tiled, decode_tensormap, TensorMap   (TMA descriptors)            (tensormap.py)
"""

from ptxsim.device import SimDevice, SimModule
from ptxsim.errors import (
    Deadlock,
    HazardError,
    Livelock,
    MemoryFault,
    PtxSyntaxError,
    SimError,
    StepLimit,
    Trap,
    UnimplementedError,
)
from ptxsim.faults.model import HOOKS, Fault, FaultSet, MbarrierEvent, load_faults
from ptxsim.memory.tensormap import TensorMap, decode_tensormap, tensormap_tiled
from ptxsim.ptx.registry import Quals, Unsupported, opcode
from ptxsim.trace import Trace

__all__ = [
    "Deadlock", "Fault", "HazardError", "Livelock", "FaultSet", "HOOKS", "MbarrierEvent", "MemoryFault", "PtxSyntaxError", "Quals",
    "SimDevice", "SimError", "SimModule", "StepLimit", "Trace", "Trap", "UnimplementedError", "Unsupported",
    "TensorMap", "decode_tensormap", "load_faults", "opcode", "tensormap_tiled",
]
