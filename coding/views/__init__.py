from .agreement import agreement_page, agreement_recompute
from .catalog import catalog_page, framework_page
from .code import code_item, code_next, code_previous, save_draft_view, skip_item
from .export import export_download, export_page
from .imports import import_page
from .queue import queue_page
from .review import feedback, review_item, review_queue
from .studies import codebook_detail, coding_list, home, study_detail, study_settings

__all__ = [
    "agreement_page", "agreement_recompute", "catalog_page", "code_item", "code_next",
    "code_previous", "codebook_detail", "coding_list", "export_download", "export_page",
    "feedback", "framework_page", "home", "import_page", "queue_page", "review_item",
    "review_queue", "save_draft_view", "skip_item", "study_detail", "study_settings",
]
