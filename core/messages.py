# ruff: noqa: E501  (a catalog of sentences: one template per line reads and diffs better than split ones)
"""The wording of every `core.text` message, in English and Simplified Chinese.

Each id maps to one template per language, filled with `str.format` from the values the text was made
with (core/text.py). The English template is what the analyzer or reader wrote before (the golden English
reports pin it byte for byte); the Chinese one says the same with the same numbers. Ids are grouped by
the module that says them. tests/test_zh_reports.py walks the zh reports of the fixture pairs.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # --- words used inside other messages
    "role.baseline": {"en": "baseline", "zh": "基线"},
    "role.target": {"en": "target", "zh": "目标"},
    "role.after": {"en": "after", "zh": "修复后运行"},
    "sep.semicolon": {"en": "; ", "zh": "；"},
    "sep.comma": {"en": ", ", "zh": "，"},
    "sep.and": {"en": " and ", "zh": "和"},
    # --- diagnosis/analyzers/timing.py
    "timing.wall": {"en": "wall time", "zh": "墙钟时间"},
    "timing.operator": {"en": "operator time", "zh": "算子时间"},
    "timing.forward": {"en": "'s forward pass", "zh": "前向"},
    "timing.per_sample": {"en": " per sample", "zh": "，按样本计"},
    "step-time-gap": {
        "en": "The target takes {target_ms} ms of {what} per step against {baseline_ms} ms for the "
        "baseline{forward} ({ratio:.2f}x{per_sample}).",
        "zh": "目标每步耗时 {target_ms} ms（{what}），基线{forward}为 {baseline_ms} ms（{ratio:.2f} 倍{per_sample}）。",
    },
    "uniform-slowdown": {
        "en": "{slower:.0%} of {ops} matched operators are slower by a similar factor (median {median:.2f}x, "
        "spread {spread:.2f} in log2): the whole device or host ran slower.",
        "zh": "{ops} 个已匹配算子中有 {slower:.0%} 以相近的倍数变慢（中位数 {median:.2f} 倍，log2 离散度 "
        "{spread:.2f}）：整个设备或主机都变慢了。",
    },
    "op-slowdown": {
        "en": "{ops} operators are significantly slower on the target, losing {lost:.3f} ms per step; the "
        "largest is {op_type} ({ratio:.2f}x).",
        "zh": "目标上有 {ops} 个算子显著变慢，每步损失 {lost:.3f} ms；最大的是 {op_type}（{ratio:.2f} 倍）。",
    },
    "step-drift": {
        "en": "Step time rises over the run from {first:.2f} ms to {last:.2f} ms (+{change:.0%}); "
        "{kernel_share:.0%} of the rise is operator time, the rest gaps.",
        "zh": "运行过程中每步耗时从 {first:.2f} ms 升至 {last:.2f} ms（+{change:.0%}）；其中 {kernel_share:.0%} "
        "的增长是算子时间，其余是间隙。",
    },
    "step-jitter": {
        "en": "Step times vary: p10 {p10:.2f} ms, p50 {p50:.2f} ms, p90 {p90:.2f} ms (inter-decile range "
        "{spread:.0%} of the median) over {steps} steps.",
        "zh": "每步耗时波动：p10 {p10:.2f} ms，p50 {p50:.2f} ms，p90 {p90:.2f} ms（p10–p90 区间为中位数的 "
        "{spread:.0%}），共 {steps} 步。",
    },
    "first-step-outlier.median": {
        "en": "The first profiled step takes {first:.1f} ms, {ratio:.1f}x the median {median:.2f} ms of the rest.",
        "zh": "第一个采集步耗时 {first:.1f} ms，是其余各步中位数 {median:.2f} ms 的 {ratio:.1f} 倍。",
    },
    "first-step-outlier.expected": {
        "en": "The first profiled step takes {first:.1f} ms, {ratio:.1f}x the {expected:.2f} ms its launches "
        "take in the other steps.",
        "zh": "第一个采集步耗时 {first:.1f} ms，是同样的算子调用在其他步中耗时 {expected:.2f} ms 的 {ratio:.1f} 倍。",
    },
    "timing.device": {"en": "device", "zh": "设备"},
    "timing.executor": {"en": "operator executor", "zh": "算子执行器"},
    "device-idle": {
        "en": "The {where} is busy only {util:.0%} of each step; {free_ms:.2f} ms per step is idle.",
        "zh": "{where}在每步中只有 {util:.0%} 的时间在工作；每步空闲 {free_ms:.2f} ms。",
    },
    "host-bound": {
        "en": "{tiny:.0%} of kernels are shorter than {tiny_us:.0f} µs and the median gap between kernels "
        "({gap:.1f} µs) exceeds the median kernel ({kernel:.1f} µs).",
        "zh": "{tiny:.0%} 的内核短于 {tiny_us:.0f} µs，且内核之间的间隙中位数（{gap:.1f} µs）超过内核耗时中位数"
        "（{kernel:.1f} µs）。",
    },
    "generation-phases": {
        "en": "Generation run: {prefill} prefill step(s) of {prefill_ms:.3f} ms and {decode} decode steps of "
        "{decode_ms:.3f} ms; in decode, kernels fill {busy:.0%} of the step (median kernel {kernel_us:.1f} µs)"
        "{host}",
        "zh": "生成式运行：{prefill} 个 prefill 步，每步 {prefill_ms:.3f} ms；{decode} 个 decode 步，每步 "
        "{decode_ms:.3f} ms；decode 中内核占每步的 {busy:.0%}（内核耗时中位数 {kernel_us:.1f} µs）{host}",
    },
    "generation-phases.host": {"en": "; the host bounds the decode.", "zh": "；decode 受主机限制。"},
    "generation-phases.end": {"en": ".", "zh": "。"},
    # --- diagnosis/analyzers/precision.py
    "precision-change.dtypes": {
        "en": "{ops} of {of} compute operators that run in FP16/BF16 on the baseline run in FP32 on the target "
        "({share:.0%} of its compute time); they lose {lost:.3f} ms per step.",
        "zh": "基线上以 FP16/BF16 运行的 {of} 个计算算子中，有 {ops} 个在目标上以 FP32 运行（占其计算时间的 "
        "{share:.0%}）；每步因此损失 {lost:.3f} ms。",
    },
    "precision.scopes": {"en": ", _OutputTo16 scopes", "zh": "，含 _OutputTo16 作用域"},
    "precision.lose": {
        "en": "; its compute operators lose {lost:.3f} ms per step.",
        "zh": "；其计算算子每步损失 {lost:.3f} ms。",
    },
    "precision.not_slower": {
        "en": "; its compute operators are not slower on this device.",
        "zh": "；在此设备上其计算算子并未变慢。",
    },
    "precision-change.casts": {
        "en": "The baseline runs mixed precision ({b_casts:g} Cast ops per step{scopes}) and the target none "
        "({t_casts:g}): the target computes in FP32{cost}",
        "zh": "基线使用混合精度（每步 {b_casts:g} 个 Cast 算子{scopes}），目标没有（{t_casts:g} 个）："
        "目标以 FP32 计算{cost}",
    },
    "cast-heavy": {
        "en": "Cast kernels take {share:.0%} of the {role}'s operator time ({ms:.3f} ms, {per_step:g} per step "
        "against {compute:g} compute operators).",
        "zh": "Cast 内核占{role}算子时间的 {share:.0%}（{ms:.3f} ms，每步 {per_step:g} 个，计算算子 {compute:g} 个）。",
    },
    # --- diagnosis/analyzers/training.py
    "train-mode-kernels": {
        "en": "The inference run executes {bn} training-mode BatchNorm and {dropout} Dropout operators "
        "({ms:.3f} ms per step): the network was left in training mode.",
        "zh": "推理运行执行了 {bn} 个训练模式的 BatchNorm 和 {dropout} 个 Dropout 算子（每步 {ms:.3f} ms）："
        "网络仍处于训练模式。",
    },
    # --- diagnosis/analyzers/shapes.py
    "shape-mismatch": {
        "en": "{ops} of {of} matched operators see a different data input shape{batch}: compare per sample, "
        "or profile both runs with the same shapes.",
        "zh": "{of} 个已匹配算子中有 {ops} 个的数据输入形状不同{batch}：请按样本比较，或用相同形状采集两次运行。",
    },
    "shape-mismatch.batch": {
        "en": "; batch {b} on the baseline, {t} on the target",
        "zh": "；基线批大小 {b}，目标 {t}",
    },
    "dynamic-shapes": {
        "en": "Input shapes change during the run: {parts}.",
        "zh": "运行中输入形状发生变化：{parts}。",
    },
    "dynamic-shapes.distinct": {
        "en": "an operator sees {n} distinct input shapes",
        "zh": "某个算子出现 {n} 种不同的输入形状",
    },
    "dynamic-shapes.dynamic": {
        "en": "{share:.0%} of kernels are dynamic-shape kernels",
        "zh": "{share:.0%} 的内核是动态形状内核",
    },
    "dynamic-shapes.recompile": {
        "en": "{steps} steps at a new shape stall {ratio:g}x the median or {extra_ms:g} ms longer",
        "zh": "{steps} 个遇到新形状的步停顿，耗时达中位数的 {ratio:g} 倍或多出 {extra_ms:g} ms",
    },
    "small-batch": {
        "en": "The target runs batch {t} against {b} on the baseline{busy}.",
        "zh": "目标批大小为 {t}，基线为 {b}{busy}。",
    },
    "small-batch.busy": {
        "en": "; the device is busy {util:.0%} of the time",
        "zh": "；设备忙碌时间占 {util:.0%}",
    },
    # --- diagnosis/analyzers/config.py
    "execution-mode-mismatch": {
        "en": "The baseline ran in {b} mode and the target in {t} mode.",
        "zh": "基线以 {b} 模式运行，目标以 {t} 模式运行。",
    },
    "profiler-config-diff": {
        "en": "The runs were profiled with different settings ({text}).",
        "zh": "两次运行的采集设置不同（{text}）。",
    },
    "profiler-level-low": {
        "en": "No dtype, format or shape columns in the {runs} run (profiler level {levels}).",
        "zh": "{runs}运行中没有数据类型、格式或形状列（采集级别 {levels}）。",
    },
    "profiler-level-low.many": {
        "en": "No dtype, format or shape columns in the {runs} runs (profiler level {levels}).",
        "zh": "{runs}运行中没有数据类型、格式或形状列（采集级别 {levels}）。",
    },
    # --- diagnosis/analyzers/kernels.py
    "fusion-split": {
        "en": "{groups} kernels fused on the baseline run split on the target: {extra:g} extra kernels per step "
        "({kinds}) take {ms:.3f} ms per step.",
        "zh": "基线上融合的 {groups} 个内核在目标上拆分执行：每步多出 {extra:g} 个内核（{kinds}），每步耗时 {ms:.3f} ms。",
    },
    "fusion-split.bn": {
        "en": "{bn:g} BatchNorm kernels per step run after the convolutions of the {role} instead of being "
        "folded into them: with the activations after them, {extra:g} kernels per step take {ms:.3f} ms per step.",
        "zh": "{role}每步有 {bn:g} 个 BatchNorm 内核在卷积之后单独运行，而没有折叠进卷积：连同其后的激活，"
        "每步 {extra:g} 个内核耗时 {ms:.3f} ms。",
    },
    "format-conversion.share": {
        "en": "Layout conversions take {share:.0%} of the {role}'s kernel time ({per_step:g} per step, {ms:.3f} ms "
        "per step).",
        "zh": "布局转换占{role}内核时间的 {share:.0%}（每步 {per_step:g} 次，每步 {ms:.3f} ms）。",
    },
    "format-conversion.count": {
        "en": "The target runs {t:g} layout conversions per step against {b:g} on the baseline ({share:.0%} of its "
        "kernel time, {ms:.3f} ms per step more).",
        "zh": "目标每步运行 {t:g} 次布局转换，基线为 {b:g} 次（占其内核时间的 {share:.0%}，每步多 {ms:.3f} ms）。",
    },
    "elementwise-heavy": {
        "en": "{share:.0%} of the {role}'s kernels are elementwise and shorter than {short_us:g} µs ({per_step:g} "
        "per step, {ms:.3f} ms per step).",
        "zh": "{role}的内核中有 {share:.0%} 是短于 {short_us:g} µs 的逐元素内核（每步 {per_step:g} 个，每步 {ms:.3f} ms）。",
    },
    "float64-input": {
        "en": "{ops} operators of the {role} read DOUBLE (or INT64 on AI CPU) inputs{casts}, {ms:.3f} ms per step: "
        "the script feeds float64/int64 arrays.",
        "zh": "{role}中有 {ops} 个算子读取 DOUBLE（或 AI CPU 上的 INT64）输入{casts}，每步 {ms:.3f} ms："
        "脚本传入了 float64/int64 数组。",
    },
    "float64-input.casts": {"en": ", {n} of them Casts", "zh": "，其中 {n} 个是 Cast"},
    "sync-heavy": {
        "en": "The host synchronises {count:g} times for {launches} kernel launches ({per_launch:.2f} per launch, "
        "{per_step:g} per step): execution is synchronous.",
        "zh": "主机为 {launches} 次内核下发同步了 {count:g} 次（每次下发 {per_launch:.2f} 次，每步 {per_step:g} 次）："
        "执行是同步的。",
    },
    "kernels.attention": {"en": "attention", "zh": "注意力"},
    "kernels.norm": {"en": "norm", "zh": "归一化"},
    "fused-split": {
        "en": "{fused:g} fused {what} kernels per step on the baseline ({types}, {fused_ms:.3f} ms) run split on "
        "the target: {runs:g} runs of {kernels:g} kernels ({chain}) take {ms:.3f} ms per step ({ratio:.1f}x).",
        "zh": "基线每步 {fused:g} 个融合的{what}内核（{types}，{fused_ms:.3f} ms）在目标上拆分执行：{runs:g} 组、"
        "每组 {kernels:g} 个内核（{chain}）每步耗时 {ms:.3f} ms（{ratio:.1f} 倍）。",
    },
    # --- diagnosis/analyzers/devices.py
    "ai-cpu-ops": {
        "en": "{ops} operators of the {role} run on AI CPU: {share:.0%} of its kernel time ({ms:.3f} ms per step); "
        "{slow} of them take {slow_us:g} µs or more.",
        "zh": "{role}有 {ops} 个算子在 AI CPU 上运行：占其内核时间的 {share:.0%}（每步 {ms:.3f} ms）；其中 {slow} 个"
        "耗时不低于 {slow_us:g} µs。",
    },
    "core-change": {
        "en": "{ops} matched operators run on a different core on the target ({text}); they take {ms:.3f} ms per "
        "step there.",
        "zh": "目标上有 {ops} 个已匹配算子换到了不同的计算单元（{text}）；它们在目标上每步耗时 {ms:.3f} ms。",
    },
    "frequency.trace": {"en": "trace AI Core Freq counter", "zh": "trace 中的 AI Core Freq 计数器"},
    "frequency.smi": {
        "en": "npu-smi curFreq against the rated clock",
        "zh": "npu-smi 的 curFreq 与额定频率对比",
    },
    "frequency-drop": {
        "en": "The AI Core clock of the {role} drops from {max_mhz:g} MHz to {min_mhz:g} MHz ({basis}; {drop:.0%} "
        "below the maximum on average{extra}).",
        "zh": "{role}的 AI Core 频率从 {max_mhz:g} MHz 降到 {min_mhz:g} MHz（{basis}；平均比最高频率低 {drop:.0%}{extra}）。",
    },
    "communication-share": {
        "en": "Collective communication not hidden by computation takes {share:.0%} of each {role} step "
        "({ms:.3f} ms per step).",
        "zh": "未被计算掩盖的集合通信占{role}每步的 {share:.0%}（每步 {ms:.3f} ms）。",
    },
    "memory-growth": {
        "en": "The per-step peak of allocated memory of the {role} grows from {start:.3f} MB to {end:.3f} MB "
        "over {steps} steps (+{relative:.0%}, Kendall tau {tau:.2f}).",
        "zh": "{role}每步已分配内存的峰值在 {steps} 步内从 {start:.3f} MB 增长到 {end:.3f} MB"
        "（+{relative:.0%}，Kendall tau {tau:.2f}）。",
    },
    # --- diagnosis/analyzers/environment.py
    "env.cann_log": {"en": "CANN logs at debug/info level", "zh": "CANN 日志为 debug/info 级别"},
    "env.ms_log": {"en": "MindSpore logs at debug/info level", "zh": "MindSpore 日志为 debug/info 级别"},
    "env.stdout": {"en": "CANN logs are printed to stdout", "zh": "CANN 日志打印到标准输出"},
    "env.blocking": {"en": "every kernel launch is synchronous", "zh": "每次内核下发都是同步的"},
    "env.hccl": {"en": "deterministic collective communication", "zh": "确定性集合通信"},
    "env.deterministic": {"en": "deterministic kernels are selected", "zh": "选择了确定性内核"},
    "env.setting": {"en": "{name}={value}: {why}", "zh": "{name}={value}：{why}"},
    "environment-debug": {
        "en": "The {role}'s environment has debugging settings that slow execution ({why}).",
        "zh": "{role}的环境中有会拖慢执行的调试设置（{why}）。",
    },
    "environment-diff": {
        "en": "The runs' environments differ ({text}).",
        "zh": "两次运行的环境变量不同（{text}）。",
    },
    # --- diagnosis/analyzers/pipeline.py
    "pipeline.getnext": {"en": "GetNext operators", "zh": "GetNext 算子"},
    "pipeline.dataset": {"en": "dataset.csv GetNext", "zh": "dataset.csv 中的 GetNext"},
    "pipeline.queue": {
        "en": "the queue after {op_type} is empty in {empty:.0%} of its samples",
        "zh": "{op_type} 之后的队列在 {empty:.0%} 的采样中为空",
    },
    "pipeline.wait": {
        "en": "the device waits {ms:.3f} ms per step for the next batch ({share:.0%}, {source})",
        "zh": "设备每步等待下一批数据 {ms:.3f} ms（{share:.0%}，{source}）",
    },
    "data-pipeline-wait": {
        "en": "The {role} waits for input data: {parts}.",
        "zh": "{role}在等待输入数据：{parts}。",
    },
    "random-augmentation": {
        "en": "The {role}'s data pipeline applies random augmentation: {ops}.",
        "zh": "{role}的数据管道使用了随机数据增强：{ops}。",
    },
    "op-set-mismatch": {
        "en": "Only {sb:.0%} of the baseline's and {st:.0%} of the target's operator time could be matched: the "
        "two runs execute different work.",
        "zh": "只有基线 {sb:.0%}、目标 {st:.0%} 的算子时间能够匹配：两次运行执行的是不同的工作。",
    },
    # --- diagnosis/compare.py (notes on how the runs were compared)
    "note.matched": {
        "en": "Matched {baseline:.0%} of the baseline's and {target:.0%} of the target's per-step operator time (method: {method}).",
        "zh": "已匹配基线每步算子时间的 {baseline:.0%} 和目标的 {target:.0%}（方法：{method}）。",
    },
    "note.no-scopes": {
        "en": "A PyNative run has no operator scopes: operators were aligned by type, shape and order, so the per-operator comparison is approximate.",
        "zh": "PyNative 运行没有算子作用域：算子按类型、形状和顺序对齐，因此逐算子的比较是近似的。",
    },
    "note.forward-only": {
        "en": "Only the training run's forward pass is compared (backward and optimizer dropped).",
        "zh": "只比较训练运行的前向部分（已去掉反向和优化器）。",
    },
    "note.batch": {
        "en": "Batch sizes differ (baseline {baseline}, target {target}): times are also compared per sample.",
        "zh": "批大小不同（基线 {baseline}，目标 {target}）：耗时也按样本进行比较。",
    },
    "note.schedules": {
        "en": "The runs were profiled with different schedules (baseline {a}, target {b}): their windows cover different steps ({a_steps} and {b_steps} profiled); per-step times are compared.",
        "zh": "两次运行使用了不同的采集 schedule（基线 {a}，目标 {b}）：采集窗口覆盖的步不同（分别采集了 {a_steps} 和 {b_steps} 步）；比较的是每步耗时。",
    },
    # --- remedies shared by the readers
    "remedy.read-scripts": {
        "en": "compare configurations by reading both profiling scripts",
        "zh": "阅读两份采集脚本来比较配置",
    },
    "remedy.mindir-or-level1": {
        "en": "export the model to MINDIR and add it, or profile on Ascend at Level1",
        "zh": "将模型导出为 MINDIR 并一起上传，或在 Ascend 上以 Level1 采集",
    },
    "remedy.ascend": {"en": "profile on Ascend", "zh": "在 Ascend 上采集"},
    "remedy.npu-smi": {"en": "run `npu-smi info` on the device", "zh": "在设备上运行 `npu-smi info`"},
    "remedy.schedule": {
        "en": "profile with a schedule and one net call per step",
        "zh": "使用 schedule 采集，并且每步调用一次网络",
    },
    # --- diagnosis/readers/cpu.py
    "cpu.no-config": {
        "en": "MindSpore CPU profiling records no profiler configuration (no profiler_info json)",
        "zh": "MindSpore CPU 采集不记录采集配置（没有 profiler_info json）",
    },
    "cpu.no-dtypes": {
        "en": "CPU profiles have no dtype or format columns; precision is judged from Cast ops and AMP scopes",
        "zh": "CPU 性能数据没有数据类型和格式列；精度根据 Cast 算子和 AMP 作用域判断",
    },
    "cpu.no-cores": {
        "en": "CPU runs have no accelerator cores (AI Core / AI CPU)",
        "zh": "CPU 运行没有加速器计算单元（AI Core / AI CPU）",
    },
    "cpu.no-frequency": {
        "en": "no device clock or frequency counters on CPU",
        "zh": "CPU 上没有设备时钟或频率计数器",
    },
    "cpu.no-steps": {
        "en": "CPU profiles record no step boundaries; steps were derived from operator launches and are approximate (operators run a varying number of times per step)",
        "zh": "CPU 性能数据不记录步边界；步是根据算子调用推断的，只是近似值（每步中算子的运行次数不固定）",
    },
}
