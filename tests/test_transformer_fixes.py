"""The fused ops the transformer patterns and rules name exist in the installed MindSpore 2.10, and what
they attribute to MindFormers does not."""

from __future__ import annotations

import importlib.util

import pytest

from graph.patterns import DAG_PATTERNS

# fused op named by a pattern -> the mindspore.ops function that produces it
FUNCTIONS = {
    "FlashAttentionScore": "flash_attention_score",
    "IncreFlashAttention": "incre_flash_attention",
    "LayerNorm": "layer_norm",
    "RmsNorm": "rms_norm",
    "GeLU": "gelu",
    "FastGelu": "fast_gelu",
    "SiLU": "silu",
    "RotaryPositionEmbedding": "rotary_position_embedding",
    "Softmax": "softmax",
}


@pytest.mark.mindspore
def test_every_fused_op_a_pattern_names_has_a_mindspore_function() -> None:
    from mindspore import ops

    named = {p.fused for p in DAG_PATTERNS} | {p.decode_fused for p in DAG_PATTERNS if p.decode_fused}
    assert named == set(FUNCTIONS)
    assert all(callable(getattr(ops, fn)) for fn in FUNCTIONS.values())
    # the rules' notes cite these too
    assert all(callable(getattr(ops, fn)) for fn in ("prompt_flash_attention", "swiglu"))


@pytest.mark.mindspore
def test_mindformers_names_are_not_mindspore() -> None:
    import mindspore as ms
    from mindspore import nn, ops

    assert importlib.util.find_spec("mindformers") is None  # a separate package, not installed here
    assert not hasattr(nn, "LlamaRMSNorm") and not hasattr(nn, "FlashAttention")
    assert not hasattr(ops, "apply_rotary_pos_emb")
    assert "use_flash_attention" not in ms.get_context.__doc__


@pytest.mark.mindspore
def test_the_cpu_backend_has_no_kernel_for_the_ascend_fused_ops() -> None:
    import mindspore as ms
    import numpy as np
    from mindspore import ops

    x = ms.Tensor(np.ones((2, 8), np.float32))
    with pytest.raises(RuntimeError, match="RmsNorm"):
        ops.rms_norm(x, ms.Tensor(np.ones(8, np.float32)))[0].asnumpy()
    assert ops.silu(x).shape == (2, 8)  # the activations do run on CPU (the rule executes its fix)
