"""``conformance.harness.not_run``: the "not run" rows kept on disk give what the enumeration gives."""

from __future__ import annotations

from conformance.harness import not_run as NR


def test_cold_warm_and_corrupt_entries_give_the_enumerated_rows(tmp_path, monkeypatch):
    want = NR.compute("smoke", (), ("ld",))
    assert want and all(r.reason == "in level default, not in smoke" for r in want)
    assert NR.not_run("smoke", (), ("ld",), directory=tmp_path) == want           # cold: computed, written
    path = NR.entry_path(tmp_path, "smoke", (), ("ld",))
    assert path.is_file()

    def no_enumeration(*args):
        raise AssertionError("a warm entry must not enumerate")

    monkeypatch.setattr(NR, "compute", no_enumeration)
    assert NR.not_run("smoke", (), ("ld",), directory=tmp_path) == want           # warm: read back
    path.write_text('{"case_id": 3}\n', encoding="utf-8")                         # corrupt: recomputed
    monkeypatch.undo()
    assert NR.not_run("smoke", (), ("ld",), directory=tmp_path) == want
    assert NR.not_run("smoke", (), ("ld",), directory=tmp_path) == want


def test_the_key_covers_level_filters_readings_and_code(monkeypatch, tmp_path):
    from reference.spec_questions import QUESTIONS, set_defaults

    base = NR.entry_path(tmp_path, "smoke", (), ("ld",))
    assert NR.entry_path(tmp_path, "default", (), ("ld",)) != base
    assert NR.entry_path(tmp_path, "smoke", (), ("st",)) != base
    assert NR.entry_path(tmp_path, "smoke", ("9.7.16.8",), ("ld",)) != base
    qid, q = next((k, q) for k, q in QUESTIONS.items() if len(q.readings) > 1)
    other = next(r.id for r in q.readings if r.id != q.pick)
    set_defaults({qid: other})
    try:
        assert NR.entry_path(tmp_path, "smoke", (), ("ld",)) != base
    finally:
        set_defaults({})
    monkeypatch.setattr(NR, "code_fingerprint", lambda: "edited")
    assert NR.entry_path(tmp_path, "smoke", (), ("ld",)) != base


def test_no_next_level_and_an_unwritable_cache(tmp_path):
    assert NR.not_run("exhaustive", directory=tmp_path) == []
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert NR.not_run("smoke", (), ("ld",), directory=blocked) == NR.compute("smoke", (), ("ld",))
    assert len(NR.code_fingerprint()) == 64
