"""The fix code's comments in Chinese (issue 31 point 4): a zh report shows every rule's fix with the same
code and its comments from the rule's `fix.comments.zh`; the code that runs stays the English one."""

from __future__ import annotations

import ast

import pytest

from doctor import diagnose
from doctor.render import render
from knowledge import load_rules
from knowledge.schema import code_comments
from tests.support.inputs import CPU
from tests.support.language import CJK, english_sentences
from webapp.rules_view import rules_markdown

RULES = load_rules()


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_the_zh_fix_is_the_same_code_with_chinese_comments(rule):
    code, zh = rule.fix.code, rule.fix.code_in("zh")
    assert ast.dump(ast.parse(zh)) == ast.dump(ast.parse(code))  # comments are no part of the tree
    assert rule.fix.code_in("en") == code
    english, chinese = code_comments(code), code_comments(zh)
    assert [(row, column) for row, column, _ in chinese] == [(row, column) for row, column, _ in english]
    for _, _, comment in chinese:
        assert CJK.search(comment) and english_sentences(comment) == [], comment
    assert [line for line in zh.splitlines() if "#" not in line] == [
        line for line in code.splitlines() if "#" not in line
    ]


def test_99_english_comment_lines_have_their_chinese():
    assert sum(len(code_comments(rule.fix.code)) for rule in RULES) == 99
    assert sum(len(rule.fix.comments_zh) for rule in RULES) == 99


@pytest.mark.slow
def test_a_zh_report_shows_the_fix_with_chinese_comments_and_the_english_one_english():
    args = (CPU / "train_fp32_graph", CPU / "infer_fp32_pynative")
    zh, en = diagnose(*args, isolate=False, lang="zh"), diagnose(*args, isolate=False)
    said = "out = net(x)  # 第一次调用时编译；之后的调用运行编译好的图"
    assert said in render(zh, "md") and said in render(zh, "html")
    assert "# the first call compiles" in render(en, "md")
    assert "# the first call compiles" in render(zh.in_lang("en"), "md")
    for cause in zh.document.causes:
        for _, _, comment in code_comments(cause.fix.code):
            assert CJK.search(comment), (cause.id, comment)


def test_the_rules_tab_in_zh_shows_chinese_comments():
    page = rules_markdown("execution-mode-mismatch", "zh")
    assert "# 或用 @ms.jit 装饰预测函数" in page and "# or decorate" not in page
    assert "# or decorate the predict function with @ms.jit" in rules_markdown(
        "execution-mode-mismatch", "en"
    )
    assert rules_markdown("装饰预测函数", "zh").count("execution-mode-mismatch") >= 1
