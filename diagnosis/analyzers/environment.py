"""Environment symptoms from the run's recorded environment (profiler_metadata.json, kept as
`run.meta.environment`): debugging settings that slow a run down, and differences between two runs.

Environment variables are read from an `ENV_VARIABLE`-style section (torch_npu and scripts that call
`add_metadata_json` record them there) and from top-level upper-case keys; a `deterministic` entry the
script recorded counts too, as does the CANN version the reader adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from core.jsontypes import JsonObject
from core.symptoms import Emits, Kind, Symptom, SymptomValues
from core.text import Text, join, say
from diagnosis.analyzers import pair_analyzer, run_analyzer
from diagnosis.compare import Comparison, Side


@dataclass(frozen=True, kw_only=True)
class EnvironmentDiff(SymptomValues):
    """Environment recorded in profiler_metadata.json differs or is set for debugging (log level,
    launch blocking, deterministic)."""

    KIND = Kind(
        "environment-diff",
        (
            "pair",
            "run",
        ),
        (
            "environment-debug",
            "environment-diff",
        ),
    )
    variables: Mapping[str, object]  # name -> its value, or (baseline, target) values


# The symptom kinds this module emits, each declared above with its values and messages.
EMITS = Emits.of(EnvironmentDiff)

ENV_SECTIONS = ("env_variable", "env_variables", "env", "environment", "environ")
EXTRA_KEYS = ("deterministic", "cann_version")
ON = ("1", "true", "on", "yes")

# name -> (values that mean a slow debugging setting, why)
DEBUG_SETTINGS: dict[str, tuple[tuple[str, ...], Text]] = {
    "ASCEND_GLOBAL_LOG_LEVEL": (("0", "1"), say("env.cann_log")),
    "GLOG_v": (("0", "1"), say("env.ms_log")),
    "ASCEND_SLOG_PRINT_TO_STDOUT": (ON, say("env.stdout")),
    "ASCEND_LAUNCH_BLOCKING": (ON, say("env.blocking")),
    "HCCL_DETERMINISTIC": (ON, say("env.hccl")),
    "deterministic": (ON, say("env.deterministic")),
}


def environment_variables(meta_env: JsonObject) -> dict[str, str]:
    """Flat {name: value-as-text} of the recorded environment variables and deterministic flags."""
    found: dict[str, str] = {}
    for key, value in meta_env.items():
        if isinstance(value, dict) and key.strip().lower() in ENV_SECTIONS:
            section = cast("dict[object, object]", value)  # a JSON object: isinstance leaves its types open
            found.update({str(k): _text(v) for k, v in section.items() if not isinstance(v, dict | list)})
        elif _env_name(key) and not isinstance(value, dict | list):
            found[key] = _text(value)
        elif key.strip().lower() in EXTRA_KEYS and not isinstance(value, dict | list):
            found[key.strip().lower()] = _text(value)
    return found


def _env_name(key: str) -> bool:
    """UPPER_SNAKE names (plus GLOG_v, spelled with a lower-case v) are environment variables."""
    return key == "GLOG_v" or (key.isupper() and key.replace("_", "").isalnum())


def _text(value: Any) -> str:
    return str(value).strip() if not isinstance(value, bool) else str(value).lower()


def debug_settings(variables: dict[str, str]) -> dict[str, str]:
    """The recorded variables set to a slow debugging value, values lower-cased (`ON` -> `on`)."""
    return {
        name: variables[name].lower()
        for name, (bad, _) in DEBUG_SETTINGS.items()
        if name in variables and variables[name].lower() in bad
    }


@run_analyzer
def environment_debug(side: Side, role: str) -> list[Symptom]:
    """Debug log levels, launch blocking or deterministic execution set in the run's environment.
    Silent when the run recorded no environment (nothing can be said)."""
    bad = debug_settings(environment_variables(side.run.meta.environment))
    if not bad:
        return []
    why = join(
        [
            say("env.setting", name=name, value=value, why=DEBUG_SETTINGS[name][1])
            for name, value in bad.items()
        ]
    )
    return [
        EnvironmentDiff(variables=bad).symptom(
            say("environment-debug", role=say(f"role.{role}"), why=why),
            role,
            1.0 if "ASCEND_LAUNCH_BLOCKING" in bad else 0.7,
        )
    ]


@pair_analyzer
def environment_diff(c: Comparison) -> list[Symptom]:
    """Recorded environment variables that differ between the runs ([baseline, target]; None where a run
    lacks the variable). Only when both runs recorded an environment."""
    base = environment_variables(c.baseline.run.meta.environment)
    target = environment_variables(c.target.run.meta.environment)
    if not base or not target:
        return []
    diffs = {
        name: [base.get(name), target.get(name)]
        for name in sorted(base.keys() | target.keys())
        if base.get(name) != target.get(name)
    }
    if not diffs:
        return []
    flagged = [name for name in diffs if name in debug_settings(target)]
    text = ", ".join(f"{name}: {b} vs {t}" for name, (b, t) in diffs.items())
    return [
        EnvironmentDiff(variables=diffs).symptom(
            say("environment-diff", text=text), "pair", min(1.0, 0.4 + 0.3 * len(flagged) + 0.05 * len(diffs))
        )
    ]
