"""The benchmark's report renders every run it is given, the real scale included: a report
that fails at the end of a long run loses the run (the results are written first, and
`python -m bench.report` regenerates the document from them)."""

from __future__ import annotations

from pathlib import Path

from bench.report import merge, render_markdown

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def test_the_real_scale_is_reported_beside_the_generated_scales() -> None:
    real = sorted(RESULTS.glob("*-real.json"))
    generated = sorted(path for path in RESULTS.glob("*.json") if not path.name.endswith("-real.json"))
    assert real, "the committed results hold a run of the real scale"
    assert generated, "… and one of the generated scales"
    merged = merge([generated[-1], real[-1]])
    text = render_markdown(merged)
    assert merged["scales"]
    for scale in merged["scales"]:
        assert f"### Scale {scale}" in text
    assert "### The real scale: the corpus packages" in text
    for name in merged["real"]:
        section = text.split(f"**{name}**", 1)[1].split("**", 1)[0]
        # Each goal is judged against its own peer, measured in the same run.
        for measure in (
            "spawn `xcindex serve` → first answer, no cache",
            "spawn → first answer, with the cache",
        ):
            row = next(line for line in section.splitlines() if line.startswith(f"| {measure}"))
            assert "C walk as a process" in row, row
            assert "met" in row or "missed" in row, row
