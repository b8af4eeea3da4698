"""requirements.txt (what a Hugging Face Space installs) stays in sync with pyproject.toml and constraints."""

from __future__ import annotations

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.inputs import ROOT

SDK_PINNED = {"gradio"}  # the Space's sdk_version pins gradio; listing it again would conflict


def _lines(name: str) -> list[str]:
    text = (ROOT / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _pins() -> dict[str, str]:
    pins = {}
    for line in _lines("constraints.txt"):
        req = Requirement(line)
        (spec,) = req.specifier
        pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_requirements_pin_every_runtime_dependency_at_the_constrained_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {canonicalize_name(Requirement(dep).name): Requirement(dep) for dep in project["dependencies"]}
    listed = {
        canonicalize_name(Requirement(line).name): Requirement(line) for line in _lines("requirements.txt")
    }
    pins = _pins()
    assert set(listed) == set(wanted) - SDK_PINNED
    for name, req in listed.items():
        (spec,) = req.specifier
        assert spec.operator == "==" and spec.version == pins[name], name
        assert wanted[name].specifier.contains(spec.version), f"{name} {spec.version} violates pyproject"
        assert str(req.marker or "") == str(wanted[name].marker or ""), name


def test_gradio_is_left_to_the_space_sdk_version():
    names = {canonicalize_name(Requirement(line).name) for line in _lines("requirements.txt")}
    assert not names & SDK_PINNED


def test_space_front_matter_pins_the_constrained_gradio_and_runs_app_py():
    import yaml

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), "README.md must open with the Hugging Face Space front matter"
    front = yaml.safe_load(text.split("---\n", 2)[1])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert front["sdk_version"] == _pins()["gradio"]
    assert (ROOT / front["app_file"]).is_file()
