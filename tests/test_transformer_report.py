"""A transformer MINDIR in the report: decomposed patterns in the chain table (with the fused op that
replaces them) in every format and in the app's table, and the causes they support."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from doctor import diagnose
from doctor.render import render
from webapp.views import chain_table

TRANSFORMER = Path(__file__).parent / "fixtures" / "transformer"


@cache
def report(name: str):
    return diagnose(None, None, TRANSFORMER / f"{name}.mindir", isolate=False)


def test_chain_summary_names_the_fused_op_of_each_pattern() -> None:
    data = json.loads(render(report("llama_decoder_eval"), "json"))
    by_pattern = {row["pattern"]: row for row in data["graph"]["chains"]["by_pattern"]}
    assert {p: r["replaced_by"] for p, r in by_pattern.items()} == {
        "rms-norm": "RmsNorm",
        "rotary": "RotaryPositionEmbedding",
        "attention": "FlashAttentionScore",
        "silu": "SiLU",
    }
    assert all(item["replaced_by"] for item in data["graph"]["chains"]["items"])


def test_linear_chains_carry_no_replacement_key() -> None:
    data = json.loads(render(report("gelu_mlp"), "json"))
    rows = {row["pattern"]: row for row in data["graph"]["chains"]["by_pattern"]}
    assert "replaced_by" not in rows["matmul-biasadd"] and rows["fast-gelu"]["replaced_by"] == "FastGelu"


def test_markdown_html_and_app_tables_show_the_replacement() -> None:
    r = report("llama_decoder_kvcache")
    assert "| `attention` → `IncreFlashAttention` | 1 | 1 | 0 |" in render(r, "md")
    assert "attention → IncreFlashAttention" in render(r, "html")
    assert "attention → IncreFlashAttention" in list(chain_table(r).frame.iloc[:, 1])  # the pattern column


def test_mindir_alone_ranks_the_transformer_causes() -> None:
    ids = [c.id for c in report("llama_decoder_eval").causes]
    assert {"attention-not-fused", "norm-not-fused", "activation-decomposed"} <= set(ids)
    assert "fusion-missing" not in ids  # the patterns are not linear fusion chains
    fused = [c.id for c in report("fused_decoder").causes]
    assert not {"attention-not-fused", "norm-not-fused", "activation-decomposed"} & set(fused)
