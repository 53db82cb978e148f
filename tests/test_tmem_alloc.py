"""The allocation-rule checker (§9.7.16.1.2, §9.7.16.7.1): the spec's examples pass, each rule's
violation is reported with its section, and every rule quoted here is in the spec text."""

from __future__ import annotations

import pytest

from reference.errors import SpecError
from reference.tmem_alloc import Alloc, Dealloc, Relinquish, check_allocations, require_valid_allocations
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

EXAMPLE_1 = [("alloc", 32, 1, 0, "t"), ("ld",), ("mma", 1), ("dealloc", "t", 32, 1, 0), ("relinquish", 1, 0), ("exit",)]
EXAMPLE_2 = [("alloc", 32, 2, 0, "t"), ("cp", 2), ("mma", 2), ("commit", 2), ("dealloc", "t", 32, 2, 0),
             ("relinquish", 2, 0), ("exit",)]


@pytest.mark.parametrize("ops", [EXAMPLE_1, EXAMPLE_2], ids=["example1", "example2"])
def test_spec_examples_are_accepted(ops):
    assert check_allocations(ops) is None
    require_valid_allocations(ops)


def test_typical_kernels_are_accepted():
    ops = [("alloc", 256, 1, 4, "acc"), ("alloc", 128, 1, 4, "a"), ("alloc", 128, 1, 4, "sf"), ("st",), ("wait",),
           ("mma", 1), ("commit", 1), ("fence",), ("ld",), ("dealloc", "sf", 128, 1, 4), ("dealloc", "acc", 256, 1, 4),
           ("dealloc", "a", 128, 1, 4)]                    # end of sequence = exit
    assert check_allocations(ops) is None
    # the same sizes again after freeing (non-increasing) and unnamed allocations
    assert check_allocations([("alloc", 512, 1, 0), ("dealloc", "a0", 512, 1, 0), ("alloc", 512, 1, 1),
                              ("dealloc", "a1", 512, 1, 1)]) is None


VIOLATIONS = {
    "ncols not a power of 2": ([("alloc", 96, 1, 0)], 0, "9.7.16.7.1", "nCols"),
    "ncols below 32": ([("alloc", 16, 1, 0)], 0, "9.7.16.7.1", "nCols"),
    "ncols above 512": ([("alloc", 1024, 1, 0)], 0, "9.7.16.7.1", "nCols"),
    "ncols increases": ([("alloc", 32, 1, 0), ("alloc", 64, 1, 0)], 1, "9.7.16.7.1", "must not increase"),
    "increase after free": ([("alloc", 32, 1, 0, "x"), ("dealloc", "x", 32, 1, 0), ("alloc", 64, 1, 0)], 2, "9.7.16.7.1", "must not increase"),
    "alloc after relinquish": ([("relinquish", 1, 0), ("alloc", 32, 1, 0)], 1, "9.7.16.7.1", "relinquish"),
    "not deallocated": ([("alloc", 32, 1, 0), ("exit",)], 1, "9.7.16.1.2", "deallocate before exit"),
    "not deallocated at end": ([("alloc", 32, 1, 0)], 1, "9.7.16.1.2", "deallocate before exit"),
    "dealloc unknown": ([("alloc", 32, 1, 0, "x"), ("dealloc", "y", 32, 1, 0)], 1, "9.7.16.7.1", "previous allocation"),
    "double dealloc": ([("alloc", 32, 1, 0, "x"), ("dealloc", "x", 32, 1, 0), ("dealloc", "x", 32, 1, 0)], 2, "9.7.16.7.1", "previous allocation"),
    "dealloc other size": ([("alloc", 64, 1, 0, "x"), ("dealloc", "x", 32, 1, 0)], 1, "9.7.16.7.1", "dealloc nCols"),
    "two warps": ([("alloc", 32, 1, (0, 1))], 0, "9.7.16.5", "issue granularity"),
    "no peer warp": ([Alloc(32, 2, 0, peer=False)], 0, "9.7.16.5", "issue granularity"),
    "peer missing in dealloc": ([Alloc(32, 2, 0, "x"), Dealloc("x", 32, 2, 0, peer=False)], 1, "9.7.16.5", "issue granularity"),
    "relinquish by two warps": ([Relinquish(1, (2, 3))], 0, "9.7.16.5", "issue granularity"),
    "mixed cta_group": ([("alloc", 32, 1, 0, "x"), ("mma", 2)], 1, "9.7.16.7.1", "one .cta_group"),
    "mixed cta_group in cp": ([("cp", 2), ("shift", 1)], 1, "9.7.16.7.1", "one .cta_group"),
    "over capacity": ([("alloc", 512, 1, 0), ("alloc", 256, 1, 0)], 1, "9.7.16.7.1", "capacity"),
    "op after exit": ([("exit",), ("ld",)], 1, "9.7.16.7.1", "after exit"),
}


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_each_violation_is_reported_first(name):
    ops, index, section, rule = VIOLATIONS[name]
    violation = check_allocations(ops)
    assert violation is not None
    assert (violation.index, violation.section) == (index, section)
    assert rule in violation.rule
    with pytest.raises(SpecError, match=section.replace(".", r"\.")):
        require_valid_allocations(ops)


def test_first_violation_wins():
    ops = [("alloc", 64, 1, 0), ("alloc", 128, 1, 0), ("alloc", 48, 1, 0)]
    assert check_allocations(ops).index == 1


def test_malformed_operations_are_value_errors():
    for bad in [("free", 32), ("mma",), ("ld", 1), (), "alloc"]:
        with pytest.raises(ValueError):
            check_allocations([bad])


# The rules the checker implements, each with the words of the spec that state it.
RULE_TEXT = [
    "The number of columns must be a power of 2",
    "must be\nwithin the range [32, 512]",
    "The number of columns allocated should not increase between\nany two allocations",
    "it is illegal for a CTA to perform `tcgen05.alloc` after any of its constituent threads\nexecute `tcgen05.relinquish_alloc_permit`",
    "must be explicitly deallocated using `tcgen05.dealloc` before the kernel exits",
    "one warp\nfrom each of the [peer CTAs]",
    "All `tcgen05` instructions within a kernel must specify the same value for the `.cta_group`",
    "must point to a previous [Tensor Memory](#tensor-memory) allocation",
]


@pytest.mark.parametrize("phrase", RULE_TEXT)
def test_rules_are_the_spec_text(phrase):
    assert phrase in spec_text("ptx-9.7.16-tcgen05.md")
