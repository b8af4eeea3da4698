"""The `perf-doctor` command line: compare, inspect, outputs, pack, reprofile, cases and triage, over
the facade (`doctor`) and the support desk (`desk`). Entry point: `cli.main:main`.
"""
