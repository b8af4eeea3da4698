"""The README's promises: its API snippet runs as written, and its two commands are what CI runs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow  # launches the app (Gradio)
def test_readme_api_snippet_runs(app_url, monkeypatch, capsys):
    snippet = README.split("```python\n", 1)[1].split("\n```", 1)[0]
    assert 'Client("http://127.0.0.1:7860/")' in snippet
    monkeypatch.chdir(ROOT)
    exec(compile(snippet.replace("http://127.0.0.1:7860/", app_url), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "\nInference is " in out and "Inference computes in FP32" in out


def test_ci_runs_exactly_the_readme_test_command():
    assert "make test   # runs the whole test suite" in README
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1].strip() == "make test"
    assert all(c.startswith(("set ", "cd ")) for c in commands[1:-1] if not c.startswith("#!"))
