"""ptxsim.ptx.parse_cache: parsed PTX kept on disk; a bad entry is a miss, never an error."""

import pickle

import pytest

from ptxsim import SimDevice
from ptxsim.errors import PtxSyntaxError
from ptxsim.ptx import parse_cache
from ptxsim.ptx.parser import parse_ptx
from tests.sim_ptx import ABI_COPY

pytestmark = pytest.mark.reference


def _entries(directory):
    return sorted(directory.glob("*.pickle"))


def test_a_cached_parse_equals_a_fresh_one_and_is_read_back(tmp_path, monkeypatch):
    first = parse_cache.cached_parse(ABI_COPY, tmp_path)
    assert first == parse_ptx(ABI_COPY)
    assert [p.name for p in _entries(tmp_path)] == [f"{parse_cache.entry_key(ABI_COPY)}.pickle"]
    assert not list(tmp_path.glob("*.tmp"))                  # written through a renamed temporary file

    def no_parse(text):
        raise AssertionError("expects the entry to be read, but the PTX was parsed again")

    monkeypatch.setattr(parse_cache.parser, "parse_ptx", no_parse)
    assert parse_cache.cached_parse(ABI_COPY, tmp_path) == first


@pytest.mark.parametrize("content", [b"", b"not a pickle", pickle.dumps((parse_cache.FORMAT, "other key", None)),
                                     pickle.dumps((parse_cache.FORMAT + 1, "KEY", "module")), pickle.dumps([1, 2])])
def test_a_corrupt_or_foreign_entry_is_rebuilt(tmp_path, content):
    key = parse_cache.entry_key(ABI_COPY)
    path = tmp_path / f"{key}.pickle"
    path.write_bytes(content.replace(b"KEY", key.encode()))
    assert parse_cache.cached_parse(ABI_COPY, tmp_path) == parse_ptx(ABI_COPY)
    fmt, stored_key, module = pickle.loads(path.read_bytes())    # rewritten with a good entry
    assert (fmt, stored_key, module) == (parse_cache.FORMAT, key, parse_ptx(ABI_COPY))


def test_the_key_depends_on_the_text_and_the_parser():
    assert parse_cache.entry_key(ABI_COPY) != parse_cache.entry_key(ABI_COPY + "\n")
    assert len(parse_cache.PARSER_FINGERPRINT) == 64


def test_an_unwritable_directory_only_costs_the_parse(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert parse_cache.cached_parse(ABI_COPY, blocker / "cache") == parse_ptx(ABI_COPY)


def test_a_syntax_error_raises_and_stores_nothing(tmp_path):
    with pytest.raises(PtxSyntaxError):
        parse_cache.cached_parse(".version 8.7\n.target sm_100a\n.address_size 64\n@@@", tmp_path)
    assert not list(tmp_path.iterdir())


def test_sim_device_loads_through_the_cache(tmp_path):
    dev = SimDevice(parse_cache=tmp_path)
    assert dev.load(ABI_COPY).module == SimDevice().load(ABI_COPY).module
    assert len(_entries(tmp_path)) == 1
    assert dev.load(ABI_COPY).module == parse_ptx(ABI_COPY)
