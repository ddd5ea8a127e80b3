from .catalog import Framework, Method, OptionName
from .codebooks import Codebook, CodebookVersion, Option, Question
from .codings import Assignment, Coding
from .decisions import Decision
from .items import Item
from .reliability import AgreementSnapshot
from .studies import Membership, Role, Study

__all__ = [
    "AgreementSnapshot", "Assignment", "Codebook", "Framework", "Method", "OptionName", "CodebookVersion", "Coding", "Decision", "Item",
    "Membership", "Option", "Question", "Role", "Study",
]
