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
        "baseline{forward} ({what} {ratio:.2f}x{per_sample}).",
        "zh": "目标每步耗时 {target_ms} ms（{what}），基线{forward}为 {baseline_ms} ms（{what} {ratio:.2f} 倍{per_sample}）。",
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
    "kernels.activation": {"en": "activation (GeLU / SiLU)", "zh": "激活（GeLU / SiLU）"},
    "kernels.rotary": {"en": "rotary embedding", "zh": "旋转位置编码"},
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
    "frequency.smi": {
        "en": "npu-smi curFreq against the rated clock",
        "zh": "npu-smi 的 curFreq 与额定频率对比",
    },
    "frequency-drop": {
        "en": "The AI Core clock of the {role} drops from {max_mhz:g} MHz to {min_mhz:g} MHz ({basis}; {drop:.0%} "
        "below the maximum on average{extra}).",
        "zh": "{role}的 AI Core 频率从 {max_mhz:g} MHz 降到 {min_mhz:g} MHz（{basis}；平均比最高频率低 {drop:.0%}{extra}）。",
    },
    "frequency-drop.kernels": {
        "en": "The AI Core clock of the {role} falls from {max_mhz:g} MHz to {min_mhz:g} MHz while kernels run: "
        "{kernels} kernels ran below full clock for {ms:.3f} ms ({share:.0%} of the AI Core busy time); the clock "
        "during kernels is {drop:.0%} below the maximum on average{extra}.",
        "zh": "{role}的 AI Core 频率在内核运行期间从 {max_mhz:g} MHz 降到 {min_mhz:g} MHz：{kernels} 个内核在低于满频时运行了 "
        "{ms:.3f} ms（占 AI Core 忙碌时间的 {share:.0%}）；内核运行期间的平均频率比最高频率低 {drop:.0%}{extra}。",
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
    "note.op-state": {
        "en": "OP State dynamic: {baseline} of the baseline's and {target} of the target's kernels. This says how the kernels were compiled (every aclnn kernel is dynamic), not that input shapes change; changing shapes show as distinct input shapes per operator or as recompiles.",
        "zh": "OP State 为 dynamic 的内核：基线 {baseline}，目标 {target}。这说明内核的编译方式（aclnn 内核都是 dynamic），并不表示输入形状在变化；形状变化体现为同一算子出现多种输入形状或重新编译。",
    },
    "note.op-state.unknown": {"en": "unknown (not recorded)", "zh": "未知（未记录）"},
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
    "remedy.level1-with-mindir": {
        "en": "profile on Ascend at Level1 (the MINDIR given records the model's dtypes, not each run's kernels)",
        "zh": "在 Ascend 上以 Level1 采集（所提供的 MINDIR 记录的是模型的数据类型，而不是每次运行的内核）",
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
    "note.single": {
        "en": "Only one profile was given (as the {role}): it is diagnosed on its own as the inference run; causes that need a comparison with a fast run cannot be judged.",
        "zh": "只提供了一份性能数据（作为{role}）：它被单独当作推理运行诊断；需要与快的运行对比才能判断的原因无法判断。",
    },
    # --- diagnosis/readers/ascend.py (MindSpore Ascend), torch_npu.py, cann_msprof.py
    "ms.level1": {
        "en": "re-profile both runs with _ExperimentalConfig(profiler_level=ProfilerLevel.Level1)",
        "zh": "用 _ExperimentalConfig(profiler_level=ProfilerLevel.Level1) 重新采集两次运行",
    },
    "ms.aic-metrics": {
        "en": "re-profile with _ExperimentalConfig(profiler_level=ProfilerLevel.Level1, aic_metrics=AicoreMetrics.PipeUtilization)",
        "zh": "用 _ExperimentalConfig(profiler_level=ProfilerLevel.Level1, aic_metrics=AicoreMetrics.PipeUtilization) 重新采集",
    },
    "remedy.op-state": {
        "en": "profile with CANN 8.x or newer, whose kernel tables carry OP State",
        "zh": "使用 CANN 8.x 或更新版本采集，其内核表带有 OP State 列",
    },
    "ms.scopes": {
        "en": "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.NPU] so kernel names carry their framework op",
        "zh": "用 activities=[ProfilerActivity.CPU, ProfilerActivity.NPU] 采集，使内核名带有其框架算子",
    },
    "ms.steps": {
        "en": "profile with schedule=schedule(wait=1, warmup=1, active=5) and call prof.step() once per step",
        "zh": "用 schedule=schedule(wait=1, warmup=1, active=5) 采集，并在每步调用一次 prof.step()",
    },
    "ms.config": {
        "en": "upload the whole <host>_<pid>_<ts>_ascend_ms folder: profiler_info_<rank>.json sits beside ASCEND_PROFILER_OUTPUT",
        "zh": "上传整个 <host>_<pid>_<ts>_ascend_ms 文件夹：profiler_info_<rank>.json 位于 ASCEND_PROFILER_OUTPUT 旁边",
    },
    "torch.level1": {
        "en": "re-profile both runs with torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1)",
        "zh": "用 torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1) 重新采集两次运行",
    },
    "torch.aic-metrics": {
        "en": "re-profile with torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1, aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization)",
        "zh": "用 torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1, aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization) 重新采集",
    },
    "torch.scopes": {
        "en": "compare by kernel type and input shapes instead of framework scopes",
        "zh": "按内核类型和输入形状比较，而不是按框架作用域",
    },
    "torch.steps": {
        "en": "profile with schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=5) and call prof.step() once per step",
        "zh": "用 schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=5) 采集，并在每步调用一次 prof.step()",
    },
    "torch.config": {
        "en": "upload the whole *_ascend_pt folder: profiler_info.json sits beside ASCEND_PROFILER_OUTPUT",
        "zh": "上传整个 *_ascend_pt 文件夹：profiler_info.json 位于 ASCEND_PROFILER_OUTPUT 旁边",
    },
    "cann.level1": {
        "en": "re-profile with msprof at task-time level l1 (`msprof --task-time=l1 ...`), which writes shapes, dtypes and formats into op_summary",
        "zh": "用 msprof 的 task-time l1 级别重新采集（`msprof --task-time=l1 ...`），它会把形状、数据类型和格式写入 op_summary",
    },
    "cann.aic-metrics": {
        "en": "re-profile with `msprof --aic-metrics=PipeUtilization ...`",
        "zh": "用 `msprof --aic-metrics=PipeUtilization ...` 重新采集",
    },
    "cann.op-state": {
        "en": "profile with CANN 8.x or newer, whose op_summary carries OP State",
        "zh": "使用 CANN 8.x 或更新版本采集，其 op_summary 带有 OP State 列",
    },
    "cann.scopes": {
        "en": "msprof kernel names carry no framework scopes; add the MINDIR for model-level checks",
        "zh": "msprof 的内核名不带框架作用域；请添加 MINDIR 以进行模型级检查",
    },
    "cann.steps": {
        "en": "profile with step markers (`msprof --training-trace=on` for training, or one model execution per step) so step_trace_*.csv is written",
        "zh": "带步标记采集（训练用 `msprof --training-trace=on`，或每步执行一次模型），以便写出 step_trace_*.csv",
    },
    "cann.config": {
        "en": "upload the whole PROF_* folder: device_<id>/sample.json records the collection settings",
        "zh": "上传整个 PROF_* 文件夹：device_<id>/sample.json 记录了采集设置",
    },
    "ascend.no-config": {
        "en": "no profiler_info json in the run folder: the profiler configuration (level, aic_metrics, schedule, activities) is unknown, so configuration differences cannot be checked",
        "zh": "运行文件夹中没有 profiler_info json：采集配置（level、aic_metrics、schedule、activities）未知，无法检查配置差异",
    },
    "ascend.no-steps": {
        "en": "no step information (no step_trace_time.csv, no ProfilerStep# events, no Step ID column): totals cover the whole profiled window",
        "zh": "没有步信息（没有 step_trace_time.csv、没有 ProfilerStep# 事件、没有 Step ID 列）：合计值覆盖整个采集窗口",
    },
    "ascend.no-op-state": {
        "en": "no OP State column (older CANN): whether kernels ran static or dynamic shape is unknown; it is not assumed dynamic",
        "zh": "没有 OP State 列（较旧的 CANN）：不知道内核以静态还是动态形状运行；不假定为动态",
    },
    "ascend.no-counters": {
        "en": "no AI Core pipe-utilisation counters (aic_metrics other than PipeUtilization, or Level0): bound analysis is not possible",
        "zh": "没有 AI Core 流水线利用率计数器（aic_metrics 不是 PipeUtilization，或为 Level0）：无法进行瓶颈分析",
    },
    "ascend.torch-no-scopes": {
        "en": "torch_npu kernel names carry no MindSpore scopes",
        "zh": "torch_npu 的内核名不带 MindSpore 作用域",
    },
    "ascend.no-scopes": {
        "en": "kernel names carry no framework launch op: no scope-level alignment with a MINDIR",
        "zh": "内核名不带框架下发算子：无法与 MINDIR 做作用域级对齐",
    },
    "ascend.no-kernel-details": {
        "en": "no {table}: kernels come from trace_view.json, which has no {header}",
        "zh": "没有 {table}：内核来自 trace_view.json，其中没有 `{header}`",
    },
    "ascend.recorded": {"en": "recorded", "zh": "已记录"},
    "ascend.inferred": {"en": "inferred from the missing columns", "zh": "根据缺失的列推断"},
    "ascend.level0": {
        "en": "no {header} column in {table}: profiled at Level0 ({how})",
        "zh": "{table} 中没有 `{header}` 列：以 Level0 采集（{how}）",
    },
    "ascend.column-missing": {
        "en": "no {header} column in {table} although profiler_level is {level}",
        "zh": "虽然 profiler_level 为 {level}，{table} 中仍没有 `{header}` 列",
    },
    # --- diagnosis/readers/legacy_cpu.py (CPU and GPU host-op profiles)
    "host.no-dtypes": {
        "en": "CPU and GPU profiles record no dtypes: precision is judged from Cast ops and AMP scopes",
        "zh": "CPU 和 GPU 性能数据不记录数据类型：精度根据 Cast 算子和 AMP 作用域判断",
    },
    "remedy.mindir": {"en": "export the model to MINDIR and add it", "zh": "将模型导出为 MINDIR 并一起上传"},
    "host.no-formats": {
        "en": "CPU and GPU profiles record no tensor formats",
        "zh": "CPU 和 GPU 性能数据不记录张量格式",
    },
    "host.no-op-state": {
        "en": "no static/dynamic shape per kernel in these profiles; not assumed dynamic",
        "zh": "这些性能数据没有记录每个内核是静态还是动态形状；不假定为动态",
    },
    "host.no-counters": {
        "en": "no AI Core pipeline counters outside Ascend",
        "zh": "Ascend 之外没有 AI Core 流水线计数器",
    },
    "host.no-steps": {
        "en": "no step boundaries recorded: steps were derived from operator launches and are approximate",
        "zh": "未记录步边界：步是根据算子调用推断的，只是近似值",
    },
    "remedy.one-call": {"en": "profile one net call per step", "zh": "采集时每步调用一次网络"},
    # --- diagnosis/readers/ascend_legacy.py
    "legacy.remedy": {
        "en": "profile with MindSpore 2.5+ (mindspore.profiler.profile), which records its configuration",
        "zh": "使用 MindSpore 2.5+（mindspore.profiler.profile）采集，它会记录采集配置",
    },
    "legacy.no-steps": {
        "en": "no step_trace_raw file: no step boundaries",
        "zh": "没有 step_trace_raw 文件：没有步边界",
    },
    "legacy.no-timeline": {
        "en": "no output_timeline_data file: each operator's launches carry its average duration and no start time (from aicore_intermediate detail)",
        "zh": "没有 output_timeline_data 文件：每个算子的调用只有平均耗时、没有开始时间（来自 aicore_intermediate detail）",
    },
    "legacy.include-timeline": {
        "en": "include output_timeline_data_<rank>.txt in the upload",
        "zh": "上传时包含 output_timeline_data_<rank>.txt",
    },
    "legacy.no-info": {
        "en": "no profiler_info json: configuration unknown",
        "zh": "没有 profiler_info json：配置未知",
    },
    "legacy.no-options": {
        "en": "{name} of MindSpore 2.0-2.2 records no profiler options",
        "zh": "MindSpore 2.0-2.2 的 {name} 不记录采集选项",
    },
    "legacy.no-topic": {
        "en": "no {topic} recorded: framework_raw op_info is missing or empty",
        "zh": "未记录 {topic}：framework_raw 的 op_info 缺失或为空",
    },
    "legacy.include-framework-raw": {
        "en": "include framework_raw_<rank>.csv in the upload",
        "zh": "上传时包含 framework_raw_<rank>.csv",
    },
    "legacy.no-op-state": {
        "en": "legacy profiles do not record static/dynamic shape per kernel; not assumed dynamic",
        "zh": "旧版性能数据不记录每个内核是静态还是动态形状；不假定为动态",
    },
    "legacy.no-counters": {
        "en": "legacy profiles carry no AI Core pipeline counters",
        "zh": "旧版性能数据没有 AI Core 流水线计数器",
    },
    # --- diagnosis/compare.py (why an operator is on one side only)
    "reason.fused-baseline": {
        "en": "fused kernel on the baseline; split on the target",
        "zh": "基线上为融合内核；目标上拆分执行",
    },
    "reason.fused-target": {
        "en": "fused kernel on the target; split on the baseline",
        "zh": "目标上为融合内核；基线上拆分执行",
    },
    "reason.training-only": {
        "en": "training-only (dropout / batch statistics)",
        "zh": "仅训练使用（dropout / 批统计）",
    },
    "reason.training-mode": {"en": "training-mode kernel in the target", "zh": "目标中的训练模式内核"},
    "reason.extra-target": {
        "en": "extra work on the target (cast / layout / copy)",
        "zh": "目标上的额外工作（类型转换 / 布局 / 拷贝）",
    },
    "reason.extra-baseline": {
        "en": "extra work on the baseline (cast / layout / copy)",
        "zh": "基线上的额外工作（类型转换 / 布局 / 拷贝）",
    },
    "reason.no-counterpart": {"en": "no counterpart on the other side", "zh": "另一侧没有对应算子"},
    # --- graph/hygiene.py and graph/profile_join.py (the MINDIR and its join with a profile)
    "mindir.training-bn": {
        "en": "{n} of {of} BatchNorm with is_training=True",
        "zh": "{of} 个 BatchNorm 中有 {n} 个 is_training=True",
    },
    "mindir.dropout": {"en": "{n} Dropout op(s)", "zh": "{n} 个 Dropout 算子"},
    "mindir.effect-bn": {
        "en": "batch statistics are computed and Conv+BN cannot be folded",
        "zh": "会计算批统计量，且 Conv+BN 无法折叠",
    },
    "mindir.effect-dropout": {"en": "Dropout runs", "zh": "Dropout 会执行"},
    "mindir-train-mode": {
        "en": "Exported in training mode: {parts}; {effect} (call net.set_train(False) before export)",
        "zh": "以训练模式导出：{parts}；{effect}（导出前调用 net.set_train(False)）",
    },
    "mindir.low-params": {"en": "fp16/bf16 parameters", "zh": "fp16/bf16 参数"},
    "mindir-low-precision": {
        "en": "Low-precision graph ({dtypes}): {low} of {of} Conv/MatMul ops output fp16/bf16, {casts} casts to fp16/bf16, {params} fp16/bf16 parameters",
        "zh": "低精度计算图（{dtypes}）：{of} 个 Conv/MatMul 算子中有 {low} 个输出 fp16/bf16，{casts} 个 Cast 转为 fp16/bf16，{params} 个 fp16/bf16 参数",
    },
    "mindir-fp32-compute": {
        "en": "FP32 graph: all {n} Conv/MatMul ops output float32 and no op casts to fp16/bf16 (exported without AMP)",
        "zh": "FP32 计算图：全部 {n} 个 Conv/MatMul 算子都输出 float32，且没有算子转换为 fp16/bf16（导出时未使用 AMP）",
    },
    "mindir-dynamic-input": {
        "en": "Dynamic input shape: {names} (-1 = dynamic); dynamic-shape kernels are usually slower",
        "zh": "动态输入形状：{names}（-1 表示动态）；动态形状内核通常更慢",
    },
    "mindir-float64-input": {
        "en": "float64 graph input(s): {names}; feed float32 (ms.Tensor(arr.astype(np.float32)))",
        "zh": "float64 类型的计算图输入：{names}；请传入 float32（ms.Tensor(arr.astype(np.float32))）",
    },
    "mindir-cast-ops": {
        "en": "{casts} Cast ops for {compute} Conv/MatMul ops ({ratio:.1f} per op; to {targets})",
        "zh": "{compute} 个 Conv/MatMul 算子对应 {casts} 个 Cast 算子（每个 {ratio:.1f} 个；目标类型 {targets}）",
    },
    "mindir-aicpu-risk": {
        "en": "{n} op(s) at risk of falling back to the AI CPU on Ascend for their dtypes ({documented} documented, {heuristic} heuristic): {ops}",
        "zh": "{n} 个算子因其数据类型在 Ascend 上可能回退到 AI CPU（{documented} 个有文档记载，{heuristic} 个为经验判断）：{ops}",
    },
    "mindir-fusible-chains": {
        "en": "{n} fusion chains ({listed}); {fusible} fusible, {blocked} blocked",
        "zh": "{n} 条融合链（{listed}）；{fusible} 条可融合，{blocked} 条受阻",
    },
    "mindir-decomposed": {
        "en": "{n} decomposed pattern(s) ({listed}) that {fused} each replaces: {ops}",
        "zh": "{n} 个被拆开的模式（{listed}），每个都可由 {fused} 替代：{ops}",
    },
    "mindir-profile-split": {
        "en": "{split} of {of} fusion chains ran as separate kernels: their BN/activation/add kernels cost {separate_ms:.3f} ms per step, {recoverable_ms:.3f} ms of it in fusible chains{cpu}{approximate}",
        "zh": "{of} 条融合链中有 {split} 条以单独内核运行：其 BN/激活/加法内核每步耗时 {separate_ms:.3f} ms，其中 {recoverable_ms:.3f} ms 属于可融合的链{cpu}{approximate}",
    },
    "mindir.cpu-never-fuses": {
        "en": "; the CPU backend never fuses Conv+BN, so this is recoverable only on Ascend/GPU",
        "zh": "；CPU 后端从不融合 Conv+BN，因此只有在 Ascend/GPU 上才能节省",
    },
    "mindir.approximate": {
        "en": "; joined by op type and launch order (no scopes in this profile): approximate",
        "zh": "；按算子类型和下发顺序关联（此性能数据没有作用域）：结果为近似值",
    },
    "model.not-this-profile": {
        "en": "The MINDIR {name} does not match the profiles: only {share:.0%} matched ({how}). It is shown, but its findings and the chain-to-kernel cross-link are not used as evidence about these runs; add the MINDIR exported from the profiled model.",
        "zh": "MINDIR {name} 与性能数据不匹配：只有 {share:.0%} 能够对应（{how}）。它仍会显示，但其发现以及融合链与内核的关联不作为这些运行的证据；请提供由被采集模型导出的 MINDIR。",
    },
    "model.match-scope": {
        "en": "cell scopes of the model against the profiled kernels' scopes",
        "zh": "模型的 cell 作用域与所采集内核的作用域对比",
    },
    "model.match-op-count": {
        "en": "Conv/MatMul operators of the model against those the profile runs per step; the profile has no scopes",
        "zh": "模型中的 Conv/MatMul 算子数与性能数据每步运行的数量对比；性能数据没有作用域",
    },
    # --- input errors (diagnosis/sources.py, ingest.py, readers/catalog.py): problem and what was expected
    "error.known-layouts": {
        "en": "a MindSpore profiler output of a known layout: {layouts}",
        "zh": "已知布局的 MindSpore 性能数据输出：{layouts}",
    },
    # What each layout of diagnosis.readers.catalog.LAYOUTS looks like (`Layout.message`), listed by
    # error.known-layouts.
    "layout.ascend-ms-2.3": {
        "en": "profiler/ with rank-*_ascend_ms/ (Ascend, MindSpore 2.3-2.4)",
        "zh": "带 rank-*_ascend_ms/ 的 profiler/（Ascend，MindSpore 2.3-2.4）",
    },
    "layout.legacy-ascend": {
        "en": "a flat profiler/ folder with aicore_intermediate_* or output_timeline_data_* (Ascend, MindSpore 1.x-2.2)",
        "zh": "带 aicore_intermediate_* 或 output_timeline_data_* 的扁平 profiler/ 文件夹（Ascend，MindSpore 1.x-2.2）",
    },
    "layout.legacy-steps": {
        "en": "a flat profiler/ folder with step_trace_raw_*_detail_time.csv alone (MindSpore 1.x: steps and communication only)",
        "zh": "只有 step_trace_raw_*_detail_time.csv 的扁平 profiler/ 文件夹（MindSpore 1.x：只读取步与通信）",
    },
    "layout.torch-npu": {
        "en": "a torch_npu *_ascend_pt/ folder",
        "zh": "torch_npu 的 *_ascend_pt/ 文件夹",
    },
    "layout.torch-npu-db": {
        "en": "torch_npu's *_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<rank>.db with analysis.db (SQLite export)",
        "zh": "torch_npu 的 *_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<rank>.db 及 analysis.db（SQLite 导出）",
    },
    "layout.ascend-ms": {
        "en": "*_ascend_ms/ with ASCEND_PROFILER_OUTPUT/ (Ascend, MindSpore 2.5+)",
        "zh": "带 ASCEND_PROFILER_OUTPUT/ 的 *_ascend_ms/（Ascend，MindSpore 2.5+）",
    },
    "layout.cpu-ms": {
        "en": "*_ascend_ms/FRAMEWORK/cpu_* (CPU, MindSpore 2.5+)",
        "zh": "*_ascend_ms/FRAMEWORK/cpu_*（CPU，MindSpore 2.5+）",
    },
    "layout.legacy-gpu": {
        "en": "a flat profiler/ folder with gpu_op_detail_info_* (GPU, MindSpore 2.0-2.4)",
        "zh": "带 gpu_op_detail_info_* 的扁平 profiler/ 文件夹（GPU，MindSpore 2.0-2.4）",
    },
    "layout.legacy-cpu": {
        "en": "a flat profiler/ folder with cpu_op_detail_info_* (CPU, MindSpore 2.0-2.4)",
        "zh": "带 cpu_op_detail_info_* 的扁平 profiler/ 文件夹（CPU，MindSpore 2.0-2.4）",
    },
    "layout.cann-msprof": {
        "en": "a CANN msprof PROF_*/ folder with mindstudio_profiler_output/op_summary_*.csv (msprof, ACL, MindSpore Lite)",
        "zh": "带 mindstudio_profiler_output/op_summary_*.csv 的 CANN msprof PROF_*/ 文件夹（msprof、ACL、MindSpore Lite）",
    },
    "layout.cann-msprof-timeline": {
        "en": "a CANN msprof PROF_*/ folder with device_<id>/timeline/msprof_<device>_<model>_<iteration>.json (older msprof)",
        "zh": "带 device_<id>/timeline/msprof_<device>_<model>_<iteration>.json 的 CANN msprof PROF_*/ 文件夹（较早的 msprof）",
    },
    "layout.ascend-ms-db": {
        "en": "ascend_mindspore_profiler[_<rank>].db (MindSpore 2.5+ SQLite export)",
        "zh": "ascend_mindspore_profiler[_<rank>].db（MindSpore 2.5+ SQLite 导出）",
    },
    "layout.cann-msprof-db": {
        "en": "msprof_*.db (CANN msprof SQLite export)",
        "zh": "msprof_*.db（CANN msprof SQLite 导出）",
    },
    "error.accepted": {
        "en": "a profiler output folder, a .zip, .tar or .tar.gz archive of it, or the files of that folder",
        "zh": "性能数据输出文件夹、它的 .zip、.tar 或 .tar.gz 压缩包，或该文件夹中的文件",
    },
    "error.nothing": {"en": "nothing was given", "zh": "没有提供任何输入"},
    "error.not-found": {"en": "was not found", "zh": "未找到"},
    "error.no-known-file": {
        "en": "none of the {n} files is a known profiler file (found {found})",
        "zh": "{n} 个文件中没有已知的性能数据文件（找到 {found}）",
    },
    "error.folder-files": {
        "en": "the files of a profiler output folder (e.g. kernel_details.csv, trace_view.json, cpu_op_detail_info_0.csv) or a .zip/.tar.gz archive of the folder",
        "zh": "性能数据输出文件夹中的文件（例如 kernel_details.csv、trace_view.json、cpu_op_detail_info_0.csv），或该文件夹的 .zip/.tar.gz 压缩包",
    },
    "error.no-output": {"en": "no profiler output found", "zh": "没有找到性能数据输出"},
    "error.several": {
        "en": "several different profiler outputs found: {names}",
        "zh": "找到多个不同的性能数据输出：{names}",
    },
    "error.one-run": {
        "en": "one run (or the ranks of one run) per input",
        "zh": "每个输入一次运行（或同一次运行的各卡）",
    },
    "error.no-rank": {"en": "rank {rank} does not exist", "zh": "卡号 {rank} 不存在"},
    "error.ranks": {"en": "one of the ranks {ranks}", "zh": "卡号 {ranks} 之一"},
    "error.not-profiler": {
        "en": "this is not profiler output (found: {found})",
        "zh": "这不是性能数据输出（找到：{found}）",
    },
    # --- diagnosis/archives.py (refused archives and members)
    "archive.expected": {
        "en": "a .zip, .tar or .tar.gz archive of a profiler output folder",
        "zh": "性能数据输出文件夹的 .zip、.tar 或 .tar.gz 压缩包",
    },
    "archive.pack-hint": {
        "en": "a smaller archive: `perf-doctor pack RUN_FOLDER` keeps only the files Perf Doctor reads",
        "zh": "更小的压缩包：`perf-doctor pack RUN_FOLDER` 只保留 Perf Doctor 读取的文件",
    },
    "archive.pack-override": {
        "en": "{pack} (the operator can raise {variable})",
        "zh": "{pack}（运维人员可以调高 {variable}）",
    },
    "archive.smaller-override": {
        "en": "a smaller upload (the operator can raise {variable})",
        "zh": "更小的上传（运维人员可以调高 {variable}）",
    },
    "archive.members-over": {
        "en": "holds more than {limit} files and folders (stopped at {label!r})",
        "zh": "包含超过 {limit} 个文件和文件夹（停在 {label!r}）",
    },
    "archive.damaged": {
        "en": "member {label!r} is damaged ({error})",
        "zh": "成员 {label!r} 已损坏（{error}）",
    },
    "archive.cannot-write": {"en": "cannot write {label!r} ({why})", "zh": "无法写入 {label!r}（{why}）"},
    "archive.total-over": {
        "en": "unpacking {label!r} goes over the limit of {size} in total (stopped while streaming)",
        "zh": "解压 {label!r} 时超出总计 {size} 的上限（在流式解压时停止）",
    },
    "archive.file-over": {
        "en": "member {label!r} unpacks to more than {size}, the limit for one profile file ({how})",
        "zh": "成员 {label!r} 解压后超过 {size}，即单个性能数据文件的上限（{how}）",
    },
    "archive.how-streaming": {"en": "stopped while streaming", "zh": "在流式解压时停止"},
    "archive.how-header": {"en": "as its header says", "zh": "据其头部声明"},
    "archive.rows-over": {
        "en": "member {label!r} has more than {rows:,} rows, the limit for one profile table (stopped while streaming)",
        "zh": "成员 {label!r} 超过 {rows:,} 行，即单个性能数据表的上限（在流式解压时停止）",
    },
    "archive.ratio-over": {
        "en": "member {label!r} expands more than {ratio:g}:1 (looks like a decompression bomb; stopped while streaming)",
        "zh": "成员 {label!r} 的解压比超过 {ratio:g}:1（像是解压炸弹；在流式解压时停止）",
    },
    "archive.member": {"en": "member {label!r} {problem}", "zh": "成员 {label!r} {problem}"},
    "archive.nul": {"en": "has a NUL character in its name", "zh": "的名称中含有 NUL 字符"},
    "archive.ordinary-names": {"en": "ordinary file names", "zh": "普通文件名"},
    "archive.absolute": {"en": "has an absolute path", "zh": "是绝对路径"},
    "archive.relative-paths": {"en": "paths relative to the archive", "zh": "相对于压缩包的路径"},
    "archive.drive": {"en": "starts with a drive letter", "zh": "以盘符开头"},
    "archive.dotdot": {"en": "points outside the archive ('..')", "zh": "指向压缩包之外（'..'）"},
    "archive.no-dotdot": {"en": "paths without '..'", "zh": "不含 '..' 的路径"},
    "archive.deep": {"en": "is nested {levels} levels deep", "zh": "嵌套了 {levels} 层"},
    "archive.long-name": {"en": "has a name part longer than 255 bytes", "zh": "的某段名称超过 255 字节"},
    "archive.file-and-folder": {"en": "is both a file and a folder", "zh": "既是文件又是文件夹"},
    "archive.distinct-names": {"en": "distinct member names", "zh": "互不相同的成员名"},
    "archive.cannot-create": {"en": "cannot be created ({why})", "zh": "无法创建（{why}）"},
    "archive.empty-name": {"en": "has an empty name", "zh": "的名称为空"},
    "archive.a-file-name": {"en": "a file name", "zh": "一个文件名"},
    "archive.twice": {"en": "appears more than once", "zh": "出现了不止一次"},
    "archive.each-once": {"en": "each member once", "zh": "每个成员只出现一次"},
    "archive.resolves-outside": {
        "en": "resolves outside the extraction folder",
        "zh": "解析到解压文件夹之外",
    },
    "archive.inside-paths": {"en": "paths inside the archive", "zh": "压缩包内的路径"},
    "archive.unsupported": {"en": "is compressed in an unsupported format", "zh": "使用了不支持的压缩格式"},
    "archive.not-claimed": {
        "en": "is not a {claimed} archive (its first bytes are not a {claimed} signature)",
        "zh": "不是 {claimed} 压缩包（开头字节不是 {claimed} 签名）",
    },
    "archive.cannot-read": {"en": "cannot be read ({why})", "zh": "无法读取（{why}）"},
    "archive.no-files": {"en": "holds no files", "zh": "不包含任何文件"},
    "archive.bad-utf8-names": {
        "en": "has member names flagged as UTF-8 that are not UTF-8",
        "zh": "有标记为 UTF-8 但实际不是 UTF-8 的成员名",
    },
    "archive.bad-zip": {
        "en": "is not a readable zip archive ({error})",
        "zh": "不是可读取的 zip 压缩包（{error}）",
    },
    "archive.members-way-over": {
        "en": "holds {n} members, over {times} times the limit of {limit}",
        "zh": "包含 {n} 个成员，超过上限 {limit} 的 {times} 倍",
    },
    "archive.members-count-over": {
        "en": "holds {n} members, over the limit of {limit}",
        "zh": "包含 {n} 个成员，超过上限 {limit}",
    },
    "archive.members-over-skipped": {
        "en": "holds {n} members, over the limit of {limit} (besides {skipped} raw-data members, which are skipped)",
        "zh": "包含 {n} 个成员，超过上限 {limit}（另有 {skipped} 个原始数据成员已跳过）",
    },
    "archive.symlink": {"en": "is a symbolic link", "zh": "是符号链接"},
    "archive.hard-link": {"en": "is a hard link", "zh": "是硬链接"},
    "archive.device": {"en": "is a device or special file", "zh": "是设备文件或特殊文件"},
    "archive.regular-only": {"en": "only regular files and folders", "zh": "只含普通文件和文件夹"},
    "archive.encrypted": {"en": "is encrypted", "zh": "已加密"},
    "archive.no-password": {"en": "an archive without a password", "zh": "没有密码的压缩包"},
    "archive.method": {"en": "uses compression method {method}", "zh": "使用了压缩方法 {method}"},
    "archive.stored-deflated": {
        "en": "stored or deflated members",
        "zh": "存储（stored）或 deflate 压缩的成员",
    },
    "archive.member-unreadable": {"en": "cannot be read ({error})", "zh": "无法读取（{error}）"},
    "archive.big-header": {
        "en": "has an extended header of {size} bytes",
        "zh": "有一个 {size} 字节的扩展头",
    },
    "archive.sparse": {"en": "member {label!r} is a sparse file", "zh": "成员 {label!r} 是稀疏文件"},
    "archive.sparse-member": {"en": "is a sparse file", "zh": "是稀疏文件"},
    "archive.gnu-sparse": {
        "en": "holds a sparse file (GNU sparse 1.0)",
        "zh": "包含稀疏文件（GNU sparse 1.0）",
    },
    "archive.bad-tar": {
        "en": "is not a readable tar archive ({error})",
        "zh": "不是可读取的 tar 压缩包（{error}）",
    },
    "archive.raw-over": {
        "en": "holds more than {times} times {size} of raw profiler data (a tar must be read through to skip it)",
        "zh": "包含超过 {size} 的 {times} 倍的原始性能数据（tar 必须完整读一遍才能跳过这些数据）",
    },
    "archive.filtered": {
        "en": "is refused by the tar data filter ({error})",
        "zh": "被 tar 数据过滤器拒绝（{error}）",
    },
    "archive.plain-files": {"en": "plain files", "zh": "普通文件"},
    "sources.files-over": {
        "en": "{n} files were given, over the limit of {limit}",
        "zh": "提供了 {n} 个文件，超过上限 {limit}",
    },
    "sources.profiler-files-over": {
        "en": "{n} profiler files were given, over the limit of {limit}",
        "zh": "提供了 {n} 个性能数据文件，超过上限 {limit}",
    },
    # --- diagnosis/readers/io.py (files a reader cannot read)
    "io.cannot-open": {"en": "cannot open ({why})", "zh": "无法打开（{why}）"},
    "io.not-regular": {"en": "is not a regular file", "zh": "不是普通文件"},
    "io.a-profile-file": {"en": "a file of profiler output", "zh": "性能数据输出中的文件"},
    "io.file-over": {
        "en": "is {size:,.0f} MiB, over the {limit:,.0f} MiB limit for one profile file",
        "zh": "大小为 {size:,.0f} MiB，超过单个性能数据文件 {limit:,.0f} MiB 的上限",
    },
    "io.shorter-profile": {
        "en": "a shorter profile (the operator can raise {variable})",
        "zh": "更短的性能数据（运维人员可以调高 {variable}）",
    },
    "io.rows-over": {
        "en": "has more than {limit:,} {what}, the limit for one profile table",
        "zh": "超过 {limit:,} {what}，即单个性能数据表的上限",
    },
    "io.fewer-steps": {
        "en": "a profile of fewer steps (the operator can raise {variable})",
        "zh": "步数更少的性能数据（运维人员可以调高 {variable}）",
    },
    "io.what-rows": {"en": "rows", "zh": "行"},
    "io.what-launches": {"en": "launches", "zh": "次算子调用"},
    "io.what-events": {"en": "kernel, step and frequency events", "zh": "个算子、步和频率事件"},
    "io.empty": {"en": "empty file", "zh": "文件为空"},
    "io.csv-header-rows": {"en": "a CSV header line and rows", "zh": "一行 CSV 表头和数据行"},
    "io.binary": {"en": "binary data, not CSV text", "zh": "是二进制数据，不是 CSV 文本"},
    "io.utf8-csv": {"en": "a UTF-8 CSV file", "zh": "UTF-8 编码的 CSV 文件"},
    "io.bad-header": {"en": "unreadable header line ({error})", "zh": "表头行无法读取（{error}）"},
    "io.csv-header": {"en": "a CSV header", "zh": "CSV 表头"},
    "io.not-utf8": {"en": "not UTF-8 text (byte {byte})", "zh": "不是 UTF-8 文本（第 {byte} 字节）"},
    "io.not-utf8-detail": {"en": "not UTF-8 text ({detail})", "zh": "不是 UTF-8 文本（{detail}）"},
    "io.missing-column": {"en": "missing column {column!r}", "zh": "缺少列 {column!r}"},
    "io.header-with": {"en": "a header with {spellings}", "zh": "含有 {spellings} 的表头"},
    "io.long-row": {
        "en": "a row is longer than the CSV reader's {mib} MiB block (a damaged file or not a table)",
        "zh": "有一行超过 CSV 读取器 {mib} MiB 的块大小（文件已损坏或不是表格）",
    },
    "io.long-header": {
        "en": "the header line is longer than the CSV reader's {mib} MiB block (a damaged file or not a table)",
        "zh": "表头行超过 CSV 读取器 {mib} MiB 的块大小（文件已损坏或不是表格）",
    },
    "io.bad-row": {"en": "malformed or truncated row ({detail})", "zh": "某行格式错误或被截断（{detail}）"},
    "io.kind-values": {"en": "{kind} values (or N/A) in that column", "zh": "该列为 {kind} 值（或 N/A）"},
    "io.utf8-text": {"en": "UTF-8 text", "zh": "UTF-8 文本"},
    "io.as-many-fields": {
        "en": "comma-separated rows with as many fields as the header",
        "zh": "以逗号分隔、字段数与表头相同的行",
    },
    "io.json-deep": {"en": "JSON {problem}", "zh": "JSON 数据{problem}"},
    "io.nested": {"en": "nested more than {limit} levels deep", "zh": "嵌套超过 {limit} 层"},
    "io.bad-json": {
        "en": "invalid or truncated JSON at line {line} column {column} ({error})",
        "zh": "JSON 无效或被截断，位于第 {line} 行第 {column} 列（{error}）",
    },
    "io.json-holds": {"en": "JSON holds {what}", "zh": "JSON 包含 {what}"},
    "io.digits": {
        "en": "a number with {digits:,} digits, over the limit of {limit}",
        "zh": "一个 {digits:,} 位的数字，超过上限 {limit}",
    },
    "chain.graph-output": {"en": "graph output", "zh": "图输出"},
    "chain.consumers": {
        "en": "{op} output has {uses} consumers ({users})",
        "zh": "{op} 的输出有 {uses} 个使用者（{users}）",
    },
    "chain.training-bn": {
        "en": "{op} runs in training mode (is_training=True): cannot be folded",
        "zh": "{op} 以训练模式运行（is_training=True）：无法折叠",
    },
    "chain.also-read": {"en": "{op} output also read by {users}", "zh": "{op} 的输出也被 {users} 读取"},
    "isolation.cancelled": {"en": "the request was cancelled", "zh": "请求已取消"},
    "isolation.within-wall": {"en": "within {s:g} s", "zh": "在 {s:g} 秒内"},
    "isolation.within-memory": {"en": "within {mb:g} MB of memory", "zh": "在 {mb:g} MB 内存内"},
    "isolation.within-cpu": {"en": "within {s:g} s of CPU time", "zh": "在 {s:g} 秒 CPU 时间内"},
    "isolation.overrun": {"en": "{failure} {within}", "zh": "{within}仍{failure}"},
    "isolation.smaller": {
        "en": "a smaller input (the operator can raise {variable})",
        "zh": "更小的输入（运维人员可以调高 {variable}）",
    },
    "isolation.stopped": {
        "en": "{failure}: the decoder stopped ({name}), perhaps for lack of memory (limit {mb:g} MB)",
        "zh": "{failure}：解码器已停止（{name}），可能是内存不足（上限 {mb:g} MB）",
    },
    "isolation.model-failed": {"en": "the model could not be decoded", "zh": "无法解码模型"},
    "isolation.unpack-failed": {"en": "the upload could not be unpacked", "zh": "无法解压上传的文件"},
    "isolation.profile-failed": {"en": "the profile could not be read", "zh": "无法读取性能数据"},
    "uploads.gone": {
        "en": "this upload is no longer on the server (it was cleared or expired); upload the file again",
        "zh": "此上传已不在服务器上（已被清除或已过期）；请重新上传该文件",
    },
    "io.json-too-deep": {"en": "JSON nested too deeply", "zh": "JSON 嵌套过深"},
    "isolation.dump-failed": {"en": "the dump could not be read", "zh": "无法读取 dump 数据"},
    "isolation.mapping-failed": {"en": "the layer mapping could not be read", "zh": "无法读取层映射文件"},
    # --- graph/loader.py and graph/build.py (MINDIR input errors and model warnings)
    "mindir.expected": {
        "en": "a .mindir file written by mindspore.export(..., file_format='MINDIR')",
        "zh": "由 mindspore.export(..., file_format='MINDIR') 写出的 .mindir 文件",
    },
    "mindir.smaller": {
        "en": "a smaller model (the operator can raise {variable})",
        "zh": "更小的模型（运维人员可以调高 {variable}）",
    },
    "mindir.cannot-analyse": {"en": "cannot be analysed: {error}", "zh": "无法分析：{error}"},
    "mindir.nesting": {
        "en": "tuples, partial applications or branch results nested more than {limit} deep",
        "zh": "元组、偏函数应用或分支结果的嵌套超过 {limit} 层",
    },
    "mindir.node-budget": {
        "en": "with every call expanded the graph has over {limit:,} nodes and calls, the decoder's budget",
        "zh": "展开所有调用后，图中的节点和调用超过 {limit:,} 个，即解码器的上限",
    },
    "mindir.bad-utf8": {"en": "{field} is not valid UTF-8 text", "zh": "{field} 不是有效的 UTF-8 文本"},
    "mindir.not-found": {"en": "file not found", "zh": "未找到文件"},
    "mindir.cannot-read": {"en": "cannot be read ({why})", "zh": "无法读取（{why}）"},
    "mindir.folder": {"en": "is a folder, not a file", "zh": "是文件夹，不是文件"},
    "mindir.not-regular": {"en": "is not a regular file (a {kind})", "zh": "不是普通文件（是 {kind}）"},
    "mindir.too-big": {
        "en": "is {size:,} bytes, over the {limit:,}-byte limit of a protobuf message",
        "zh": "大小为 {size:,} 字节，超过 protobuf 消息 {limit:,} 字节的上限",
    },
    "mindir.under-2gib": {
        "en": "a MINDIR graph file under 2 GiB (MindSpore writes larger weights to <name>_variables/)",
        "zh": "小于 2 GiB 的 MINDIR 图文件（MindSpore 会把更大的权重写到 <name>_variables/）",
    },
    "mindir.undecodable": {
        "en": "not a MINDIR file: protobuf decoding failed ({reason})",
        "zh": "不是 MINDIR 文件：protobuf 解码失败（{reason}）",
    },
    "mindir.producer": {
        "en": "was produced by {producer!r}, not MindSpore",
        "zh": "由 {producer!r} 生成，而不是 MindSpore",
    },
    "mindir.no-producer": {"en": "has no producer name", "zh": "没有生成者名称"},
    "mindir.not-mindir": {"en": "not a MINDIR file: {problem}", "zh": "不是 MINDIR 文件：{problem}"},
    "mindir.no-nodes": {"en": "MINDIR file contains no graph nodes", "zh": "MINDIR 文件中没有图节点"},
    "mindir.slow-backend": {
        "en": "protobuf uses its {backend!r} backend (about 200x slower on graphs); set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=upb before anything imports MindSpore",
        "zh": "protobuf 使用的是 {backend!r} 后端（处理图时约慢 200 倍）；请在导入 MindSpore 之前设置 PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=upb",
    },
    "mindir.version-1": {
        "en": "file written by MindSpore 2.0-2.2 (mind_ir_version 1): operator arguments are also read from primitive attributes; this layout is inferred, not verified on real files",
        "zh": "文件由 MindSpore 2.0-2.2 写出（mind_ir_version 1）：算子参数也从原语属性中读取；这种布局是推断的，未在真实文件上验证",
    },
    "mindir.untested-version": {
        "en": "mind_ir_version {version} is not one this reader was tested with (1-3)",
        "zh": "mind_ir_version {version} 不在本读取器测试过的版本（1-3）之内",
    },
    "mindir.big-endian": {
        "en": "file is big-endian: small constant tensors are decoded as little-endian",
        "zh": "文件为大端序：小的常量张量按小端序解码",
    },
    "mindir.external-missing": {
        "en": "weights live in external data files not found next to the model ({missing}); the graph is analysed without them",
        "zh": "权重位于外部数据文件中，但在模型旁未找到（{missing}）；图在没有权重的情况下分析",
    },
    "mindir.external-outside": {
        "en": "external weights not uploaded: {n} external data files are named outside the model's folder and were not looked up; the graph is analysed without them",
        "zh": "外部权重未上传：{n} 个外部数据文件位于模型所在文件夹之外，未查找；图在没有权重的情况下分析",
    },
    "mindir.stripped": {
        "en": "{n} parameters carry no weight data (stripped): shapes and dtypes only",
        "zh": "{n} 个参数不含权重数据（已剥离）：只有形状和数据类型",
    },
    "mindir.unknown-names": {
        "en": "{n} referenced names were not found in the file (e.g. {listed}); their edges are missing",
        "zh": "文件中找不到 {n} 个被引用的名称（例如 {listed}）；它们的边缺失",
    },
    "mindir.not-inlined": {
        "en": "{n} calls were not inlined (calls nested over {depth} deep); they appear as opaque call nodes",
        "zh": "{n} 个调用未内联（调用嵌套超过 {depth} 层）；它们显示为不透明的调用节点",
    },
    "mindir.bytes-corrupt": {
        "en": "the bytes are damaged or belong to another kind of file",
        "zh": "文件内容已损坏，或属于其他类型的文件",
    },
    "mindir.too-deep": {
        "en": "its messages are nested too deeply to be a model",
        "zh": "其消息嵌套过深，不可能是模型",
    },
    # --- reader format errors shared by the readers (cpu.py, trace.py, host.py, ascend*.py, sqlite_db.py …)
    "reader.file-missing": {"en": "file missing", "zh": "缺少文件"},
    "reader.missing-columns": {"en": "missing columns {missing}", "zh": "缺少列 {missing}"},
    "reader.header-only": {"en": "no operators recorded (header only)", "zh": "没有记录任何算子（只有表头）"},
    "reader.row-per-op": {"en": "one row per operator", "zh": "每个算子一行"},
    "reader.column-not-utf8": {
        "en": "column {column} is not UTF-8 text",
        "zh": "列 {column} 不是 UTF-8 文本",
    },
    "reader.unreadable-csv": {"en": "unreadable CSV ({error})", "zh": "CSV 无法读取（{error}）"},
    "reader.a-csv": {"en": "a CSV file", "zh": "CSV 文件"},
    "reader.no-launches-line": {"en": "line {line} has no launches", "zh": "第 {line} 行没有算子调用"},
    "reader.no-launches": {"en": "no operator launches recorded", "zh": "没有记录任何算子调用"},
    "reader.one-launch": {"en": "at least one launch", "zh": "至少一次算子调用"},
    "reader.bad-launch-list": {"en": "malformed launch list", "zh": "算子调用列表格式错误"},
    "reader.launch-entries": {
        "en": "<start_ns>,<duration_ms>,0 entries",
        "zh": "<start_ns>,<duration_ms>,0 形式的条目",
    },
    "reader.bad-launch": {"en": "malformed launch entry ({error})", "zh": "算子调用条目格式错误（{error}）"},
    # --- diagnosis/readers/trace.py (Chrome-trace JSON) and host.py (host-op timestamp lists)
    "trace.expected": {
        "en": "a JSON list of Chrome-trace events ([{{...}}, {{...}}])",
        "zh": "Chrome trace 事件的 JSON 列表（[{{...}}, {{...}}]）",
    },
    "trace.not-utf8": {
        "en": "not UTF-8 text (near byte {byte})",
        "zh": "不是 UTF-8 文本（第 {byte} 字节附近）",
    },
    "trace.at-char": {"en": "{problem} (character {where})", "zh": "{problem}（第 {where} 个字符）"},
    "trace.event-at-char": {
        "en": "JSON event {problem} (character {where})",
        "zh": "JSON 事件{problem}（第 {where} 个字符）",
    },
    "trace.not-list": {"en": "not a JSON list", "zh": "不是 JSON 列表"},
    "trace.data-after": {"en": "data after the end of the event list", "zh": "事件列表结束后还有数据"},
    "trace.truncated": {"en": "truncated file", "zh": "文件被截断"},
    "trace.found": {"en": "expected ',' or ']', found {char!r}", "zh": "应为 ',' 或 ']'，实际为 {char!r}"},
    "trace.not-closed": {
        "en": "truncated file: the event list is not closed",
        "zh": "文件被截断：事件列表没有闭合",
    },
    "trace.bad-json": {"en": "invalid or truncated JSON ({error})", "zh": "JSON 无效或被截断（{error}）"},
    "trace.too-deep": {"en": "nested too deeply", "zh": "嵌套过深"},
    "trace.too-many-digits": {"en": "holds a number with too many digits", "zh": "包含位数过多的数字"},
    "trace.cannot-read": {"en": "cannot read ({why})", "zh": "无法读取（{why}）"},
    "trace.bad-json-at": {"en": "invalid JSON around byte {byte}", "zh": "第 {byte} 字节附近的 JSON 无效"},
    "host.entries": {
        "en": "<start_ns>,<duration>[,<tid>] entries separated by spaces",
        "zh": "以空格分隔的 <start_ns>,<duration>[,<tid>] 条目",
    },
    "host.no-duration": {
        "en": "launch entry {entry!r} has no duration",
        "zh": "算子调用条目 {entry!r} 没有耗时",
    },
    "host.no-list": {"en": "line {line} has no launch list", "zh": "第 {line} 行没有算子调用列表"},
    "host.per-line": {
        "en": "<op name>;<type>;<start_ns>,<duration>,... per line",
        "zh": "每行 <op name>;<type>;<start_ns>,<duration>,...",
    },
    "host.one-line": {"en": "at least one line", "zh": "至少一行"},
    # --- diagnosis/ingest.py (value checks of a freshly read run)
    "ingest.rank-twice": {
        "en": "rank {rank} appears more than once ({roots})",
        "zh": "卡号 {rank} 出现了不止一次（{roots}）",
    },
    "ingest.folder-per-rank": {
        "en": "one run folder per rank (upload each run separately)",
        "zh": "每张卡一个运行文件夹（每次运行分别上传）",
    },
    "ingest.dur-nan": {"en": "missing or NaN (not a number)", "zh": "缺失或为 NaN（非数字）"},
    "ingest.dur-negative": {"en": "negative", "zh": "为负数"},
    "ingest.dur-infinite": {"en": "infinite", "zh": "为无穷大"},
    "ingest.dur-implausible": {"en": "implausible (longer than an hour)", "zh": "不合理（超过一小时）"},
    "ingest.count": {"en": "{n} {what}", "zh": "{n} 个{what}"},
    "ingest.no-valid-duration": {
        "en": "no valid launch duration (every value is missing, negative, infinite or too large)",
        "zh": "没有有效的算子调用耗时（每个值都缺失、为负、无穷大或过大）",
    },
    "ingest.finite-durations": {
        "en": "durations as finite, non-negative numbers",
        "zh": "有限且非负的耗时数值",
    },
    "ingest.dropped-durations": {
        "en": "{n} launches with invalid durations were dropped from {where} ({counts})",
        "zh": "已从 {where} 中丢弃 {n} 次耗时无效的算子调用（{counts}）",
    },
    "ingest.reexport-durations": {
        "en": "re-export the profile; invalid durations usually mean a truncated or edited file",
        "zh": "重新导出性能数据；无效的耗时通常说明文件被截断或编辑过",
    },
    "ingest.all-zero": {
        "en": "every launch lasts 0 µs: all {n} durations are zero, so there is no time to analyse",
        "zh": "每次算子调用都是 0 µs：全部 {n} 个耗时都为零，没有可分析的时间",
    },
    "ingest.measured-durations": {
        "en": "a profile whose launches have measured durations",
        "zh": "算子调用带有实测耗时的性能数据",
    },
    "ingest.dropped-starts": {
        "en": "{n} launches with a non-finite start time (inf) were dropped from {where}",
        "zh": "已从 {where} 中丢弃 {n} 次开始时间非有限值（inf）的算子调用",
    },
    "ingest.reexport-starts": {
        "en": "re-export the profile; a non-finite start time means an edited or corrupt file",
        "zh": "重新导出性能数据；非有限的开始时间说明文件被编辑过或已损坏",
    },
    "ingest.no-finite-start": {
        "en": "no finite launch start time (every value is infinite, or too large once converted to microseconds)",
        "zh": "没有有限的算子调用开始时间（每个值都是无穷大，或换算为微秒后超出范围）",
    },
    "ingest.finite-starts": {"en": "start times as finite numbers", "zh": "有限数值的开始时间"},
    "ingest.all-negative-steps": {
        "en": "every launch has a negative step id",
        "zh": "每次算子调用的步编号都是负数",
    },
    "ingest.step-ids": {"en": "step ids of 0 or more", "zh": "0 或更大的步编号"},
    "ingest.dropped-steps": {
        "en": "{n} launches with a negative step id were dropped from {where}",
        "zh": "已从 {where} 中丢弃 {n} 次步编号为负的算子调用",
    },
    "ingest.reexport-steps": {
        "en": "re-export the profile; step ids are never negative in a real one",
        "zh": "重新导出性能数据；真实的性能数据中步编号从不为负",
    },
    "ingest.starts-overflow": {
        "en": "every launch start time ({value:g} {unit} or more) is too large to express in microseconds",
        "zh": "每个算子调用的开始时间（{value:g} {unit} 或更大）都太大，无法用微秒表示",
    },
    # --- diagnosis/sources.py, upload_tree.py and the readers' other format errors
    "sources.not-a-path": {
        "en": "an entry of the file list is not a path: {item!r}",
        "zh": "文件列表中的某项不是路径：{item!r}",
    },
    "sources.empty-list": {"en": "the file list is empty", "zh": "文件列表为空"},
    "sources.folder-in-list": {"en": "is a folder inside a list of files", "zh": "是文件列表中的一个文件夹"},
    "sources.files-only": {"en": "files only", "zh": "只能是文件"},
    "upload.same-name": {
        "en": "{n} different files have this name (one per rank or per run?); a folder upload loses sub-folders, so they cannot be told apart",
        "zh": "有 {n} 个不同的文件同名（每张卡或每次运行一个？）；上传文件夹会丢失子文件夹，因此无法区分它们",
    },
    "upload.archive-instead": {
        "en": "a .zip or .tar.gz archive of the profiler output folder instead",
        "zh": "改为上传性能数据输出文件夹的 .zip 或 .tar.gz 压缩包",
    },
    "sqlite.schema": {
        "en": "the msprof DB schema (tables TASK, COMPUTE_TASK_INFO and STRING_IDS), as written by MindSpore's export_type=db or `msprof --type=db`; re-export, or upload the text export (kernel_details.csv, op_summary_*.csv) instead",
        "zh": "msprof 数据库结构（表 TASK、COMPUTE_TASK_INFO 和 STRING_IDS），由 MindSpore 的 export_type=db 或 `msprof --type=db` 写出；请重新导出，或改为上传文本导出（kernel_details.csv、op_summary_*.csv）",
    },
    "sqlite.cannot-open": {
        "en": "cannot be opened as SQLite ({error})",
        "zh": "无法作为 SQLite 打开（{error}）",
    },
    "sqlite.cannot-read": {
        "en": "cannot be read as SQLite ({error})",
        "zh": "无法作为 SQLite 读取（{error}）",
    },
    "sqlite.no-tasks": {
        "en": "holds no compute tasks (COMPUTE_TASK_INFO joined with TASK is empty)",
        "zh": "不含计算任务（COMPUTE_TASK_INFO 与 TASK 关联后为空）",
    },
    "sqlite.more": {"en": "{listed} and {n} more", "zh": "{listed} 等（另有 {n} 个）"},
    "sqlite.no-tables": {"en": "no tables", "zh": "没有表"},
    "sqlite.other-schema": {
        "en": "is a SQLite database of another schema (missing {missing}; holds {held})",
        "zh": "是其他结构的 SQLite 数据库（缺少 {missing}；包含 {held}）",
    },
    "sqlite.no-column": {"en": "table {table} has no column {column}", "zh": "表 {table} 没有列 {column}"},
    "ascend.no-files": {
        "en": "no kernel_details.csv or trace_view.json",
        "zh": "没有 kernel_details.csv 或 trace_view.json",
    },
    "ascend.expected-apo": {
        "en": "ASCEND_PROFILER_OUTPUT with kernel_details.csv or trace_view.json (profiler_level Level0 or higher, export_type text), or with ascend_mindspore_profiler[_<rank>].db / ascend_pytorch_profiler_<rank>.db (export_type db)",
        "zh": "含 kernel_details.csv 或 trace_view.json 的 ASCEND_PROFILER_OUTPUT（profiler_level 为 Level0 或更高，export_type 为 text），或含 ascend_mindspore_profiler[_<rank>].db / ascend_pytorch_profiler_<rank>.db 的 ASCEND_PROFILER_OUTPUT（export_type 为 db）",
    },
    "ascend.no-kernels": {
        "en": "no Ascend Hardware kernels in trace_view.json and no kernel_details.csv",
        "zh": "trace_view.json 中没有 Ascend Hardware 算子，也没有 kernel_details.csv",
    },
    "ascend.an-ascend-profile": {
        "en": "an Ascend profile (a CPU-only trace is read by the CPU reader)",
        "zh": "Ascend 性能数据（只有 CPU 的 trace 由 CPU 读取器读取）",
    },
    "legacy.no-files": {"en": "no {timeline} or {detail}", "zh": "没有 {timeline} 或 {detail}"},
    "legacy.expected-folder": {
        "en": "the MindSpore 2.0-2.4 profiler/ folder with its per-rank operator files",
        "zh": "MindSpore 2.0-2.4 的 profiler/ 文件夹及其每张卡的算子文件",
    },
    "legacy.bad-row": {"en": "malformed row ({error})", "zh": "某行格式错误（{error}）"},
    "legacy.row-format": {
        "en": "op_name stream_id start_time duration per line",
        "zh": "每行 op_name stream_id start_time duration",
    },
    "legacy.bad-op-info": {"en": "op_info is not valid JSON", "zh": "op_info 不是有效的 JSON"},
    "legacy.op-info-like": {
        "en": 'op_info like {{"Input_0": {{...}}}}',
        "zh": 'op_info 形如 {{"Input_0": {{...}}}}',
    },
    "legacy-cpu.no-stamps": {"en": "no {name}", "zh": "没有 {name}"},
    "npu-smi.too-big": {"en": "file is larger than 1 MiB", "zh": "文件大于 1 MiB"},
    "npu-smi.printed": {"en": "the text printed by npu-smi info", "zh": "npu-smi info 打印的文本"},
    "npu-smi.none": {"en": "no npu-smi readings found", "zh": "没有找到 npu-smi 读数"},
    "npu-smi.output": {
        "en": "the output of `npu-smi info`, `npu-smi info -t common` or `npu-smi info watch`",
        "zh": "`npu-smi info`、`npu-smi info -t common` 或 `npu-smi info watch` 的输出",
    },
    "msprof.sample-object": {"en": "the msprof sample.json object", "zh": "msprof 的 sample.json 对象"},
    "json.not-object-is": {"en": "is not a JSON object", "zh": "不是 JSON 对象"},
    "json.not-object": {"en": "not a JSON object", "zh": "不是 JSON 对象"},
    "profiler-info.object": {"en": "a profiler_info JSON object", "zh": "profiler_info 的 JSON 对象"},
    "discover.loop": {
        "en": "cannot be followed ({why}): a symbolic link loop or a broken entry",
        "zh": "无法跟随（{why}）：符号链接循环或损坏的条目",
    },
    "discover.regular": {
        "en": "a folder of regular files and folders (remove or fix the link)",
        "zh": "只含普通文件和文件夹的文件夹（删除或修复该链接）",
    },
    "sqlite.rows-over": {
        "en": "table {table} has {rows:,} rows, more than the {limit:,} allowed for one profile table",
        "zh": "表 {table} 有 {rows:,} 行，超过单个性能数据表允许的 {limit:,} 行",
    },
    "sqlite.duplicate-key": {
        "en": "table {table} repeats {column}, which the schema makes unique ({n:,} repeated rows); a join over it would multiply rows",
        "zh": "表 {table} 的 {column} 有重复值（{n:,} 行重复），而数据库结构规定它唯一；按它关联会使行数成倍增长",
    },
    "sqlite.too-slow": {
        "en": "could not be read within {s:g} s (stopped)",
        "zh": "未能在 {s:g} 秒内读完（已停止）",
    },
    "sqlite.value-too-big": {
        "en": "holds a text or blob value over {mib:g} MiB (names and shapes of a real export are far shorter)",
        "zh": "含有超过 {mib:g} MiB 的文本或二进制值（真实导出中的名称和形状远短于此）",
    },
    "sqlite.text-over": {
        "en": "its compute tasks name {mib:,.0f} MiB of text, more than the {limit:,.0f} MiB allowed for one profile file",
        "zh": "其计算任务引用的文本共 {mib:,.0f} MiB，超过单个性能数据文件允许的 {limit:,.0f} MiB",
    },
    # --- limitations of the readers built from a lost file or a missing record
    "error.at": {"en": "{path}: {problem}", "zh": "{path}：{problem}"},
    "error.with-expected": {"en": "{head}; expected {expected}", "zh": "{head}；应为{expected}"},
    "error.ignored": {"en": "ignored: {line}", "zh": "已忽略：{line}"},
    "remedy.reexport": {"en": "re-export the profile", "zh": "重新导出性能数据"},
    "ascend.frequency-lost": {
        "en": "AI Core frequency not read: {line}",
        "zh": "未读取到 AI Core 频率：{line}",
    },
    "ascend.recopy-trace": {
        "en": "re-copy trace_view.json (it is often truncated by interrupted copies of large folders)",
        "zh": "重新复制 trace_view.json（大文件夹的复制被中断时它常被截断）",
    },
    "cann.no-sample": {
        "en": "no device_<id>/sample.json: the collection settings (task-time level, aic_metrics) are unknown",
        "zh": "没有 device_<id>/sample.json：采集设置（task-time 级别、aic_metrics）未知",
    },
    "cann.no-step-trace": {
        "en": "no step_trace_*.csv in mindstudio_profiler_output: the whole profiled window counts as one step",
        "zh": "mindstudio_profiler_output 中没有 step_trace_*.csv：整个采集窗口算作一步",
    },
    "sqlite.no-steps": {
        "en": "{name} records no step boundaries: the whole profiled window counts as one step",
        "zh": "{name} 没有记录步边界：整个采集窗口算作一步",
    },
    "sqlite.export-text": {
        "en": "export the text tables too (export_type=['text', 'db']) so step_trace_time.csv is written",
        "zh": "同时导出文本表（export_type=['text', 'db']），以便写出 step_trace_time.csv",
    },
    "sqlite.no-config": {"en": "no profiler configuration record", "zh": "没有性能分析器配置记录"},
    "gpu.no-step-trace": {
        "en": "no step_trace_raw file: no step boundaries",
        "zh": "没有 step_trace_raw 文件：没有步边界",
    },
    "gpu.include-step-trace": {
        "en": "include step_trace_raw_<id>_detail_time.csv in the upload",
        "zh": "上传时包含 step_trace_raw_<id>_detail_time.csv",
    },
    "profiler-info.and-more": {"en": "{named} and more", "zh": "{named} 等"},
    "profiler-info.twice": {
        "en": "{path}: {named} given twice in one object; the last value was used",
        "zh": "{path}：{named} 在同一个对象中出现两次；使用了最后一个值",
    },
    "profiler-info.check": {
        "en": "check the file: a key written twice means an edited or merged file",
        "zh": "检查该文件：键被写了两次说明文件经过编辑或合并",
    },
    "ingest.skipped": {
        "en": "{files} files ({mib:.1f} MiB) no reader uses were skipped unread (raw profiler data such as PROF_*/device_*/data, logs, FRAMEWORK binaries)",
        "zh": "跳过了 {files} 个没有读取器使用的文件（{mib:.1f} MiB），未读取（原始性能数据，如 PROF_*/device_*/data、日志、FRAMEWORK 二进制文件）",
    },
    "ingest.skipped-remedy": {
        "en": "nothing to do; `perf-doctor pack RUN_FOLDER` makes a small archive of only the files read",
        "zh": "无需处理；`perf-doctor pack RUN_FOLDER` 可以只把读取的文件打成一个小压缩包",
    },
    # --- diagnosis/analyzers/timing.py (generation pairs compared phase by phase)
    "sentence.end": {"en": ".", "zh": "。"},
    "phase-step-gap": {
        "en": "Compared phase by phase, the target is slower in {slower} ({parts}); {mix:.2f}x at the target's phase mix, where the average steps give {mixed:.2f}x{tail}",
        "zh": "按阶段比较，目标在 {slower} 阶段更慢（{parts}）；按目标的阶段构成为 {mix:.2f} 倍，而按平均步计算为 {mixed:.2f} 倍{tail}",
    },
    "phase-step-gap.part": {
        "en": "{phase}: {target:.3f} ms against {baseline:.3f} ms ({ratio:.2f}x over {target_steps} and {baseline_steps} steps)",
        "zh": "{phase}：{target:.3f} ms 对比 {baseline:.3f} ms（{ratio:.2f} 倍，分别为 {target_steps} 步和 {baseline_steps} 步）",
    },
    "phase-step-gap.unmatched": {
        "en": "; the target's {phases} steps have no counterpart in the baseline.",
        "zh": "；目标的 {phases} 步在基线中没有对应。",
    },
    # --- diagnosis/explain.py (which layouts and versions write a file, and what to do)
    "explain.kernel-details": {
        "en": "MindSpore 2.3+ and torch_npu write it in ASCEND_PROFILER_OUTPUT/ (Name, Type, Accelerator Core, Start Time(us), Duration(us), ...)",
        "zh": "MindSpore 2.3+ 和 torch_npu 把它写在 ASCEND_PROFILER_OUTPUT/ 中（Name, Type, Accelerator Core, Start Time(us), Duration(us), ...）",
    },
    "explain.op-summary": {
        "en": "CANN msprof writes it in PROF_*/mindstudio_profiler_output/ (Device_id, Op Name, OP Type, Task Type, Task Start Time(us), Task Duration(us), ...)",
        "zh": "CANN msprof 把它写在 PROF_*/mindstudio_profiler_output/ 中（Device_id, Op Name, OP Type, Task Type, Task Start Time(us), Task Duration(us), ...）",
    },
    "explain.step-trace-time": {
        "en": "MindSpore 2.3+ and torch_npu (Step, Computing, ..., Free)",
        "zh": "MindSpore 2.3+ 和 torch_npu（Step, Computing, ..., Free）",
    },
    "explain.step-trace-cann": {
        "en": "CANN msprof (Device_id, Iteration ID, FP Start(us), BP End(us), Iteration End(us), Iteration Time(us))",
        "zh": "CANN msprof（Device_id, Iteration ID, FP Start(us), BP End(us), Iteration End(us), Iteration Time(us)）",
    },
    "explain.framework-raw": {
        "en": "MindSpore 2.0-2.4 (task_id, stream_id, block_dim, full_op_name, op_name, op_type, subgraph, op_info) and 1.x (..., full_kernel_name, op_name, kernel_name, kernel_type, subgraph, op_info)",
        "zh": "MindSpore 2.0-2.4（task_id, stream_id, block_dim, full_op_name, op_name, op_type, subgraph, op_info）和 1.x（..., full_kernel_name, op_name, kernel_name, kernel_type, subgraph, op_info）",
    },
    "explain.aicore": {
        "en": "MindSpore 1.x/2.0 (full_op_name, execution_time[, execution_frequency]), 2.1-2.2 (full_op_name, task_duration, execution_frequency, task_type), 2.3/2.4 (full_kernel_name, ...)",
        "zh": "MindSpore 1.x/2.0（full_op_name, execution_time[, execution_frequency]）、2.1-2.2（full_op_name, task_duration, execution_frequency, task_type）、2.3/2.4（full_kernel_name, ...）",
    },
    "explain.timeline": {
        "en": "MindSpore 1.x-2.2 (op_name, stream_id, start_time(ms|us), duration(ms)); 2.0 also space-separated",
        "zh": "MindSpore 1.x-2.2（op_name, stream_id, start_time(ms|us), duration(ms)）；2.0 也有空格分隔的",
    },
    "explain.step-trace-raw": {
        "en": "MindSpore 1.x-2.4 (step_num, start_point, end_point, total, fp_point, bp_point, ...)",
        "zh": "MindSpore 1.x-2.4（step_num, start_point, end_point, total, fp_point, bp_point, ...）",
    },
    "explain.profiler-info": {
        "en": "MindSpore 2.0+ and torch_npu write a JSON object",
        "zh": "MindSpore 2.0+ 和 torch_npu 写出一个 JSON 对象",
    },
    "explain.sample": {
        "en": "CANN msprof writes a JSON object in PROF_*/device_<id>/",
        "zh": "CANN msprof 在 PROF_*/device_<id>/ 中写出一个 JSON 对象",
    },
    "explain.trace-view": {
        "en": "MindSpore 2.3+ and torch_npu write a Chrome-trace list of events",
        "zh": "MindSpore 2.3+ 和 torch_npu 写出 Chrome trace 事件列表",
    },
    "explain.todo": {
        "en": "copy the file again from the run folder (large files are often truncated), or make a fresh archive with `perf-doctor pack RUN_FOLDER`",
        "zh": "从运行文件夹重新复制该文件（大文件常被截断），或用 `perf-doctor pack RUN_FOLDER` 重新打一个压缩包",
    },
    "explain.known": {"en": "known: {known}; what to do: {todo}", "zh": "已知：{known}；处理方法：{todo}"},
    "explain.expected-known": {
        "en": "{expected}; known: {known}; what to do: {todo}",
        "zh": "{expected}；已知：{known}；处理方法：{todo}",
    },
    # --- graph/view.py (the fusion-chain figure)
    "view.by-scope": {"en": "scope prefix", "zh": "作用域前缀"},
    "view.by-order": {"en": "runs of topological order", "zh": "拓扑顺序的连续段"},
    "view.collapsed": {
        "en": "{total:,} nodes collapsed into {groups:,} groups by {how}",
        "zh": "{total:,} 个节点按{how}合并为 {groups:,} 组",
    },
    "view.group-ops": {"en": "{n:,} ops: {top}", "zh": "{n:,} 个算子：{top}"},
    "view.in-chains": {"en": "in chains: {n:,}", "zh": "在融合链中：{n:,}"},
    "view.scope": {"en": "scope: {scope}", "zh": "作用域：{scope}"},
    "view.chain": {"en": "chain: {pattern}", "zh": "融合链：{pattern}"},
    "view.blocked-paren": {"en": " (blocked: {reason})", "zh": "（受阻：{reason}）"},
    "view.chain-note": {
        "en": "{pattern}: {ops} ops, {casts} casts",
        "zh": "{pattern}：{ops} 个算子，{casts} 个 Cast",
    },
    "view.block-note": {
        "en": "{ops:,} ops in {units:,} units ({chains} chains, {blocked} blocked), {blocks} blocks by scope",
        "zh": "{ops:,} 个算子分为 {units:,} 个单元（{chains} 条融合链，{blocked} 条受阻），按作用域分为 {blocks} 个块",
    },
    "view.input": {"en": "input", "zh": "输入"},
    "view.ops": {"en": "ops: {ops}", "zh": "算子：{ops}"},
    "view.replaced-by": {"en": "replaced by: {op}", "zh": "替换为：{op}"},
    "view.casts-inside": {"en": "casts inside: {n}", "zh": "内部 Cast：{n}"},
    "view.blocked-label": {"en": "{pattern} ✗ blocked", "zh": "{pattern} ✗ 受阻"},
    "view.title": {"en": "{name}: {n} fusion chains", "zh": "{name}：{n} 条融合链"},
    "view.fusible": {"en": "fusible", "zh": "可融合"},
    "view.blocked": {"en": "blocked: {reason}", "zh": "受阻：{reason}"},
    "view.legend-edges": {"en": "edges", "zh": "连线"},
    "view.legend-blocked": {"en": "blocked", "zh": "受阻"},
    "view.legend-other": {"en": "other", "zh": "其他算子"},
    # --- doctor: CLI, settings, cases, triage, facade; diagnosis: pack and limits
    "cli.case-needs-after": {"en": "--case needs --after", "zh": "--case 需要同时给出 --after"},
    "cli.after-profile": {"en": "the after-the-fix profile", "zh": "修复后的性能数据"},
    "cli.no-case-db": {"en": "no case database", "zh": "没有案例数据库"},
    "cli.db-file-or-env": {
        "en": "--db FILE or PERF_DOCTOR_CASE_DB",
        "zh": "--db FILE 或 PERF_DOCTOR_CASE_DB",
    },
    "cli.jobs-positive": {
        "en": "--jobs and --timeout must be positive",
        "zh": "--jobs 和 --timeout 必须为正数",
    },
    "cli.no-case-db-configured": {"en": "no case database is configured", "zh": "没有配置案例数据库"},
    "cli.env-or-db-path": {
        "en": "PERF_DOCTOR_CASE_DB or --db PATH",
        "zh": "PERF_DOCTOR_CASE_DB 或 --db PATH",
    },
    "cli.is-folder-for": {
        "en": "is a folder; give a file name to write {what} to",
        "zh": "是一个文件夹；请给出写入{what}的文件名",
    },
    "cli.no-folder-for": {
        "en": "the folder to write {what} to does not exist",
        "zh": "要写入{what}的文件夹不存在",
    },
    "cli.cannot-write": {"en": "cannot write {what} ({reason})", "zh": "无法写入{what}（{reason}）"},
    "cli.what-rows": {"en": "the rows", "zh": "结果行"},
    "cli.what-report": {"en": "the report", "zh": "报告"},
    "config.not-user-password": {
        "en": "an entry is not 'user:password'",
        "zh": "有一项不是 'user:password' 形式",
    },
    "config.not-size": {"en": "{raw} is not a size", "zh": "{raw} 不是一个大小"},
    "config.size-example": {"en": "e.g. 500mb or 2gb", "zh": "例如 500mb 或 2gb"},
    "config.not-triage-mode": {"en": "{raw} is not a triage mode", "zh": "{raw} 不是一种分诊模式"},
    "config.auto-on-off": {"en": "auto, on or off", "zh": "auto、on 或 off"},
    "config.staff-login": {"en": "staff names need a login", "zh": "支持人员名单需要登录"},
    "config.users-too": {"en": "PERF_DOCTOR_USERS set as well", "zh": "同时设置 PERF_DOCTOR_USERS"},
    "config.not-url": {"en": "is not an http(s) URL", "zh": "不是 http(s) 网址"},
    "config.not-days": {"en": "{raw} is not a whole number of days", "zh": "{raw} 不是整数天数"},
    "config.days-example": {"en": "e.g. 30, or 0 for no limit", "zh": "例如 30，0 表示不限"},
    "config.not-on-off": {"en": "{raw} is not on or off", "zh": "{raw} 既不是 on 也不是 off"},
    "config.on-off": {"en": "on or off", "zh": "on 或 off"},
    "config.not-positive-whole": {"en": "{raw} is not a positive whole number", "zh": "{raw} 不是正整数"},
    "config.two-example": {"en": "e.g. 2", "zh": "例如 2"},
    "case.no-after": {"en": "this diagnosis has no after-the-fix run", "zh": "此诊断没有修复后的运行"},
    "case.with-after": {"en": "a diagnosis with --after", "zh": "带 --after 的诊断"},
    "case.other-profiles": {
        "en": "this diagnosis is not of the case's baseline and target",
        "zh": "此诊断不是针对该案例的基线和目标",
    },
    "case.same-profiles": {
        "en": "the same two profiles as the case, and the after run",
        "zh": "与该案例相同的两份性能数据，以及修复后的运行",
    },
    "case.no-id": {"en": "no case id was given", "zh": "没有给出案例编号"},
    "case.not-id": {"en": "this is not a case id", "zh": "这不是案例编号"},
    "case.id-expected": {"en": "the 22-character id of a case link", "zh": "案例链接中 22 个字符的编号"},
    "case.note-text": {"en": "the note must be text", "zh": "备注必须是文本"},
    "case.note-long": {"en": "the note is {n} characters long", "zh": "备注长 {n} 个字符"},
    "case.at-most": {"en": "at most {n}", "zh": "最多 {n} 个"},
    "case.unknown-status": {"en": "unknown case status", "zh": "未知的案例状态"},
    "case.db-open": {
        "en": "cannot open the case database ({reason})",
        "zh": "无法打开案例数据库（{reason}）",
    },
    "case.db-failed": {"en": "the case database failed ({reason})", "zh": "案例数据库出错（{reason}）"},
    "case.db-newer": {
        "en": "the case database has schema {version}, newer than this perf-doctor ({ours})",
        "zh": "案例数据库的结构版本为 {version}，比此 perf-doctor 的（{ours}）更新",
    },
    "case.db-is-folder": {"en": "is a folder", "zh": "是一个文件夹"},
    "case.db-path": {"en": "a database file path", "zh": "数据库文件路径"},
    "case.db-create": {
        "en": "cannot create the case database ({reason})",
        "zh": "无法创建案例数据库（{reason}）",
    },
    "triage.not-folder": {"en": "is not a folder", "zh": "不是文件夹"},
    "triage.inbox": {"en": "a folder of submissions", "zh": "存放提交的文件夹"},
    "triage.not-found": {"en": "was not found", "zh": "未找到"},
    "triage.unknown-suffix": {"en": "has an unknown suffix", "zh": "后缀未知"},
    "triage.csv-or-json": {"en": "a .csv or .json file", "zh": ".csv 或 .json 文件"},
    "triage.unknown-cause": {"en": "unknown cause to filter by", "zh": "未知的筛选原因"},
    "triage.rule-id": {"en": "a rule id of the Rules tab or (none)", "zh": "“规则”页中的规则编号，或 (none)"},
    "triage.unknown-severity": {"en": "unknown severity to filter by", "zh": "未知的筛选严重程度"},
    "triage.unknown-status": {"en": "unknown status to filter by", "zh": "未知的筛选状态"},
    "triage.limit-positive": {
        "en": "the number of cases to show must be a positive whole number",
        "zh": "要显示的案例数必须为正整数",
    },
    "triage.no-reason": {"en": "no reason was recorded", "zh": "没有记录原因"},
    "triage.not-diagnosed": {
        "en": "this submission was not diagnosed ({kind}: {reason})",
        "zh": "此提交未被诊断（{kind}：{reason}）",
    },
    "triage.other-schema": {
        "en": "this case was stored with report schema {version}; this version shows schema {ours}",
        "zh": "此案例以报告结构版本 {version} 保存；本版本显示的是版本 {ours}",
    },
    "triage.bad-stored": {
        "en": "this case's stored report does not match report schema {ours} ({n} problem(s), first at {at})",
        "zh": "此案例保存的报告不符合报告结构版本 {ours}（{n} 个问题，第一个在 {at}）",
    },
    "triage.no-kept": {
        "en": "this case kept no copy of its baseline and target archives",
        "zh": "此案例没有保留其基线和目标压缩包的副本",
    },
    "triage.kept-expected": {
        "en": "a case made with PERF_DOCTOR_CASE_KEEP_UPLOADS=on, or perf-doctor compare B T --after A --case ID",
        "zh": "在 PERF_DOCTOR_CASE_KEEP_UPLOADS=on 时创建的案例，或使用 perf-doctor compare B T --after A --case ID",
    },
    "triage.kept-gone": {
        "en": "the kept {role} upload of this case is gone",
        "zh": "此案例保留的{role}上传已不存在",
    },
    "facade.unknown-baseline": {"en": "unknown baseline choice {choice}", "zh": "未知的基线选择 {choice}"},
    "facade.baseline-choices": {"en": "first, second or none", "zh": "first、second 或 none"},
    "facade.after-alone": {
        "en": "an after-the-fix run was given without both a baseline and a target",
        "zh": "给出了修复后的运行，但没有同时给出基线和目标",
    },
    "facade.after-needs": {
        "en": "the baseline and target of the first diagnosis, and the target profiled again after the fixes",
        "zh": "第一次诊断的基线和目标，以及修复后重新采集的目标",
    },
    "facade.nothing-given": {
        "en": "a baseline and a target profile (or one profile), and/or a .mindir model",
        "zh": "一份基线和一份目标性能数据（或一份），和/或一个 .mindir 模型",
    },
    "facade.nothing": {"en": "nothing to diagnose", "zh": "没有可诊断的内容"},
    "facade.no-model": {"en": "no model was given", "zh": "没有给出模型"},
    "facade.mindir-file": {"en": "a .mindir file", "zh": ".mindir 文件"},
    "pack.not-folder": {"en": "is not a folder", "zh": "不是文件夹"},
    "pack.run-folder": {"en": "a profiler run folder", "zh": "一次性能采集的输出文件夹"},
    "pack.no-folder": {
        "en": "the folder to write the archive to does not exist",
        "zh": "要写入压缩包的文件夹不存在",
    },
    "pack.inside": {"en": "is inside the run folder being packed", "zh": "位于正在打包的运行文件夹内"},
    "pack.elsewhere": {"en": "-o elsewhere", "zh": "把 -o 指到别处"},
    "pack.cannot-write": {"en": "cannot be written ({reason})", "zh": "无法写入（{reason}）"},
    "limits.positive-whole": {"en": "a positive whole number", "zh": "正整数"},
    "limits.positive": {"en": "a positive number", "zh": "正数"},
    "limits.not-number": {"en": "{raw} is not a number", "zh": "{raw} 不是数字"},
    "limits.not-positive": {"en": "{raw} is not positive", "zh": "{raw} 不是正数"},
    "facade.bad-rank": {
        "en": "the rank must be a whole number from 0 to {max:,}, not {shown}",
        "zh": "卡号必须是 0 到 {max:,} 之间的整数，而不是 {shown}",
    },
    "cli.output-is-input": {
        "en": "is an input of this command ({input}) or inside one: writing the report there would overwrite it",
        "zh": "是此命令的输入（{input}）或位于输入之中：把报告写到那里会覆盖它",
    },
    "report.edited": {
        "en": "is not a report this app wrote ({n} values do not match the report schema; edited?)",
        "zh": "不是本应用生成的报告（{n} 个值不符合报告结构；是否被修改过？）",
    },
    "report.as-shown": {
        "en": "the report as the app showed it: run the diagnosis again",
        "zh": "应用显示的原始报告：请重新运行诊断",
    },
    # --- diagnosis/readers/torch_npu_db.py, msprof_timeline.py, legacy_steps.py (layouts of issue 28)
    "torchdb.schema": {
        "en": "torch_npu's SQLite export: ascend_pytorch_profiler_<rank>.db with tables TASK, COMPUTE_TASK_INFO and STRING_IDS (also read: COMMUNICATION_OP, STEP_TIME, AICORE_FREQ, RANK_DEVICE_MAP, and analysis.db's StepTraceTime); re-export, or upload the text export (kernel_details.csv) instead",
        "zh": "torch_npu 的 SQLite 导出：包含表 TASK、COMPUTE_TASK_INFO 和 STRING_IDS 的 ascend_pytorch_profiler_<rank>.db（也读取 COMMUNICATION_OP、STEP_TIME、AICORE_FREQ、RANK_DEVICE_MAP 以及 analysis.db 的 StepTraceTime）；请重新导出，或改为上传文本导出（kernel_details.csv）",
    },
    "torchdb.no-table": {"en": "has no table {table}", "zh": "没有表 {table}"},
    "torchdb.no-steps": {
        "en": "{name} has no STEP_TIME table: the whole profiled window counts as one step",
        "zh": "{name} 没有 STEP_TIME 表：整个采集窗口算作一步",
    },
    "timeline.no-config": {
        "en": "the msprof timeline layout keeps no collection settings (no sample.json): the profiler level and aic_metrics are unknown",
        "zh": "msprof 时间线布局不保存采集设置（没有 sample.json）：性能分析级别和 aic_metrics 未知",
    },
    "timeline.no-steps": {
        "en": "the timeline JSON has no Iteration Time spans: the whole profiled window counts as one step",
        "zh": "时间线 JSON 中没有 Iteration Time 区间：整个采集窗口算作一步",
    },
    "timeline.info-object": {"en": "an info.json.<id> JSON object", "zh": "info.json.<id> JSON 对象"},
    "timeline.no-kernels": {
        "en": "holds no Ascend Hardware compute tasks or HCCL communication operators",
        "zh": "不含 Ascend Hardware 计算任务或 HCCL 通信算子",
    },
    "timeline.expected": {
        "en": "CANN msprof's timeline layout: PROF_*/device_<id>/timeline/msprof_<device>_<model>_<iteration>.json (Chrome trace with the Ascend Hardware, HCCL, Overlap Analysis and Step Trace processes) and device_<id>/info.json.<id>",
        "zh": "CANN msprof 的时间线布局：PROF_*/device_<id>/timeline/msprof_<device>_<model>_<iteration>.json（含 Ascend Hardware、HCCL、Overlap Analysis 和 Step Trace 进程的 Chrome trace）以及 device_<id>/info.json.<id>",
    },
    "legacysteps.no-operators": {
        "en": "{what} cannot be answered: this run has step_trace_raw (steps and communication operators) but not the operator files ({files})",
        "zh": "无法回答{what}：此运行只有 step_trace_raw（步与通信算子），没有算子文件（{files}）",
    },
    "legacysteps.operators": {
        "en": "compute-operator time, types and AI CPU use",
        "zh": "计算算子耗时、类型和 AI CPU 使用",
    },
    "legacysteps.dtypes": {
        "en": "operator dtypes (precision, casts)",
        "zh": "算子数据类型（精度、类型转换）",
    },
    "legacysteps.shapes": {
        "en": "operator input shapes (dynamic shapes, batch)",
        "zh": "算子输入形状（动态形状、批大小）",
    },
    "legacysteps.formats": {"en": "operator formats (layout conversions)", "zh": "算子格式（布局转换）"},
    "legacysteps.scopes": {
        "en": "operator scopes (matching with the model, fusion)",
        "zh": "算子作用域（与模型对应、融合）",
    },
    "legacysteps.op-state": {
        "en": "how kernels were compiled (static or dynamic)",
        "zh": "内核的编译方式（静态或动态）",
    },
    "legacysteps.aic-metrics": {
        "en": "AI Core pipe utilisation (what bounds an operator)",
        "zh": "AI Core 流水线利用率（算子受何限制）",
    },
    # --- diagnosis/ranks.py, ingest.py and scale.py (every rank of a job)
    "ranks.too-few": {
        "en": "{n} readable ranks: the slow-rank test needs at least 2",
        "zh": "可读的 rank 只有 {n} 个：慢 rank 检测至少需要 2 个",
    },
    "ranks.no-common-step": {
        "en": "the ranks share no step, so their step times cannot be compared",
        "zh": "各 rank 没有共同的 step，无法比较它们的 step 时间",
    },
    "ranks.all-broken": {"en": "no rank of the job could be read", "zh": "作业的所有 rank 都无法读取"},
    "ranks.broken": {
        "en": "rank {rank} ({root}) could not be read and is left out: {problem}",
        "zh": "rank {rank}（{root}）无法读取，已跳过：{problem}",
    },
    "ranks.broken-remedy": {
        "en": "Export that rank's profiler output again (the other ranks were analysed).",
        "zh": "请重新导出该 rank 的性能数据（其余 rank 已分析）。",
    },
    "scale.no-dask": {"en": "Dask distributed is not installed", "zh": "未安装 Dask distributed"},
    "scale.dask-expected": {
        "en": "the address of a running Dask scheduler, e.g. tcp://HOST:8786",
        "zh": "正在运行的 Dask 调度器地址，例如 tcp://HOST:8786",
    },
    "scale.no-scheduler": {
        "en": "cannot reach the Dask scheduler ({reason})",
        "zh": "无法连接 Dask 调度器（{reason}）",
    },
    "communication-bound": {
        "en": "The {role}'s steps wait for communication more than they compute: {share:.0%} of each step is "
        "communication not overlapped by computing ({comm_ms:.3f} ms per step against {compute_ms:.3f} ms "
        "computing and {free_ms:.3f} ms free; from {source}).",
        "zh": "{role}的每步等待通信多于计算：每步 {share:.0%} 是未被计算掩盖的通信（每步 {comm_ms:.3f} ms，"
        "计算 {compute_ms:.3f} ms，空闲 {free_ms:.3f} ms；来自 {source}）。",
    },
    "slow-rank": {
        "en": "Rank {rank} of the {role} is the slow rank: it computes {ratio:.2f}x as long as the median rank "
        "({extra_ms:.3f} ms more per step, in {flagged} of {steps} steps); {victims} other ranks wait for it "
        "in collectives (about {wait_ms:.3f} ms per step). Rank {typical} is a typical rank.",
        "zh": "{role}的 rank {rank} 是慢 rank：其计算时间是中位 rank 的 {ratio:.2f} 倍（每步多 {extra_ms:.3f} ms，"
        "{steps} 步中有 {flagged} 步如此）；其余 {victims} 个 rank 在集合通信中等待它（每步约 {wait_ms:.3f} ms）。"
        "rank {typical} 是典型 rank。",
    },
    "slow-link": {
        "en": "{n} links of the {role} are slow; the slowest: rank {rank} on {link} at {gbps:.3f} GB/s against "
        "a median of {median:.3f} GB/s.",
        "zh": "{role}有 {n} 条链路偏慢；最慢的是 rank {rank} 的 {link}：{gbps:.3f} GB/s，中位数为 {median:.3f} GB/s。",
    },
    "ranks.compare-same": {
        "en": "Both jobs hold the same ranks: they are compared rank by rank, and the operator analysis pairs rank {rank} of each.",
        "zh": "两个作业的 rank 相同：逐 rank 比较，算子分析对比双方的 rank {rank}。",
    },
    "ranks.compare-typical": {
        "en": "The jobs hold different ranks ({first} and {second}): the operator analysis compares a typical rank of each (rank {rank_first} and rank {rank_second}).",
        "zh": "两个作业的 rank 不同（{first} 个和 {second} 个）：算子分析比较各自的一个典型 rank（rank {rank_first} 和 rank {rank_second}）。",
    },
    "cluster.unreadable": {
        "en": "cannot be read as msprof-analyze's cluster step trace ({reason})",
        "zh": "无法作为 msprof-analyze 的集群 step trace 读取（{reason}）",
    },
    "cluster.columns": {"en": "lacks the columns {missing}", "zh": "缺少列 {missing}"},
    "ranks.quick-unparsed": {
        "en": "has a step without Computing or Free time",
        "zh": "存在缺少 Computing 或 Free 时间的 step",
    },
    "ranks.two-alike": {
        "en": "{n} readable ranks: no outlier test can tell which of two is abnormal, and neither computes at least 10 % longer than the other in most steps",
        "zh": "可读的 rank 只有 {n} 个：两个 rank 无法用离群检验判断哪个异常，且在大多数步中两者的计算时间相差不到 10%",
    },
    "ranks.two-no-wait": {
        "en": "2 readable ranks: rank {rank} computes {ratio:.2f}x rank {other}'s time per step, but rank {other} does not wait for it in collectives, so neither is named the slow rank",
        "zh": "可读的 rank 只有 2 个：rank {rank} 每步计算时间是 rank {other} 的 {ratio:.2f} 倍，但 rank {other} 并未在集合通信中等待它，因此不认定慢 rank",
    },
    # --- outputs/ (two runs' dumps compared layer by layer)
    "outputs.msprobe-no-data": {
        "en": 'has no "data" object of dumped APIs',
        "zh": '没有记录各 API 的 "data" 对象',
    },
    "outputs.msprobe-expected": {
        "en": 'an msprobe statistics dump.json (task "statistics") with its construct.json and stack.json',
        "zh": 'msprobe 统计量 dump.json（task 为 "statistics"），及其 construct.json 和 stack.json',
    },
    "outputs.not-json": {"en": "is not valid JSON ({reason})", "zh": "不是有效的 JSON（{reason}）"},
    "outputs.bad-mapping": {"en": "is not a layer mapping ({reason})", "zh": "不是层映射文件（{reason}）"},
    "outputs.no-tensors": {"en": "holds no dumped tensor files", "zh": "不包含任何 dump 出的张量文件"},
    "outputs.dump-expected": {
        "en": "a dump folder or archive: msprobe dump.json, MindSpore statistic.csv, or MindSpore .npy tensors (MINDSPORE_DUMP_CONFIG)",
        "zh": "dump 文件夹或压缩包：msprobe dump.json、MindSpore statistic.csv，或 MindSpore .npy 张量（MINDSPORE_DUMP_CONFIG）",
    },
    "outputs.more-iterations": {
        "en": "the dump holds several iterations; the first was compared",
        "zh": "dump 中有多个迭代，只比较了第一个",
    },
    "outputs.csv-columns": {"en": "lacks the columns {columns}", "zh": "缺少列 {columns}"},
    "outputs.no-dump": {
        "en": "holds no dump Perf Doctor can read (found: {found})",
        "zh": "不包含 Perf Doctor 能读取的 dump（找到：{found}）",
    },
    "outputs.too-big": {
        "en": "is {mib} MiB, over the {limit} MiB a dump.json may have",
        "zh": "大小为 {mib} MiB，超过了 dump.json 的上限 {limit} MiB",
    },
    "outputs.diverge": {
        "en": "Outputs first part ways at {layer} ({op_type}): {stat} differs by {rel:.3g} relative, beyond the {dtype} tolerance {tol:g}",
        "zh": "输出首次出现分歧于 {layer}（{op_type}）：{stat} 相对差异 {rel:.3g}，超出 {dtype} 容差 {tol:g}",
    },
    "outputs.inputs-differ": {
        "en": "The network input {layer} already differs between the runs ({how})",
        "zh": "两次运行的网络输入 {layer} 已经不同（{how}）",
    },
    "outputs.same-stats": {
        "en": "same statistics, other values: reordered or flipped",
        "zh": "统计量相同而数值不同：被重排或翻转",
    },
    "outputs.other-stats": {
        "en": "statistics differ by {rel:.3g} relative",
        "zh": "统计量相对差异 {rel:.3g}",
    },
    "outputs.weights-differ": {
        "en": "{n} of {total} parameters differ between the runs (first: {first}, {rel:.3g} relative)",
        "zh": "{total} 个参数中有 {n} 个在两次运行间不同（第一个：{first}，相对差异 {rel:.3g}）",
    },
    "outputs.overflow": {
        "en": "{layer} holds {non_finite} inf/nan values or a maximum of {max_abs:g} in {dtype} (FP16 ends at 65504); the other run has {other}",
        "zh": "{layer} 含 {non_finite} 个 inf/nan 值或 {dtype} 下最大值 {max_abs:g}（FP16 上限 65504）；另一次运行为 {other}",
    },
    "outputs.dtype-differ": {
        "en": "{n} matched layers compute in other dtypes ({baseline_dtype} against {target_dtype}, first at {layer})",
        "zh": "{n} 个对应层的计算数据类型不同（{baseline_dtype} 对 {target_dtype}，首个在 {layer}）",
    },
    "outputs.finite": {"en": "finite values below the limit", "zh": "有限值且低于上限"},
    "outputs.md-title": {
        "en": "Perf Doctor: where two runs' outputs part ways",
        "zh": "Perf Doctor：两次运行的输出从哪里开始不同",
    },
    "outputs.md-baseline": {"en": "Baseline", "zh": "基线"},
    "outputs.md-target": {"en": "Target", "zh": "目标"},
    "outputs.md-layers": {"en": "layers", "zh": "层"},
    "outputs.md-first": {"en": "First layer that parts ways", "zh": "首个出现分歧的层"},
    "outputs.md-no-divergence": {
        "en": "No layer parts ways: all {n} matched layers agree within their dtype's tolerance.",
        "zh": "没有层出现分歧：{n} 个对应层均在其数据类型的容差之内。",
    },
    "outputs.md-first-line": {
        "en": "`{layer}` ({op_type}), layer {depth} of {n}: {stat} differs by {rel:.3g} relative, beyond the {dtype} tolerance {tol:g}.",
        "zh": "`{layer}`（{op_type}），第 {depth}/{n} 层：{stat} 相对差异 {rel:.3g}，超出 {dtype} 容差 {tol:g}。",
    },
    "outputs.md-first-shape": {
        "en": "`{layer}` ({op_type}), layer {depth} of {n}: the two runs' outputs have different shapes.",
        "zh": "`{layer}`（{op_type}），第 {depth}/{n} 层：两次运行的输出形状不同。",
    },
    "outputs.md-causes": {"en": "Causes", "zh": "原因"},
    "outputs.md-nothing": {"en": "Nothing significant.", "zh": "没有发现显著问题。"},
    "outputs.md-depth": {"en": "Divergence along depth", "zh": "随网络深度的分歧"},
    "outputs.md-one-sided": {"en": "Layers in one run only", "zh": "只在一次运行中出现的层"},
    "outputs.md-rel": {"en": "relative difference", "zh": "相对差异"},
    "outputs.md-layer-depth": {"en": "layer (execution order)", "zh": "层（执行顺序）"},
    "outputs.bad-npy": {
        "en": "is not a readable .npy tensor ({reason})",
        "zh": "不是可读取的 .npy 张量（{reason}）",
    },
    "outputs.need-two": {
        "en": "Give both dumps, the baseline's and the target's.",
        "zh": "请同时给出基线和目标两份 dump。",
    },
    "outputs.diverge-shape": {
        "en": "Outputs first part ways at {layer} ({op_type}): the output shapes differ",
        "zh": "输出首次出现分歧于 {layer}（{op_type}）：输出形状不同",
    },
    "outputs.diverge-non-finite": {
        "en": "Outputs first part ways at {layer} ({op_type}): the counts of inf/nan values differ",
        "zh": "输出首次出现分歧于 {layer}（{op_type}）：inf/nan 数值的个数不同",
    },
    "outputs.md-col-layer": {"en": "layer", "zh": "层"},
    "outputs.md-col-op": {"en": "op", "zh": "算子"},
    "outputs.md-col-rel": {"en": "rel. diff", "zh": "相对差异"},
    "outputs.md-col-stat": {"en": "statistic", "zh": "统计量"},
    "outputs.md-col-tol": {"en": "tolerance", "zh": "容差"},
    "outputs.md-deterministic-cost-set_deterministic": {
        "en": "From the profile: deterministic kernels (ms.set_deterministic(True), the fix for run-to-run differences of reductions) can slow at most the {n} reduction and atomic operators, {ms:.3g} ms of the target's {step:.3g} ms per step ({share:.1f} %). Profile once with it on to measure.",
        "zh": "根据性能数据：确定性算子（ms.set_deterministic(True)，用于消除归约类算子的运行间差异）最多只会拖慢 {n} 个归约和原子类算子，即目标每步 {step:.3g} ms 中的 {ms:.3g} ms（{share:.1f}%）。开启后再采集一次即可实测。",
    },
    "outputs.md-deterministic-cost-threads_num": {
        "en": "From the profile: on CPU the fix for run-to-run differences runs one kernel thread (ms.device_context.cpu.op_tuning.threads_num(1)), which can slow every operator: {every:.3g} ms of the target's {step:.3g} ms per step ({share:.1f} %), {ms:.3g} ms of it in the {n} reduction and atomic operators. Profile once with it on to measure.",
        "zh": "根据性能数据：在 CPU 上，消除运行间差异的修复使用单个算子线程（ms.device_context.cpu.op_tuning.threads_num(1)），可能拖慢所有算子：目标每步 {step:.3g} ms 中的 {every:.3g} ms（{share:.1f}%），其中 {ms:.3g} ms 属于 {n} 个归约和原子类算子。开启后再采集一次即可实测。",
    },
    "outputs.md-call-site": {"en": "Called in the baseline from", "zh": "基线中的调用位置"},
    "outputs.md-target-call-site": {"en": "Called in the target from", "zh": "目标中的调用位置"},
    "outputs.plot-unbounded": {
        "en": "no finite difference (drawn at the top)",
        "zh": "无有限差异（画在顶部）",
    },
    "outputs.plot-shape": {"en": "different shapes", "zh": "形状不同"},
    "outputs.plot-non-finite": {"en": "different inf/nan counts", "zh": "inf/nan 个数不同"},
    "outputs.bad-csv-line": {
        "en": "line {line} cannot be read ({reason})",
        "zh": "第 {line} 行无法读取（{reason}）",
    },
}
