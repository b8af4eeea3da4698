"""Case and triage settings from the environment (doctor.config): defaults, parsing and who may triage."""

from __future__ import annotations

import pytest

from core.errors import InputError
from doctor.config import AppConfig, default_case_db, size_bytes


def test_the_default_database_is_in_the_per_user_data_folder_of_the_environment():
    assert (
        AppConfig.from_env({"HOME": "/home/ann"}).case_db
        == "/home/ann/.local/share/perf-doctor/cases.sqlite3"
    )
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/srv/data"}
    assert AppConfig.from_env(env).case_db == "/srv/data/perf-doctor/cases.sqlite3"
    assert default_case_db({"XDG_DATA_HOME": "relative/dir"}) is None  # XDG ignores relative paths
    assert AppConfig.from_env({}).case_db is None  # no home known: a private temporary database
    assert AppConfig().case_db is None


def test_case_settings_are_read_from_their_variables():
    env = {
        "HOME": "/home/ann",
        "PERF_DOCTOR_CASE_DB": "/data/perf-doctor/cases.sqlite3",
        "PERF_DOCTOR_CASE_RETENTION_DAYS": "7",
        "PERF_DOCTOR_CASE_KEEP_UPLOADS": "on",
        "PERF_DOCTOR_CASE_UPLOAD_MAX": "2mb",
        "PERF_DOCTOR_PUBLIC_URL": "https://doctor.example.org/app",
    }
    config = AppConfig.from_env(env)
    assert config.case_db == "/data/perf-doctor/cases.sqlite3"
    assert (config.case_retention_days, config.keep_uploads, config.upload_max_bytes) == (
        7,
        True,
        2 * 1024**2,
    )
    assert config.public_url == "https://doctor.example.org/app"
    defaults = AppConfig.from_env({})
    assert (defaults.case_retention_days, defaults.keep_uploads, defaults.triage) == (30, False, "auto")
    assert AppConfig.from_env({"PERF_DOCTOR_CASE_RETENTION_DAYS": "0"}).case_retention_days == 0


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("PERF_DOCTOR_CASE_RETENTION_DAYS", "-1", "whole number of days"),
        ("PERF_DOCTOR_CASE_RETENTION_DAYS", "a month", "whole number of days"),
        ("PERF_DOCTOR_CASE_KEEP_UPLOADS", "maybe", "not on or off"),
        ("PERF_DOCTOR_CASE_UPLOAD_MAX", "lots", "not a size"),
        ("PERF_DOCTOR_TRIAGE", "sometimes", "not a triage mode"),
        ("PERF_DOCTOR_PUBLIC_URL", "javascript:alert(1)", "not an http"),
        ("PERF_DOCTOR_STAFF", "alice", "need a login"),
    ],
)
def test_a_bad_value_names_its_variable(name, value, problem):
    with pytest.raises(InputError, match=problem) as error:
        AppConfig.from_env({name: value})
    assert name in error.value.message


def test_sizes_in_bytes():
    assert (
        size_bytes("4096", "X") == 4096
        and size_bytes("1 KB", "X") == 1024
        and size_bytes("3gb", "X") == 3 << 30
    )


def test_triage_is_for_logged_in_staff_by_default():
    public = AppConfig()
    assert not public.triage_enabled and not public.may_triage(None)
    login = AppConfig.from_env({"PERF_DOCTOR_USERS": "ann:pw,bob:pw"})
    assert login.triage_enabled and login.may_triage("ann") and not login.may_triage(None)
    staff = AppConfig.from_env({"PERF_DOCTOR_USERS": "ann:pw,bob:pw", "PERF_DOCTOR_STAFF": "ann"})
    assert staff.may_triage("ann") and not staff.may_triage("bob")
    forced = AppConfig.from_env({"PERF_DOCTOR_TRIAGE": "on"})  # a private network, no login
    assert forced.triage_enabled and forced.may_triage(None)
    off = AppConfig.from_env({"PERF_DOCTOR_USERS": "ann:pw", "PERF_DOCTOR_TRIAGE": "off"})
    assert not off.triage_enabled and not off.may_triage("ann")
