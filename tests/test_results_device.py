"""Device layer on the CPU: arena and case records (checked by a fake kernel that follows the
kernel ABI), status words, crash isolation, GPU pinning, gating, and the PyCUDA backend driven
through a fake driver (no GPU or pycuda here)."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest

import conformance.harness.device as dev
import conformance.harness.device_cuda as dcuda
import conformance.harness.devices as devices
from conformance.harness.device import (
    CASE_RECORD_BYTES,
    POISON,
    CaseBuffers,
    CaseCrash,
    CaseTimeout,
    check_status,
    launch_isolating,
    pinned_visible_devices,
    plan_arena,
)
from conformance.harness.gating import require_target

pytestmark = pytest.mark.reference

FLAG_SKIP_LAST = 1  # the fake kernel leaves the last output word unwritten
FLAG_HANG = 2  # the fake kernel reports an mbarrier timeout


def fake_kernel(memory, table: int, ncases: int) -> None:
    """What a generated kernel does, per the kernel ABI: read its record, write out_words results
    (input word + 1) and its status words.  ``memory(address, nbytes)`` is a writable view."""
    for case in range(ncases):
        in_ptr, out_ptr, status_ptr, out_words, flags = struct.unpack(
            "<QQQII", bytes(memory(table + case * CASE_RECORD_BYTES, 32)))
        inputs = memory(in_ptr, 4 * out_words).view(np.uint32)
        out = memory(out_ptr, 4 * out_words).view(np.uint32)
        count = out_words - 1 if flags & FLAG_SKIP_LAST else out_words
        out[:count] = inputs[:count] + 1
        status = memory(status_ptr, 16).view(np.uint32)
        status[:] = [0x600D0000 | 3, 1 if flags & FLAG_HANG else 0, 7, 0]


def _records(flags: list[int]) -> bytes:
    table = bytearray(CASE_RECORD_BYTES * len(flags))
    for i, f in enumerate(flags):
        struct.pack_into("<I", table, i * CASE_RECORD_BYTES + 28, f)
        struct.pack_into("<I", table, i * CASE_RECORD_BYTES + 32, 0xABC0 + i)  # a family parameter
    return bytes(table)


def _cases(sizes):
    return [CaseBuffers(np.arange(n, dtype=np.uint32).tobytes() + b"\x00" * 4 * (i % 2), n)
            for i, n in enumerate(sizes)]


def test_arena_patches_pointers_poisons_outputs_and_zeroes_status():
    buffers = _cases([5, 64, 1])
    records = _records([0, 0, 0])
    plan = plan_arena(records, buffers, base=0x7F0000000000)
    image = plan.host_image(records, buffers)
    for i, buf in enumerate(buffers):
        in_ptr, out_ptr, status_ptr, out_words, flags, param = struct.unpack_from("<QQQIII", image.tobytes(), i * 256)
        assert (in_ptr - plan.base) % 256 == 0 and (out_ptr - plan.base) % 256 == 0
        assert image[in_ptr - plan.base:in_ptr - plan.base + len(buf.inputs)].tobytes() == buf.inputs
        assert out_words == buf.out_words and param == 0xABC0 + i
        assert (image[out_ptr - plan.base:out_ptr - plan.base + 4 * out_words].view(np.uint32) == POISON).all()
        assert not image[status_ptr - plan.base:status_ptr - plan.base + 16].any()
    spans = sorted([(o, o + 4 * n) for o, n in zip(plan.out_offsets, plan.out_words, strict=True)]
                   + [(o, o + len(b.inputs)) for o, b in zip(plan.in_offsets, buffers, strict=True)])
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # no overlap
    with pytest.raises(ValueError, match="case_records expects 3 x 256 bytes"):
        plan_arena(records[:-1], buffers)


def test_fake_kernel_through_the_arena_and_status_checks():
    buffers = _cases([4, 3])
    records = _records([0, FLAG_SKIP_LAST | FLAG_HANG])
    plan = plan_arena(records, buffers)
    image = plan.host_image(records, buffers)
    fake_kernel(lambda addr, n: image[addr:addr + n], plan.base, 2)
    outputs, status = plan.outputs(image), plan.status_words(image)
    assert outputs[0].tolist() == [1, 2, 3, 4]
    assert outputs[1].tolist() == [1, 2, POISON]
    assert status.shape == (2, 1, 4)
    assert check_status("c0", status[0]) is None
    with pytest.raises(CaseTimeout, match="c1 CTA 0: mbarrier wait timed out after 7 spins"):
        check_status("c1", status[1])


@pytest.mark.parametrize("words, message", [
    ([0x600D0002, 3, 0, 0], "refused its case record"),
    ([0x600D0002, 9, 0, 0], "unknown kernel error code 9"),
    ([0, 0, 0, 0], "did not reach its end"),
])
def test_status_word_problems(words, message):
    assert message in check_status("c", np.array([words], dtype=np.uint32))


def test_alloc_timeout_is_a_timeout():
    with pytest.raises(CaseTimeout, match="tcgen05.alloc timed out"):
        check_status("c", np.array([[0x600D0001, 2, 100, 0], [0x600D0004, 0, 0, 0]], dtype=np.uint32))


def test_batch_crash_is_isolated_to_its_culprit():
    calls = []

    def launch(indices):
        calls.append(list(indices))
        if 2 in indices:
            raise CaseCrash([f"c{i}" for i in indices], "illegal memory access")
        n = len(indices)
        return dev.LaunchResult([np.full(1, i, np.uint32) for i in indices], np.zeros((n, 1, 4), np.uint32))

    done, crashed = launch_isolating(launch, 4, ["c0", "c1", "c2", "c3"])
    assert calls == [[0, 1, 2, 3], [0], [1], [2], [3]]
    assert sorted(done) == [0, 1, 3] and done[3][0].tolist() == [3]
    assert list(crashed) == [2] and crashed[2].startswith("c2: illegal memory access")


@pytest.mark.parametrize("worker, visible, count, expected", [
    ("gw0", "2,3", None, "2"), ("gw3", "2,3", 8, "3"), ("gw1", "GPU-aa, GPU-bb", None, "GPU-bb"),
    ("gw5", None, 4, "1"), ("gw1", None, None, None), (None, "0,1", 2, None), ("master", None, 2, None),
])
def test_worker_pinning(worker, visible, count, expected):
    assert pinned_visible_devices(worker, visible, count) == expected


def test_pin_worker_gpu_sets_the_environment(monkeypatch):
    monkeypatch.setattr(dev, "count_gpus_without_cuda", lambda: None)
    env = {"PYTEST_XDIST_WORKER": "gw2", "CUDA_VISIBLE_DEVICES": "4,5"}
    assert dev.pin_worker_gpu(env) == "4" and env["CUDA_VISIBLE_DEVICES"] == "4"


class _Dev:
    def __init__(self, cc):
        self.compute_capability = cc


@pytest.mark.parametrize("targets, cc, message", [
    (["sm_100a"], (9, 0), "NotSupported: needs sm_100a; device is sm_90"),
    (["sm_100a"], None, "NotSupported: needs sm_100a, found none"),
    (["sm_100a"], (10, 3), "NotSupported: needs sm_100a; device is sm_103"),
    (["sm_110f"], (10, 0), "NotSupported: needs sm_110f; device is sm_100"),
    (["sm_100a", "sm_103a"], (12, 0), "NotSupported: needs one of sm_100a, sm_103a; device is sm_120"),
    (["sm_80"], (7, 5), "NotSupported: needs sm_80; device is sm_75"),
])
def test_gating_skips_with_the_reason(targets, cc, message):
    with pytest.raises(pytest.skip.Exception) as info:
        require_target(targets, None if cc is None else _Dev(cc))
    assert str(info.value.msg) == message


@pytest.mark.parametrize("targets, cc, chosen", [
    (["sm_100a"], (10, 0), "sm_100a"), (["sm_100f"], (10, 3), "sm_100f"), (["sm_103a", "sm_100f"], (10, 3), "sm_103a"),
    (["sm_80"], (9, 0), "sm_80"), (["sm_80"], (10, 0), "sm_80"), (["sm_110f"], (11, 0), "sm_110f"),
])
def test_gating_picks_a_target_that_runs(targets, cc, chosen):
    assert require_target(targets, _Dev(cc)) == chosen


def test_gating_refuses_bad_target_spelling():
    with pytest.raises(ValueError, match="target expects sm_<major><minor>"):
        require_target(["sm100a"], _Dev((10, 0)))


def test_null_and_absent_devices(monkeypatch):
    device, why = devices.open_device("none")
    assert device.kind == "none" and device.compute_capability is None
    with pytest.raises(pytest.skip.Exception, match="found none"):
        require_target(["sm_100a"], device)
    sim, why = devices.open_device("sim")
    assert sim.kind == "sim" and why == ""
    if importlib.util.find_spec("pycuda") is None:
        monkeypatch.setattr(dcuda, "_OPENED", [])
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
        device, why = devices.open_device("cuda")
        assert device is None and "pycuda is not installed" in why
    with pytest.raises(ValueError, match="--device expects cuda, sim or none"):
        devices.open_device("gpu")


# --- the PyCUDA backend through a fake driver ---------------------------------------------------

class FakeDriver:
    """Just enough of ``pycuda.driver`` for :class:`PyCudaDevice`: flat memory, one kernel."""

    class Error(Exception):
        pass

    class function_attribute:  # noqa: N801 (mirrors pycuda's name)
        MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self, fault_on_launch=0, hang=False, context_fails_after=None):
        self.allocs: dict[int, np.ndarray] = {}
        self.next_base = 0x10000
        self.contexts = 0
        self.modules = 0
        self.fault_on_launch = fault_on_launch
        self.hang = hang
        self.sticky = ""
        self.context_fails_after = context_fails_after
        driver = self

        class Device:
            @staticmethod
            def count():
                return 1

            def __init__(self, ordinal):
                pass

            def name(self):
                return "Fake B200"

            def compute_capability(self):
                return (10, 0)

            def make_context(self):
                driver.contexts += 1
                driver.sticky = ""
                if driver.context_fails_after is not None and driver.contexts > driver.context_fails_after:
                    raise driver.Error("context creation failed")
                return FakeContext()

        class FakeContext:
            def pop(self):
                pass

            def detach(self):
                pass

        class Event:
            def record(self):
                if driver.sticky:
                    raise driver.Error(driver.sticky)

            def query(self):
                return not driver.hang

            def time_till(self, other):
                return 2.0

        self.Device, self.Event = Device, Event

    def init(self):
        pass

    def get_driver_version(self):
        return 12080

    def mem_alloc(self, nbytes):
        driver, base = self, self.next_base
        self.allocs[base] = np.zeros(nbytes, np.uint8)
        self.next_base += (nbytes + 0xFFFF) // 0x10000 * 0x10000 + 0x10000

        class Alloc:
            def __int__(self):
                return base

            def free(self):
                driver.allocs.pop(base, None)

        return Alloc()

    def _view(self, address, nbytes):
        for base, buf in self.allocs.items():
            if base <= address and address + nbytes <= base + len(buf):
                return buf[address - base:address - base + nbytes]
        raise self.Error(f"an illegal memory access was encountered at {address:#x}")

    def memcpy_htod(self, dst, src):
        self._view(int(dst), src.nbytes)[:] = np.frombuffer(src.tobytes(), np.uint8)

    def memcpy_dtoh(self, dst, src):
        dst[:] = self._view(int(src), dst.nbytes).view(dst.dtype)

    def module_from_buffer(self, cubin):
        self.modules += 1
        driver = self

        class Function:
            def __call__(self, table, ncases, block, grid, shared):
                if driver.fault_on_launch:            # the kernel faults; the error surfaces at the next call
                    driver.fault_on_launch -= 1
                    driver.sticky = "unspecified launch failure"
                    return
                fake_kernel(driver._view, int(table), int(ncases))

            def set_attribute(self, attr, value):
                pass

        class Module:
            def get_function(self, name):
                if name != "cts_kernel":
                    raise driver.Error(f"named symbol not found: {name}")
                return Function()

        return Module()


def _launch(device, module, flags=(0, 0)):
    buffers = _cases([4] * len(flags))
    return device.launch(module, "cts_kernel", _records(list(flags)), buffers, grid=(len(flags), 1, 1),
                         block=(128, 1, 1), case_ids=[f"c{i}" for i in range(len(flags))])


def test_pycuda_backend_runs_cases_through_the_case_table(monkeypatch):
    monkeypatch.setattr(dcuda, "_OPENED", [])
    driver = FakeDriver()
    device, why = dcuda.open_cuda_device(driver)
    assert why == "" and dcuda.open_cuda_device() == (device, "")  # one device per process
    assert (device.name, device.compute_capability, device.driver_version) == ("Fake B200", (10, 0), "12.8")
    result = _launch(device, device.load(b"cubin"), flags=(0, FLAG_SKIP_LAST))
    assert [o.tolist() for o in result.outputs] == [[1, 2, 3, 4], [1, 2, 3, POISON]]
    assert (result.status_words[:, 0, 0] == 0x600D0003).all() and result.seconds == 0.002
    assert driver.allocs == {}  # arena freed
    with pytest.raises(FakeDriver.Error, match="named symbol"):  # a harness error, not a crash
        device.launch(device.load(b"x"), "other", _records([0]), _cases([1]), (1, 1, 1), (128, 1, 1))
    assert driver.contexts == 1
    with pytest.raises(ValueError, match="grid expects at least 2 CTAs"):
        device.launch(device.load(b"x"), "cts_kernel", _records([0, 0]), _cases([1, 1]), (1, 1, 1), (128, 1, 1))


def test_sticky_error_is_a_crash_and_the_context_is_rebuilt(monkeypatch):
    monkeypatch.setattr(dev, "_RESTART", [])
    driver = FakeDriver(fault_on_launch=1)
    device = dcuda.PyCudaDevice(driver)
    module = device.load(b"cubin")
    with pytest.raises(CaseCrash, match=r"unspecified launch failure; context rebuilt \(cases: c0, c1\)"):
        _launch(device, module)
    assert driver.contexts == 2 and dev.restart_requested() is None
    loaded = driver.modules
    assert _launch(device, module).outputs[0].tolist() == [1, 2, 3, 4]  # module reloaded in the new context
    assert driver.modules == loaded + 1


def test_unrecoverable_context_asks_for_a_worker_restart_and_a_hang_for_a_new_context(monkeypatch):
    monkeypatch.setattr(dev, "_RESTART", [])
    device = dcuda.PyCudaDevice(FakeDriver(fault_on_launch=1, context_fails_after=1))
    with pytest.raises(CaseCrash):
        _launch(device, device.load(b"cubin"))
    assert "could not be rebuilt" in dev.restart_requested()
    monkeypatch.setattr(dev, "_RESTART", [])
    driver = FakeDriver(hang=True)
    device = dcuda.PyCudaDevice(driver, host_timeout_s=0.01)
    with pytest.raises(CaseTimeout, match="did not finish within 0.01 s"):
        _launch(device, device.load(b"cubin"))
    # destroying the context ends the hung kernel: the run goes on in a new one, no restart
    assert driver.contexts == 2 and dev.restart_requested() is None


def test_driver_version_format():
    assert dcuda.format_driver_version(12080) == "12.8"
    assert dcuda.format_driver_version(13000) == "13.0"
