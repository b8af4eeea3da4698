"""The sandbox: decoding of untrusted uploads (archives, MINDIR, SQLite) in a child process under hard
memory, CPU and wall-clock limits, with cancellation. It knows nothing of reports or the app.

Public API: `run_isolated`, `run_cancellable`, `Cancellation`, `kill_all_children`, `fork_warm_reader`
(a single-threaded caller's warm reader as a fork of itself), `IsolationLimits`,
`IsolationError`, and the decoders `materialize`, `load_mindir`, `read_profile`, `read_npu_smi`,
`decode_dump`, `decode_mapping` with `say_reading` (all in `sandbox.isolation`).
"""

from sandbox.isolation import (
    Cancellation,
    IsolationError,
    IsolationLimits,
    decode_dump,
    decode_mapping,
    fork_warm_reader,
    kill_all_children,
    load_mindir,
    materialize,
    run_cancellable,
    run_isolated,
    say_reading,
)

__all__ = [
    "Cancellation",
    "IsolationError",
    "IsolationLimits",
    "decode_dump",
    "decode_mapping",
    "fork_warm_reader",
    "kill_all_children",
    "load_mindir",
    "materialize",
    "run_cancellable",
    "run_isolated",
    "say_reading",
]
