"""The web app's parts that are not the facade: result views, upload bookkeeping (Gradio's upload cache),
report download files, bundled examples, the help and rules tabs, and the outputs tab.

`app.py` wires these to Gradio; analysis never happens here, it is asked of the facade (`doctor`).
Public API (what `app.py` imports, and only from here): the presenter (`present`, `api_result`,
`Results`, the tabs' output names), the views it builds on, uploads, examples, help, rules, the outputs
tab, and the Gradio internals the app needs behind small functions (`webapp.gradio_parts`).
"""

from webapp.examples import MODEL, MODEL_LABEL_KEY, PairExample, available_pairs
from webapp.gradio_parts import base_url, cached_copy, upload_folder, without_stray_file
from webapp.help import collect_help
from webapp.locale import PageLocale
from webapp.outputs_tab import outputs_api, outputs_tab
from webapp.present import (
    COMPARE_OUTPUTS,
    COMPARE_PLOTS,
    FILES,
    INSPECT_OUTPUTS,
    NO_CASE,
    Results,
    api_result,
    cleared_values,
    dataframe,
    present,
    script_button,
)
from webapp.rules_view import rules_markdown
from webapp.uploads import UploadLedger, UploadRecorder, given_paths
from webapp.views import baseline_slot, rank_choices, swapped_choice

__all__ = [
    "COMPARE_OUTPUTS",
    "COMPARE_PLOTS",
    "FILES",
    "INSPECT_OUTPUTS",
    "MODEL",
    "MODEL_LABEL_KEY",
    "NO_CASE",
    "PageLocale",
    "PairExample",
    "Results",
    "UploadLedger",
    "UploadRecorder",
    "api_result",
    "available_pairs",
    "base_url",
    "baseline_slot",
    "cached_copy",
    "cleared_values",
    "collect_help",
    "dataframe",
    "given_paths",
    "outputs_api",
    "outputs_tab",
    "present",
    "rank_choices",
    "rules_markdown",
    "script_button",
    "swapped_choice",
    "upload_folder",
    "without_stray_file",
]
