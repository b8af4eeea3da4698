"""The version of perf-doctor, for the report's generator field and the package metadata.

pyproject.toml reads it from here (setuptools dynamic version), so a source checkout and an installed
package agree without importing importlib.metadata (about 10 ms of every CLI start)."""

VERSION = "0.1.0"
SCHEMA_VERSION = "1.0"  # of the report document (doctor.model, docs/report.schema.json)
