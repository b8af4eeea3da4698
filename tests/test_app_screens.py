"""Issue 31 without a browser: what the app and its reports say to a Chinese reader, to support staff
(the triage list) and after a fix; the browser half is tests/test_browser_screens.py."""

from __future__ import annotations

import os

import pytest

from core import InputError
from doctor.problems import problems_markdown
from graph.loader import decode
from tests.support.language import english_sentences


def test_a_random_bytes_model_error_names_no_internal_type_and_the_inspect_button() -> None:
    """No decoder English, no `perf_doctor.mind_ir.ModelProto`; the Inspect tab says 检查, not 诊断."""
    with pytest.raises(InputError) as caught:
        decode(os.urandom(256), "random.mindir")
    english = problems_markdown(caught.value, "en", "inspect")
    assert "ModelProto" not in english and "Wire format" not in english and "mind_ir" not in english
    assert "press Inspect again" in english
    chinese = problems_markdown(caught.value, "zh", "inspect")
    assert "“检查”" in chinese and "“诊断”" not in chinese
    assert english_sentences(chinese.replace("mindspore.export(..., file\\_format='MINDIR')", "")) == []
