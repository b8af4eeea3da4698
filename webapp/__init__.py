"""The web app's parts that are not the facade: result views, upload bookkeeping (Gradio's upload cache),
report download files, bundled examples, the help and rules tabs, and the outputs tab.

`app.py` wires these to Gradio; analysis never happens here, it is asked of the facade (`doctor`).
"""
