"""Helpers the tests share: plain modules, never tests (pytest collects nothing here). conftest.py
exposes the fixtures; test modules import these helpers, never each other."""
