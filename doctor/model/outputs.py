"""The outputs comparison as a typed report part: two runs' dumps compared layer by layer, where they
first part ways, the divergence along depth, and the ranked causes (the same Cause model as profiles)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from doctor.model.base import Count, NonNegative, Number, Record
from doctor.model.findings import Cause, SymptomRecord


class DumpInfo(Record):
    """One side's dump: what the user gave, its layout and framework, how much was read."""

    source: str = Field(description="What the user gave (a folder, an archive, or the file found in it).")
    layout: str = Field(description="`msprobe`, `mindspore-npy` or `mindspore-statistic`.")
    framework: str = Field(description="`mindspore` or `pytorch` (msprobe dumps say which).")
    layers: Count = Field(description="Layers read: op or API calls, network inputs and parameters.")
    files: Count = Field(description="Tensor or statistics files read.")
    bytes_read: Count = Field(description="Bytes of those files.")


class LayerPoint(Record):
    """One matched layer along the depth of the network."""

    depth: Count = Field(description="Position among the matched layers, in execution order, from 0.")
    layer: str = Field(description="The baseline's name of the layer.")
    target_layer: str = Field(description="The target's name of the layer it was matched with.")
    op_type: str = Field(description="Op type or API name.")
    rel_diff: NonNegative | None = Field(
        description="Worst relative difference of max, min, mean and norm over its outputs (1e30: the "
        "shapes or the inf/nan counts differ); `null` when neither side dumped an output tensor."
    )
    stat: str | None = Field(description="The statistic that differs most (or `shape`, `inf/nan`).")
    tolerance: NonNegative | None = Field(description="The relative tolerance used for this layer.")
    dtype: str | None = Field(description="The dtype whose tolerance was used (the less precise one).")
    diverged: bool = Field(description="Beyond the tolerance.")


class FirstDivergence(Record):
    """The first layer, in execution order, whose outputs differ beyond the tolerance."""

    layer: str = Field(description="The baseline's name of the layer.")
    target_layer: str = Field(description="The target's name of the layer.")
    op_type: str = Field(description="Op type or API name.")
    depth: Count = Field(description="Position among the matched layers, from 0.")
    rel_diff: Number = Field(description="Its worst relative difference (1e30: shapes or inf/nan differ).")
    stat: str = Field(description="The statistic that differs most.")
    tolerance: NonNegative = Field(description="The relative tolerance used.")
    dtype: str = Field(description="The dtype whose tolerance was used.")
    inputs_differ: bool = Field(
        description="Its data input already differs (the difference came from before)."
    )
    call_site: str | None = Field(
        default=None,
        description="The baseline's code that made the call, from msprobe's stack.json: the first frame "
        "outside installed packages and msprobe (`file:line in function: code`); `null` when unknown.",
    )
    target_call_site: str | None = Field(
        default=None, description="The same for the target's call; `null` when unknown."
    )


class DeterministicCost(Record):
    """From the target's profile: the time the fix for run-to-run differences can slow. On Ascend and GPU
    the fix is ms.set_deterministic(True), which orders reductions and atomics; on CPU it is one kernel
    thread (threads_num(1)), which can slow every operator."""

    setting: Literal["set_deterministic", "threads_num"] = Field(
        default="set_deterministic",
        description="The fix for the target's device: `set_deterministic` (ms.set_deterministic(True), "
        "Ascend and GPU) or `threads_num` (ms.device_context.cpu.op_tuning.threads_num(1), CPU).",
    )
    reduction_ms_per_step: NonNegative = Field(
        description="Time per step of the target's reduction and atomic operators (ReduceSum/Mean, MatMul, "
        "AllReduce, scatter, norm, softmax): what deterministic kernels can slow at most."
    )
    operator_ms_per_step: NonNegative = Field(
        default=0.0,
        description="Time per step of all the target's operators: what one CPU kernel thread can slow at "
        "most (`setting` `threads_num`).",
    )
    step_ms: NonNegative = Field(description="The target's time per step.")
    share: NonNegative = Field(
        description="The time the setting can slow over step_ms: reduction_ms_per_step's share under "
        "`set_deterministic`, operator_ms_per_step's under `threads_num`."
    )
    operators: Count = Field(description="How many of the target's operators are reductions or atomics.")


# What would decide a divergence no known cause explains (outputs.undecided's ids, in order of action).
DivergenceAsk = Literal["shapes", "layer-inputs", "network-inputs", "weights", "repeat"]


class UnexplainedDivergence(Record):
    """The outputs part ways and no known cause fits: the layer, and the data that would decide it."""

    layer: str = Field(description="The first layer that parts ways.")
    asks: list[DivergenceAsk] = Field(
        description="What would decide it, leaving out what the dumps hold: `shapes` (the two call sites' "
        "code and the layer's input shapes), `layer-inputs` (the layer's inputs in both dumps), "
        "`network-inputs` (the network's inputs of both runs), `weights` (the parameters of both runs), "
        "`repeat` (the baseline run and dumped twice on one input)."
    )


class OutputsSection(Record):
    """The outputs comparison of two runs."""

    baseline: DumpInfo = Field(description="The baseline run's dump.")
    target: DumpInfo = Field(description="The target run's dump.")
    tolerances: dict[str, NonNegative] = Field(description="Relative tolerance by dtype (others: exact).")
    matched: Count = Field(description="Op or API calls matched between the runs.")
    only_baseline: list[str] = Field(description="Layers only the baseline has.")
    only_target: list[str] = Field(description="Layers only the target has.")
    first_divergence: FirstDivergence | None = Field(
        description="Where the outputs first part ways; `null`: nowhere."
    )
    depth: list[LayerPoint] = Field(description="The divergence along depth, one point per matched layer.")
    symptoms: list[SymptomRecord] = Field(description="The outputs symptoms the causes were weighed on.")
    causes: list[Cause] = Field(
        description="Ranked causes of the difference (knowledge/rules/outputs-*.yaml)."
    )
    nothing_found: bool = Field(description="No significant cause: the runs agree, or nothing explains it.")
    unexplained: UnexplainedDivergence | None = Field(
        default=None,
        description="The outputs part ways and no cause is significant: what would decide it; `null` when "
        "they agree or a cause explains it.",
    )
    deterministic_cost: DeterministicCost | None = Field(
        default=None,
        description="With profiles in the same report: the target's time the determinism fix can slow; "
        "`null` without a profile.",
    )
