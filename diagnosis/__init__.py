"""Profile reading, alignment and symptom analysis: every profiler layout into one run model.

A regular package (not a namespace one), so that no stray `diagnosis.py` on the import path, such as
the benchmark script bench/diagnosis.py, can shadow it.
"""
