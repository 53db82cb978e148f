"""The dashboard rendered in real headless Chromium: the numbers its script computes are read back
from the rendered DOM and compared with counts worked out by hand from the sample runs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from html.parser import HTMLParser

import pytest

from results.report import build_reports
from results.resultset import load_columns
from results.status import Status
from tests.results_samples import A, B, write_sample

pytestmark = pytest.mark.reference

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Cells(HTMLParser):
    """Collects (tag, attributes, text) of every element that has no child elements."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict, list[str]]] = []
        self.elements: list[tuple[str, dict, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("meta", "input", "br", "link"):
            return
        self.stack.append((tag, dict(attrs), []))

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, attrs, text = self.stack.pop()
            self.elements.append((open_tag, attrs, "".join(text).strip()))
            if self.stack:
                self.stack[-1][2].extend(text)
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)

    def find(self, tag: str, **attrs) -> list[tuple[dict, str]]:
        want = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [(a, t) for g, a, t in self.elements
                if g == tag and all(a.get(k) == v or (k == "class" and v in (a.get(k) or "").split())
                                    for k, v in want.items())]


def _render(path, fragment: str = "") -> _Cells:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--dump-dom", path.as_uri() + fragment],
            capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cells = _Cells()
    cells.feed(proc.stdout)
    return cells


@pytest.fixture(scope="module")
def dashboard_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("dash")
    write_sample(root / "old")
    write_sample(root / "new", {"a.desc.3": Status.PASS, "a.mma.1": Status.PASS, "b.alloc.1": Status.FAIL},
                 toolchain="ptxas 13.1")
    build_reports(load_columns([f"old={root / 'old'}", f"new={root / 'new'}"]), root / "out")
    return root / "out" / "dashboard.html"


@pytest.fixture(scope="module")
def dashboard(dashboard_file):
    if CHROMIUM is None:
        pytest.skip("chromium not found: apt-get install -y chromium (Debian) to render the dashboard")
    return dashboard_file


def test_page_is_self_contained_and_numbers_are_computed_by_its_script(dashboard_file):
    html = dashboard_file.read_text(encoding="utf-8")
    for needle in ("http://", "https://", " src=", " href=", "@import"):
        assert needle not in html
    for number in ("50.0%", "33.3%", "42.9%", "57.1%"):  # only the script may produce these
        assert number not in html


def test_pass_rates_and_counts_in_rendered_dom(dashboard):
    dom = _render(dashboard)
    assert dom.find("body", data_rendered="1")
    # Pass rate = (Pass + Flake) / (all but Skip and NotSupported), worked out by hand:
    # old: A = Pass, Pass, Fail, NotSupported, Crash -> 2/4; B = Pass, ExpectedFail, Skip, Missing -> 1/3
    # new: A -> 4/4; B = Fail, ExpectedFail, Skip, Missing -> 0/3
    expected = {(A, "0"): "50.0%", (B, "0"): "33.3%", (A, "1"): "100.0%", (B, "1"): "0.0%"}
    for (section, col), rate in expected.items():
        assert [t for _, t in dom.find("td", class_="rate", data_section=section, data_col=col)] == [rate]
    assert [t for _, t in dom.find("td", id="total-rate-0")] == ["42.9%"]
    assert [t for _, t in dom.find("td", id="total-rate-1")] == ["57.1%"]
    counts = {(a["data-col"], a["data-status"]): t for a, t in dom.find("td", class_="count")
              if "data-col" in a}
    assert (counts[("0", "Pass")], counts[("0", "Crash")], counts[("0", "Missing")]) == ("3", "1", "1")
    assert (counts[("1", "Pass")], counts[("1", "Fail")], counts[("1", "Crash")]) == ("4", "1", "0")
    assert [t for _, t in dom.find("td", id="run-cases-0")] == ["9"]
    # coverage matrix of the first column: A/mma has 1 Crash and 2 legal variants not run
    mma = [a for a, _ in dom.find("tr", class_="coverage-row", data_section=A, data_family="mma")]
    assert len(mma) == 1
    not_run = [t for a, t in dom.find("td", data_status="not-run")]
    assert sorted(not_run) == sorted(["0", "2", "0", "1"])


def test_drill_down_aligns_columns_on_case_ids(dashboard):
    dom = _render(dashboard, f"#section={A}")
    rows = {a["data-case"]: a for a, _ in dom.find("tr", class_="case-row")}
    assert sorted(rows) == ["a.desc.1", "a.desc.2", "a.desc.3", "a.desc.4", "a.mma.1"]
    assert {cid for cid, a in rows.items() if "differs" in a["class"].split()} == {"a.desc.3", "a.mma.1"}
    statuses = [(a["data-col"], t) for a, t in dom.find("td", class_="status")]
    assert statuses.count(("0", "Crash")) == 1 and statuses.count(("1", "Pass")) == 4
    assert [t for _, t in dom.find("p", id="cases-summary")] == ["5 of 5 cases shown"]


# -- issue 15: every section of the seeds, Table 39 grid and layout matrix ------------------------

def _write_mma_run(directory) -> None:
    from results.outcome_log import Outcome, OutcomeWriter, outcome_path, run_info_path, write_json_atomic

    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_info_path(directory, ""), {"level": "smoke", "start": 1.0, "end": 2.0})
    writer = OutcomeWriter(outcome_path(directory, "", "main"))
    rows = [("m.1", Status.PASS, 64, "sw128_k"), ("m.2", Status.FAIL, 64, "sw128_k"), ("m.3", Status.PASS, 256, "swnone_mn")]
    for cid, status, n, b_layout in rows:
        writer.append(Outcome(case_id=cid, status=status, section="9.7.16.10.9.1", family="mma",
                              sections=("9.7.16.10.9.1", "9.7.16.4.1"),
                              variant={"kind": "f16", "m": 128, "n": n, "a_type": "f16", "b_type": "f16",
                                       "a_operand": "tmem", "b_layout": b_layout}, nodeid=f"t.py::{cid}"))
    writer.close()


@pytest.fixture(scope="module")
def mma_dashboard(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium not found: apt-get install -y chromium (Debian) to render the dashboard")
    root = tmp_path_factory.mktemp("dash15")
    _write_mma_run(root / "run")
    build_reports(load_columns([f"run={root / 'run'}"]), root / "out")
    return _render(root / "out" / "dashboard.html")


def test_every_section_is_listed_and_untested_ones_are_highlighted(mma_dashboard):
    from reference.sections import SECTIONS

    dom = mma_dashboard
    assert dom.find("body", data_rendered="1")          # the script ran to its end (no exception)
    rows = {a["data-section"]: a for a, _ in dom.find("tr", class_="spec-section")}
    assert set(SECTIONS) <= set(rows)
    assert "untested" not in rows["9.7.16.10.9.1"]["class"].split()
    assert "untested" not in rows["9.7.16.4.1"]["class"].split()       # exercised as an "other" section
    assert "untested" in rows["9.7.16.5.1"]["class"].split()
    cases = {a["data-section"]: t for a, t in dom.find("td", class_="sec-cases")}
    assert cases["9.7.16.10.9.1"] == "3 (3/0)" and cases["9.7.16.4.1"] == "3 (0/3)"
    rates = {a["data-section"]: t for a, t in dom.find("td", class_="sec-rate")}
    assert rates["9.7.16.10.9.1"] == "66.7%" and rates["9.7.16.5.1"] == "\u2014"


def test_table39_grid_and_layout_matrix_are_coloured_by_status(mma_dashboard):
    cells = {(a["data-kind"], a["data-m"], a["data-n"]): (a["data-status"], t)
             for a, t in mma_dashboard.find("td", class_="cell") if "data-kind" in a}
    assert cells == {("f16", "128", "64"): ("Fail", "2"), ("f16", "128", "256"): ("Pass", "1")}
    layouts = {(a["data-major"], a["data-bits"], a["data-swizzle"]): (a["data-status"], t)
               for a, t in mma_dashboard.find("td", class_="cell") if "data-major" in a}
    assert layouts == {("K", "16", "sw128"): ("Fail", "2"), ("MN", "16", "swnone"): ("Pass", "1")}
