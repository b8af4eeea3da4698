"""A display table: a frame and the kind of each column, read by the app's tables and the triage desk."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass
class Table:
    """A display table and the Gradio datatype of each of its columns ("str" or "number")."""

    frame: pd.DataFrame
    datatype: list[str]
