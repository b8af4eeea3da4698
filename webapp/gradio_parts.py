"""The few Gradio internals the app needs, behind small functions: the upload cache's folder and its
content-addressed copies, the public URL of a request, and file preprocessing without Gradio's stray
temporary file. Only this module reaches past Gradio's public API, so a Gradio upgrade is checked here.
"""

from __future__ import annotations

from typing import Any, TypeVar

import gradio as gr
from gradio import route_utils
from gradio.data_classes import FileData
from gradio.processing_utils import save_file_to_cache
from gradio.utils import NamedString, get_upload_folder
from gradio_client import utils as client_utils

Upload = TypeVar("Upload", gr.File, gr.UploadButton)


def upload_folder() -> str:
    """Gradio's upload cache folder (GRADIO_TEMP_DIR), where uploads and example copies are stored."""
    return get_upload_folder()


def cached_copy(path: str) -> str:
    """The content-addressed copy of a file in the upload cache, made as Gradio makes it for examples."""
    return save_file_to_cache(path, get_upload_folder())


def base_url(request: gr.Request | None) -> str | None:
    """The app's public URL as the browser reached it (proxy headers honoured), for case links."""
    inner = getattr(request, "request", None)
    if inner is None:
        return None
    try:
        return route_utils.get_root_url(
            inner, route_path=inner.url.path, root_path=inner.scope.get("root_path")
        )
    except (AttributeError, KeyError, ValueError):
        return None


def _upload_path(component: gr.File | gr.UploadButton, f: FileData) -> NamedString | bytes | None:
    """An uploaded file as gr.File and gr.UploadButton pass it on as a path, minus Gradio 6's stray file:
    their own preprocessing also creates an empty NamedTemporaryFile in the upload cache for every file
    and never uses it (one 0-byte `tmp*` per upload, never removed). None: not a path component."""
    if component.type != "filepath":
        return None
    if component.file_types and not client_utils.is_valid_file(f.path, component.file_types):
        formats = component.file_types
        raise gr.Error(f"Invalid file type. Please upload a file that is one of these formats: {formats}")
    return NamedString(f.path)


def without_stray_file(component: Upload) -> Upload:
    """The component with its file preprocessing replaced by _upload_path (on the instance: a subclass
    of a Gradio component makes Gradio write a .pyi stub next to this file at import)."""
    original = component._process_single_file

    def process(f: FileData) -> Any:
        path = _upload_path(component, f)
        return original(f) if path is None else path

    component._process_single_file = process
    return component
