"""The Ranks section end to end: the real 2-rank job, derived 8-rank jobs (a straggler named with its reason
in the verdict; two healthy runs give nothing significant), jobs of different ranks, and the section in
JSON (schema-valid), Markdown, HTML and Chinese."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema
import pytest

from doctor import facade
from doctor.render import render
from doctor.report import Report
from tests.fixtures.cluster.generate import Job, make_job, samples_root
from tests.support.inputs import ROOT
from tests.support.runs import FIXTURES

REAL = samples_root() / "torch_npu_2rank" / "text" / "level1"
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))


@cache
def jobs(base: str) -> dict[str, Path]:
    """Two healthy 8-rank runs of one job and the same job with rank 5 slow (AI CPU fallback)."""
    root = Path(base)
    return {
        "healthy_a": make_job(root / "healthy_a", Job(ranks=8, steps=3, seed=11)),
        "healthy_b": make_job(root / "healthy_b", Job(ranks=8, steps=3, seed=12)),
        "straggler": make_job(root / "straggler", Job(ranks=8, steps=3, seed=13, slow=5)),
    }


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return jobs(str(tmp_path_factory.mktemp("eight")))


def _diagnose(*args: object, **kwargs: object) -> Report:
    return facade.diagnose(*args, isolate=False, translate=False, **kwargs)  # type: ignore[arg-type]


def test_a_straggler_job_names_the_rank_and_the_reason_in_the_verdict(eight: dict[str, Path]) -> None:
    report = _diagnose(str(eight["healthy_a"]), str(eight["straggler"]))
    text = report.document.verdict.text
    assert "rank 5 is the slow rank" in text and "AI CPU" in text
    ranks = report.document.ranks
    target = next(job for job in ranks.jobs if job.role == "target")
    assert target.slow_rank.rank == 5 and target.chosen_rank == 5
    assert target.slow_rank.why[0].id == "ai-cpu-fallback"
    assert set(target.slow_rank.victims) == {0, 1, 2, 3, 4, 6, 7}
    assert "rank by rank" in ranks.comparison and len(ranks.by_rank) == 8
    assert "slow-rank" in {c.id for c in report.document.causes if c.material}


def test_two_runs_of_a_healthy_job_give_nothing_significant(eight: dict[str, Path]) -> None:
    report = _diagnose(str(eight["healthy_a"]), str(eight["healthy_b"]))
    assert report.document.verdict.status == "nothing-found"
    assert all(job.slow_rank is None for job in report.document.ranks.jobs)


def test_a_job_given_alone_names_its_slow_rank(eight: dict[str, Path]) -> None:
    report = _diagnose(None, str(eight["straggler"]))
    assert "rank 5 is the slow rank" in report.document.verdict.text


def test_jobs_of_different_ranks_compare_a_typical_rank_of_each(eight: dict[str, Path]) -> None:
    report = _diagnose(str(FIXTURES / "cluster" / "healthy_a"), str(eight["healthy_b"]))
    assert "different ranks (4 and 8)" in report.document.ranks.comparison
    assert report.document.ranks.by_rank == []


def test_the_real_two_rank_job_in_every_format() -> None:
    report = facade.diagnose(None, str(REAL), isolate=False)
    document = report.to_dict()
    jsonschema.validate(document, SCHEMA)
    (job,) = document["ranks"]["jobs"]
    assert [r["rank"] for r in job["rows"]] == [0, 1] and job["slow_rank"] is None
    assert job["rows"][0]["communication_ms"] == pytest.approx(101.963, abs=0.01)
    assert "communication-bound" in {c["id"] for c in document["causes"]}
    assert "device-idle" not in {s["kind"] for s in document["symptoms"]}
    markdown = render(report, "md")
    assert "## Ranks" in markdown and "no outlier test can tell which of two" in markdown
    html = render(report, "html")
    assert "id='ranks'" in html and "Every rank: step time per rank and step" in html
    zh = render(report.in_lang("zh"), "md")
    assert "## 各 rank" in zh


def test_rank_narrows_the_report_to_one_rank() -> None:
    report = _diagnose(None, str(REAL), rank=1)
    assert report.document.ranks is None and "ranks" not in report.to_dict()


def test_triage_shows_the_rank_count_and_the_slow_rank(eight: dict[str, Path]) -> None:
    from desk.cases.model import summarize

    report = _diagnose(None, str(eight["straggler"]))
    assert "target: 8 ranks, slow rank 5" in summarize(report.document)["layouts"]
