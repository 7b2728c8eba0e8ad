"""NKI-style kernels in Python, compiled to the NeuronCore's instruction set
and run on the simulated NeuronCore (docs/python.md).

The model is the public NKI one at its ISA level (nki.isa): tiles with a
partition dimension of up to 128 in SBUF and PSUM, tensors in device memory,
loads and stores, matmul into PSUM, activation, element-wise ops,
reductions, transposes, MX quantisation, and affine loops. As on the
hardware, the five engines (tensor, vector, scalar, gpsimd, sync) run their
own instruction streams and order their work through semaphores: an
instruction `.wait(s, n)`s until semaphore s reaches n and `.signal(s)`s it
when done. The kernel builder in C++ (sw/kernels) encodes every instruction,
so a kernel written here and the same kernel written in C++ are the same
bytes.

    k = Kernel()
    a = k.device((128, 512), "bf16")                  # tensors in device memory
    c = k.device((128, 512), "fp32")
    t = k.sbuf((128, 512), "bf16")                    # tiles: partitions x free
    acc = k.sbuf((128, 512), "fp32")
    k.sync.load(t, a).signal(0).halt()
    k.vector.tensor_copy(acc, t).wait(0, 1).signal(1)
    k.vector.store(c, acc).wait(1, 1).signal(2)
    k.vector.nop().wait(2, 1).halt()                 # every stream ends with halt
    result = k.run(inputs={a: x}, outputs=[c])       # result[c], result.profile

Mistakes raise KernelError naming the kernel's line: a partition dimension
over 128, a tile past SBUF or PSUM, operands whose shapes do not match, and,
after a run, an engine that stopped on an error or a kernel that never
finished (with the instruction's line).
"""
from __future__ import annotations

import inspect
import json
import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np

from . import _native
from ._worker import SimulationError, simulate
from .numerics import from_format, to_format

PARTITIONS = 128
SBUF_PARTITION_BYTES = 256 * 1024  # the neuroncore's defaults (neuroncore.h params)
PSUM_PARTITION_BYTES = 16 * 1024
DEVICE_BYTES = 12 << 30  # device memory below the code (the neuroncore platform loads code at 12 GiB)
MAX_NUM = 65535  # elements per free dimension (16 bits in the encoding)
MAX_DIMS = 4
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")
ERRORS = {1: "illegal instruction", 2: "tile outside SBUF/PSUM", 3: "partition start or count",
          4: "DMA or instruction fetch outside device memory", 5: "operand type not allowed", 6: "shape not allowed",
          7: "memory the engine cannot reach", 8: "invalid sparsity metadata"}

dtype = _native.dtype
fp32, bf16, fp16, e4m3fn, e5m2, int32, e2m1 = (dtype.fp32, dtype.bf16, dtype.fp16, dtype.e4m3fn, dtype.e5m2,
                                               dtype.int32, dtype.e2m1)
alu = _native.alu
act = _native.function  # activation functions: act.exp, act.relu, ...
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class KernelError(ValueError):
    """A mistake in a kernel, with the kernel's file and line."""


def _caller() -> str:
    """file:line of the first frame outside this package: the kernel's line."""
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR + os.sep) or os.sep + "library" + os.sep in path[len(_PACKAGE_DIR):]:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<kernel>"


def _fail(message: str):
    raise KernelError(f"{_caller()}: {message}")


def _dtype(t) -> dtype:
    if isinstance(t, dtype):
        return t
    if str(t) not in dtype.__members__:
        _fail(f"unknown dtype '{t}' (fp32, bf16, fp16, e4m3fn, e5m2, int32, e2m1)")
    return dtype.__members__[str(t)]


def _check_dims(dims):
    if not 1 <= len(dims) <= MAX_DIMS:
        _fail(f"an access pattern walks 1 to {MAX_DIMS} free dimensions, not {len(dims)}")
    for step, num in dims:
        if not 1 <= num <= MAX_NUM or not -(1 << 31) <= step < (1 << 31):
            _fail(f"dimension [step {step}, num {num}]: num is 1 to {MAX_NUM}, step a 32-bit integer")


def affine_range(n: int) -> range:
    """A loop whose iterations are independent (NKI's affine_range): the
    kernel is traced, so the loop unrolls into the instruction streams."""
    return range(n)


@dataclass(frozen=True)
class Tile:
    """An on-chip tile: `partitions` partitions from `start`, and in each,
    `free` elements from byte `offset` (or a walk of [step, num] dims)."""

    space: str  # "sbuf" or "psum"
    dtype: dtype
    start: int
    partitions: int
    offset: int
    free: int
    dims: tuple = ()

    @property
    def shape(self) -> tuple[int, int]:
        return (self.partitions, self.free)

    def pattern(self):
        make = _native.sbuf if self.space == "sbuf" else _native.psum
        ap = make(self.dtype, self.start, self.partitions, self.offset, self.free if not self.dims else 1)
        return _native.with_dims(ap, list(self.dims)) if self.dims else ap

    def __getitem__(self, key) -> "Tile":
        """tile[p0:p1] or tile[p0:p1, f0:f1] (or an index): a sub-tile (contiguous free range)."""
        if self.dims:
            _fail("slice a tile before giving it dims")
        ps, fs = (key if isinstance(key, tuple) else (key, slice(None)))
        ps, fs = (slice(i, i + 1) if isinstance(i, int) else i for i in (ps, fs))
        p0, p1, pstep = ps.indices(self.partitions)
        f0, f1, fstep = fs.indices(self.free)
        if pstep != 1 or fstep != 1 or p1 <= p0 or f1 <= f0:
            _fail(f"tile slice {key}: contiguous, non-empty ranges only")
        return Tile(self.space, self.dtype, self.start + p0, p1 - p0,
                    self.offset + f0 * _native.dtype_bytes(self.dtype), f1 - f0)

    def with_dims(self, dims) -> "Tile":
        """The same start, walked as [(step, num), ...] elements, outermost first (step 0 broadcasts)."""
        dims = tuple((int(s), int(n)) for s, n in dims)
        _check_dims(dims)
        t = Tile(self.space, self.dtype, self.start, self.partitions, self.offset, _count(dims), dims)
        _check_tile(t)
        return t


def _count(dims) -> int:
    n = 1
    for _, num in dims:
        n *= num
    return n


def _extent_bytes(t: Tile) -> int:
    es = _native.dtype_bytes(t.dtype)
    if not t.dims:
        return t.free * es
    last = sum((num - 1) * step for step, num in t.dims if step > 0)
    if any(step < 0 and num > 1 for step, num in t.dims):
        _fail("negative steps are not supported by the Python tiles")
    return (last + 1) * es


def _check_tile(t: Tile):
    if not t.dims and not 1 <= t.free <= MAX_NUM:
        _fail(f"a tile's free size is 1 to {MAX_NUM} elements, not {t.free} (walk more with with_dims)")
    if not 1 <= t.partitions <= PARTITIONS:
        _fail(f"a tile's partition dimension is 1 to {PARTITIONS}, not {t.partitions}")
    if t.start < 0 or t.start + t.partitions > PARTITIONS:
        _fail(f"partitions {t.start}..{t.start + t.partitions - 1} are past the {PARTITIONS} the core has")
    size = SBUF_PARTITION_BYTES if t.space == "sbuf" else PSUM_PARTITION_BYTES
    end = t.offset + _extent_bytes(t)
    if t.offset < 0 or end > size:
        _fail(f"a {t.space.upper()} tile at byte {t.offset} of {_extent_bytes(t)} bytes per partition ends past "
              f"the {size} bytes a partition has")


@dataclass(frozen=True)
class DeviceTensor:
    """A [rows][cols] row-major tensor in device memory."""

    name: str
    address: int
    rows: int
    cols: int
    dtype: dtype

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def bytes(self) -> int:
        return self.rows * self.cols * _native.dtype_bytes(self.dtype)

    def region(self, row0: int = 0, rows: int | None = None, col0: int = 0, cols: int | None = None,
               dims=None) -> "_Region":
        """rows x cols from (row0, col0): one partition per row; `dims` walks each row otherwise."""
        rows = self.rows - row0 if rows is None else rows
        cols = self.cols - col0 if cols is None else cols
        if row0 < 0 or col0 < 0 or rows < 1 or cols < 1 or row0 + rows > self.rows or col0 + cols > self.cols:
            _fail(f"region rows {row0}+{rows}, cols {col0}+{cols} is outside {self.name} {self.shape}")
        es = _native.dtype_bytes(self.dtype)
        r = _Region(self, self.address + (row0 * self.cols + col0) * es, rows, self.cols * es, cols)
        return r.with_dims(dims) if dims else r._checked()

    def broadcast(self, partitions: int) -> "_Region":
        """Row 0 to each of `partitions` partitions (a partition stride of 0)."""
        return _Region(self, self.address, partitions, 0, self.cols)._checked()

    def __getitem__(self, key) -> "_Region":
        rs, cs = (key if isinstance(key, tuple) else (key, slice(None)))
        r0, r1, rstep = rs.indices(self.rows)
        c0, c1, cstep = cs.indices(self.cols)
        if rstep != 1 or cstep != 1:
            _fail("device tensor slices are contiguous")
        return self.region(r0, r1 - r0, c0, c1 - c0)

    def __hash__(self):
        return hash((self.name, self.address))


@dataclass(frozen=True)
class _Region:
    """Part of a device tensor as a DMA sees it: partitions rows apart."""

    tensor: DeviceTensor
    address: int
    partitions: int
    stride: int
    free: int
    dims: tuple = ()

    @property
    def dtype(self):
        return self.tensor.dtype

    def pattern(self):
        ap = _native.hbm(self.dtype, self.address, self.partitions, self.stride, self.free if not self.dims else 1)
        return _native.with_dims(ap, list(self.dims)) if self.dims else ap

    def elements(self) -> int:
        return self.partitions * (_count(self.dims) if self.dims else self.free)

    def with_dims(self, dims, stride: int | None = None) -> "_Region":
        """Each partition walked as [(step, num), ...] elements; `stride`: bytes between partitions."""
        dims = tuple((int(s), int(n)) for s, n in dims)
        _check_dims(dims)
        return _Region(self.tensor, self.address, self.partitions, self.stride if stride is None else stride,
                       self.free, dims)._checked()

    def _checked(self) -> "_Region":
        """Partitions, sizes and every byte the walk reaches, below the code at 12 GiB."""
        if not 1 <= self.partitions <= PARTITIONS:
            _fail(f"a DMA pattern has 1 to {PARTITIONS} partitions (rows), not {self.partitions}")
        if not self.dims and not 1 <= self.free <= MAX_NUM:
            _fail(f"a DMA row is 1 to {MAX_NUM} elements, not {self.free} (walk more with with_dims)")
        if not 0 <= self.stride < (1 << 32):
            _fail(f"a partition stride of {self.stride} bytes does not fit 32 bits")
        es = _native.dtype_bytes(self.dtype)
        walk = self.dims or ((1, self.free),)
        low = sum((num - 1) * step for step, num in walk if step < 0) * es
        high = sum((num - 1) * step for step, num in walk if step > 0) * es + es
        first, last = self.address + low, self.address + (self.partitions - 1) * self.stride + high
        if first < 0 or last > DEVICE_BYTES:
            _fail(f"a DMA pattern reaches bytes {first:#x} to {last:#x}: device memory for tensors ends at 12 GiB "
                  "(the code is above)")
        return self


def _elements(x) -> int:
    if isinstance(x, _Region):
        return x.elements()
    if isinstance(x, DeviceTensor):
        return x.rows * x.cols
    return x.partitions * x.free


def _pattern(x):
    if isinstance(x, DeviceTensor):
        return x.region().pattern()
    return x.pattern()


def _same_shape(op: str, dst: Tile, *srcs: Tile):
    for s in srcs:
        if (s.partitions, s.free) != (dst.partitions, dst.free):
            _fail(f"{op}: operand {s.shape} does not match the destination {dst.shape}")


def _on_chip(op: str, *tiles):
    for t in tiles:
        if not isinstance(t, Tile):
            _fail(f"{op}: operands are SBUF or PSUM tiles (load device tensors first)")


class Engine:
    """One engine's instruction stream. Every call appends an instruction and
    returns the engine, so modifiers chain: `.wait(s, n)`, `.signal(s)`."""

    def __init__(self, kernel: "Kernel", stream):
        self._kernel = kernel
        self._stream = stream
        self.lines: list[str] = []  # the kernel's file:line of each instruction
        self.last_op = None  # the last instruction's name

    def _call(self, call, *args):
        try:
            call(*args)
        except (ValueError, TypeError) as e:  # what the builder cannot encode, at the kernel's line
            _fail(str(e).splitlines()[0])

    def _emit(self, call, *args):
        self._call(call, *args)
        self.lines.append(_caller())
        self.last_op = call.__name__
        return self

    def _modify(self, call, *args):
        if not self.lines:
            _fail("wait/signal/stochastic modify the last instruction, and this engine has none")
        self._call(call, *args)
        return self

    @property
    def name(self) -> str:
        return self._stream.engine.name

    def here(self) -> int:
        """Index of the next instruction (a branch target)."""
        return self._stream.here()

    # -- the tensor engine --
    def matmul(self, dst: Tile, stationary: Tile, moving: Tile, accumulate: bool = False):
        """dst[m][n] (+)= sum_k stationary[k][m] * moving[k][n]; dst in PSUM."""
        _on_chip("matmul", dst, stationary, moving)
        if dst.space != "psum":
            _fail("matmul writes PSUM")
        if stationary.partitions != moving.partitions:
            _fail(f"matmul: stationary has {stationary.partitions} partitions (K), moving {moving.partitions}")
        if (dst.partitions, dst.free) != (stationary.free, moving.free):
            _fail(f"matmul: the destination is {dst.shape}, stationary^T x moving is "
                  f"({stationary.free}, {moving.free})")
        return self._emit(self._stream.matmul, dst.pattern(), stationary.pattern(), moving.pattern(), accumulate)

    def matmul_mx(self, dst: Tile, stationary: Tile, moving: Tile, scales_a: int, scales_b: int,
                  accumulate: bool = False):
        """MXFP8/MXFP4: operands hold 4 K values per partition; E8M0 scales at SBUF byte offsets."""
        _on_chip("matmul_mx", dst, stationary, moving)
        if dst.space != "psum":
            _fail("matmul_mx writes PSUM")
        if stationary.partitions != moving.partitions:
            _fail(f"matmul_mx: stationary has {stationary.partitions} partitions, moving {moving.partitions}")
        if (4 * dst.partitions, 4 * dst.free) != (stationary.free, moving.free):
            _fail(f"matmul_mx: the destination is {dst.shape}; MX operands hold 4 values per column "
                  f"({stationary.free}, {moving.free})")
        return self._emit(self._stream.matmul_mx, dst.pattern(), stationary.pattern(), moving.pattern(), scales_a,
                          scales_b, accumulate)

    def transpose(self, dst: Tile, src: Tile):
        _on_chip("transpose", dst, src)
        if (dst.partitions, dst.free) != (src.free, src.partitions):
            _fail(f"transpose: {src.shape} transposes to ({src.free}, {src.partitions}), not {dst.shape}")
        return self._emit(self._stream.transpose, dst.pattern(), src.pattern())

    # -- vector, scalar, gpsimd --
    def activation(self, dst: Tile, src: Tile, function, scale: float = 1.0, bias: float = 0.0):
        """dst = function(src * scale + bias)."""
        _on_chip("activation", dst, src)
        _same_shape("activation", dst, src)
        return self._emit(self._stream.activation, dst.pattern(), src.pattern(), function, scale, bias)

    def tensor_tensor(self, dst: Tile, a: Tile, b: Tile, op):
        _on_chip("tensor_tensor", dst, a, b)
        _same_shape("tensor_tensor", dst, a, b)
        return self._emit(self._stream.tensor_tensor, dst.pattern(), a.pattern(), b.pattern(), op)

    def tensor_scalar(self, dst: Tile, a: Tile, op, scalar: float):
        _on_chip("tensor_scalar", dst, a)
        _same_shape("tensor_scalar", dst, a)
        return self._emit(self._stream.tensor_scalar, dst.pattern(), a.pattern(), op, scalar)

    def tensor_reduce(self, dst: Tile, src: Tile, op):
        """dst[p][0] = reduce(op, src[p][*])."""
        _on_chip("tensor_reduce", dst, src)
        if dst.partitions != src.partitions or dst.free != 1:
            _fail(f"tensor_reduce: the destination is ({src.partitions}, 1), not {dst.shape}")
        return self._emit(self._stream.tensor_reduce, dst.pattern(), src.pattern(), op)

    def tensor_copy(self, dst: Tile, src: Tile):
        _on_chip("tensor_copy", dst, src)
        _same_shape("tensor_copy", dst, src)
        return self._emit(self._stream.tensor_copy, dst.pattern(), src.pattern())

    def memset(self, dst: Tile, value: float):
        _on_chip("memset", dst)
        return self._emit(self._stream.memset, dst.pattern(), value)

    def iota(self, dst: Tile, base: int, step: float, partition_step: float):
        _on_chip("iota", dst)
        return self._emit(self._stream.iota, dst.pattern(), base, step, partition_step)

    def affine_select(self, dst: Tile, src: Tile, partition_coef: float, free_coef: float, offset: int,
                      otherwise: float):
        """dst = (partition_coef * p + free_coef * i + offset >= 0) ? src : otherwise."""
        _on_chip("affine_select", dst, src)
        _same_shape("affine_select", dst, src)
        return self._emit(self._stream.affine_select, dst.pattern(), src.pattern(), partition_coef, free_coef,
                          offset, otherwise)

    def quantize_mx(self, dst: Tile, src: Tile, scales: int, trn3_rule: bool = False):
        _on_chip("quantize_mx", dst, src)
        return self._emit(self._stream.quantize_mx, dst.pattern(), src.pattern(), scales, trn3_rule)

    # -- DMA --
    def dma(self, dst, src, queue: int = 0):
        """Copies src to dst (tiles or device regions), casting to dst's type."""
        if _elements(dst) != _elements(src):
            _fail(f"dma: {_elements(src)} elements into {_elements(dst)}")
        return self._emit(self._stream.dma, _pattern(dst), _pattern(src), queue)

    def load(self, dst: Tile, src, queue: int = 0):
        """A device tensor (or region) into an on-chip tile (NKI's load)."""
        if not isinstance(dst, Tile):
            _fail("load: the destination is a tile")
        return self.dma(dst, src, queue)

    def store(self, dst, src: Tile, queue: int = 0):
        """An on-chip tile to a device tensor (or region) (NKI's store)."""
        if not isinstance(src, Tile):
            _fail("store: the source is a tile")
        return self.dma(dst, src, queue)

    # -- sequencer --
    def set_reg(self, reg: int, value: int):
        return self._emit(self._stream.set_reg, reg, value)

    def add_reg(self, reg: int, value: int):
        return self._emit(self._stream.add_reg, reg, value)

    def branch_lt(self, reg: int, bound: int, target: int):
        return self._emit(self._stream.branch_lt, reg, bound, target)

    def sem_increment(self, sem: int, add: int = 1):
        return self._emit(self._stream.sem_increment, sem, add)

    def nop(self):
        return self._emit(self._stream.nop)

    def halt(self):
        return self._emit(self._stream.halt)

    def wait(self, sem: int, at_least: int):
        if not 0 <= at_least < (1 << 32):
            _fail(f"wait for {at_least}: semaphores count 0 to 2^32 - 1")
        if not 0 <= sem < _native.semaphores:
            _fail(f"semaphore {sem}: the core has {_native.semaphores}")
        return self._modify(self._stream.wait, sem, at_least)

    def signal(self, sem: int, add: int = 1):
        if not 0 <= sem < _native.semaphores:
            _fail(f"semaphore {sem}: the core has {_native.semaphores}")
        return self._modify(self._stream.signal, sem, add)

    def stochastic(self):
        return self._modify(self._stream.stochastic)

    def __len__(self):
        return len(self._stream)


@dataclass
class Profile:
    simulated_s: float
    engine_busy_s: dict
    flops: int
    dma_bytes: int
    instructions: int
    wall_s: float
    timeline: str | None = None

    @property
    def tflops(self) -> float:
        return self.flops / self.simulated_s / 1e12 if self.simulated_s > 0 else 0.0


@dataclass
class KernelResult:
    """A finished kernel's outputs and profile (a kernel that failed raised instead)."""

    outputs: dict = field(default_factory=dict)  # DeviceTensor -> numpy array (float32, int32 for int32)
    profile: Profile | None = None
    report: str = ""

    def __getitem__(self, tensor):
        return self.outputs[tensor]


class Kernel:
    """A kernel being written: five engine streams, device tensors and tiles.
    Tiles and tensors are placed where asked or, without an address, one
    after another."""

    def __init__(self):
        self.program = _native.program()
        for e in ENGINES:
            setattr(self, e, Engine(self, self.program.on(getattr(_native.engine, e))))
        self._next = {"sbuf": 0, "psum": 0, "device": 0}
        self.tensors: list[DeviceTensor] = []

    def engines(self) -> list[Engine]:
        return [getattr(self, e) for e in ENGINES]

    def _place(self, where: str, bytes_: int, at: int | None, align: int) -> int:
        if at is None:
            at = -(-self._next[where] // align) * align
        self._next[where] = max(self._next[where], at + bytes_)
        return at

    def device(self, shape, dtype_, address: int | None = None, name: str | None = None) -> DeviceTensor:
        """A [rows][cols] tensor in device memory (4 KiB aligned unless `address` says)."""
        rows, cols = shape
        if rows < 1 or cols < 1:
            _fail(f"a tensor of shape {tuple(shape)}: rows and cols are at least 1")
        t = _dtype(dtype_)
        size = rows * cols * _native.dtype_bytes(t)
        at = self._place("device", size, address, 4096)
        if at < 0 or at + size > DEVICE_BYTES:
            _fail(f"a tensor of {size} bytes at {at:#x} is past the {DEVICE_BYTES >> 30} GiB of device memory "
                  "kernels may use")
        tensor = DeviceTensor(name or f"t{len(self.tensors)}", at, rows, cols, t)
        self.tensors.append(tensor)
        return tensor

    def _tile(self, space: str, shape, dtype_, offset: int | None, start: int) -> Tile:
        partitions, free = shape
        t = _dtype(dtype_)
        at = self._place(space, free * _native.dtype_bytes(t), offset, 4)
        tile = Tile(space, t, start, partitions, at, free)
        _check_tile(tile)
        return tile

    def sbuf(self, shape, dtype_, offset: int | None = None, start_partition: int = 0) -> Tile:
        """A (partitions, free) tile in SBUF at byte `offset` of each partition."""
        return self._tile("sbuf", shape, dtype_, offset, start_partition)

    def psum(self, shape, dtype_="fp32", offset: int | None = None, start_partition: int = 0) -> Tile:
        """A (partitions, free) tile in PSUM (2 KiB banks of 512 fp32)."""
        return self._tile("psum", shape, dtype_, offset, start_partition)

    def container(self) -> bytes:
        """The program as a program container (what the runtime loads). Every
        stream with instructions must end with halt (else its engine runs on
        past its last instruction)."""
        for e in self.engines():
            if len(e) and e.last_op != "halt":
                raise KernelError(f"{e.lines[-1]}: the {e.name} stream ends without halt: its engine would run on "
                                  "past its last instruction")
        return self.program.pack()

    def disassemble(self) -> str:
        return "".join(f"# {e.name}\n{e._stream.disassemble()}" for e in self.engines() if len(e))

    def _line_of(self, engine: str, pc: int) -> str:
        lines = getattr(self, engine).lines
        return lines[pc] if 0 <= pc < len(lines) else f"instruction {pc}"

    def run(self, inputs: dict | None = None, outputs=None, backend: str = "model", params: dict | None = None,
            timeline: str | None = None, timeout: float = 600.0) -> "KernelResult":
        """Runs the kernel on one simulated NeuronCore in a worker process.
        `inputs` maps device tensors to arrays (float values are rounded to
        the tensor's type, round to nearest even; unsigned integer arrays of
        the type's width are taken as codes); `outputs` lists the tensors to
        read back. backend: model, rtl or check (the Tensor engine's)."""
        return run_container(self.container(), inputs, outputs, backend, params, timeline, timeout, self._line_of)


def run_container(container: bytes, inputs: dict | None = None, outputs=None, backend: str = "model",
                  params: dict | None = None, timeline: str | None = None, timeout: float = 600.0,
                  line_of=None) -> "KernelResult":
    """Runs a program container (a Kernel's, or a C++ builder's `pack()`) like Kernel.run."""
    from .platform import _param_args

    line_of = line_of or (lambda engine, pc: f"{engine} instruction {pc}")
    inputs = inputs or {}
    outputs = list(outputs or [])
    with tempfile.TemporaryDirectory(prefix="trn3vp-kernel-") as tmp:
        with open(os.path.join(tmp, "k.trn3prog"), "wb") as f:
            f.write(container)
        manifest = {"program": "k.trn3prog", "inputs": [], "outputs": [], "result": "result.json"}
        for i, (tensor, array) in enumerate(inputs.items()):
            name = f"in{i}.bin"
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(_encode(tensor, array))
            manifest["inputs"].append({"address": tensor.address, "file": name})
        for i, tensor in enumerate(outputs):
            manifest["outputs"].append({"address": tensor.address, "bytes": tensor.bytes, "file": f"out{i}.bin"})
        with open(os.path.join(tmp, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump(manifest, f)
        args = ["run", "--platform", "neuroncore", "-p", "neuroncore.kernel=file",
                "-p", f"neuroncore.kernel_file={os.path.join(tmp, 'kernel.json')}",
                "-p", f"neuroncore.nc0.tensor_engine.backend={backend}"]
        args += _param_args(params)
        if timeline:
            args += ["--timeline", os.path.abspath(timeline)]
        done = simulate(args, timeout=timeout)
        result_path = os.path.join(tmp, "result.json")
        if not os.path.exists(result_path):
            raise SimulationError(f"the kernel's run wrote no result (exit {done.exit_code}): "
                                  f"{(done.stderr.strip() or done.stdout.strip())[-500:]}")
        with open(result_path, encoding="utf-8") as f:
            result = json.load(f)
        # The cause first: an engine that stopped on an error, then one that waits forever.
        for engine, state in result["engines"].items():
            if state["status"] == "error":
                code = state["error"]
                raise KernelError(f"{line_of(engine, state['error_pc'])}: the {engine} engine stopped: "
                                  f"{ERRORS.get(code, f'error {code}')}")
        if not result["finished"]:
            blocked = re.search(r"(\w+) waits (.*?) at instruction (\d+)", result["blocked"])
            where = line_of(blocked.group(1), int(blocked.group(3))) if blocked else "<kernel>"
            raise KernelError(f"{where}: the kernel never finished: {result['blocked']}")
        if result["rtl_mismatches"]:
            raise SimulationError(f"the {backend} back end's RTL array disagreed with the model "
                                  f"{result['rtl_mismatches']} times")
        if done.exit_code != 0:
            raise SimulationError(f"the kernel's run failed (exit {done.exit_code}): {done.stdout.strip()[-500:]}")
        out = {}
        for i, tensor in enumerate(outputs):
            with open(os.path.join(tmp, f"out{i}.bin"), "rb") as f:
                out[tensor] = _decode(tensor, f.read())
    profile = Profile(result["simulated_ps"] * 1e-12, {e: s["busy_ps"] * 1e-12 for e, s in result["engines"].items()},
                      result["matmul_flops"], result["dma_bytes"], result["instructions"], result["wall_s"],
                      os.path.abspath(timeline) if timeline else None)
    return KernelResult(out, profile, done.stdout)


_CODE_TYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_FORMAT = {fp32: "fp32", bf16: "bf16", fp16: "fp16", e4m3fn: "e4m3fn", e5m2: "e5m2", e2m1: "e2m1"}


def _encode(tensor: DeviceTensor, array) -> bytes:
    """An input's bytes: values rounded to the tensor's type, or codes as they are."""
    a = np.asarray(array)
    if a.shape != tensor.shape and not (tensor.rows == 1 and a.shape == (tensor.cols,)):
        _fail(f"the input for {tensor.name} has shape {a.shape}, the tensor {tensor.shape}")
    es = _native.dtype_bytes(tensor.dtype)
    if tensor.dtype == int32:
        if not np.issubdtype(a.dtype, np.integer) or (a.size and (a.min() < -(1 << 31) or a.max() >= (1 << 31))):
            _fail(f"the input for int32 {tensor.name} must be integers in the int32 range")
        return np.ascontiguousarray(a, dtype=np.int32).tobytes()
    if a.dtype == _CODE_TYPES[es]:  # codes (bit patterns) as they are
        if tensor.dtype == e2m1 and a.size and a.max() > 0xF:
            _fail(f"e2m1 codes are 4 bits; the input for {tensor.name} holds {int(a.max()):#x}")
        return np.ascontiguousarray(a).tobytes()
    if not np.issubdtype(a.dtype, np.floating) and not np.issubdtype(a.dtype, np.integer):
        _fail(f"the input for {tensor.name} is {a.dtype}: numbers, or codes as uint{8 * es}")
    if tensor.dtype == fp32:
        return np.ascontiguousarray(a, dtype=np.float32).tobytes()
    return np.ascontiguousarray(to_format(a, _FORMAT[tensor.dtype]), dtype=_CODE_TYPES[es]).tobytes()


def _decode(tensor: DeviceTensor, data: bytes) -> np.ndarray:
    if tensor.dtype == fp32:
        return np.frombuffer(data, dtype=np.float32).reshape(tensor.shape).copy()
    if tensor.dtype == int32:
        return np.frombuffer(data, dtype=np.int32).reshape(tensor.shape).copy()
    codes = np.frombuffer(data, dtype=_CODE_TYPES[_native.dtype_bytes(tensor.dtype)])
    return from_format(codes, _FORMAT[tensor.dtype]).reshape(tensor.shape)
