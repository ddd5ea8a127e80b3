from .code import code_item, code_next, code_previous, save_draft_view, skip_item
from .queue import queue_page
from .studies import codebook_detail, coding_list, home, study_detail, study_settings

__all__ = [
    "code_item", "code_next", "code_previous", "codebook_detail", "coding_list", "home",
    "queue_page", "save_draft_view", "skip_item", "study_detail", "study_settings",
]
