from .audit import AuditEntry
from .catalog import Framework, FrameworkScan, Landing, Method, MethodLink, OptionName
from .codebooks import Codebook, CodebookVersion, Option, Question
from .codings import Assignment, Coding, Exposure
from .decisions import Decision
from .disagreements import StoredDisagreement
from .imports import ImportRun
from .items import Item
from .preferences import LanguagePreference
from .raters import AssistedRound, Comparison, Rater, RaterCoding
from .reliability import AgreementSnapshot
from .studies import Invite, Membership, Role, Study

__all__ = [
    "AgreementSnapshot", "AssistedRound", "Assignment", "AuditEntry", "Codebook", "CodebookVersion", "Coding", "Comparison",
    "Decision", "Exposure",
    "Framework", "FrameworkScan", "ImportRun", "Invite", "Item", "LanguagePreference", "Landing", "Membership", "Method",
    "MethodLink", "Option", "OptionName", "Question", "Rater", "RaterCoding", "Role", "StoredDisagreement", "Study",
]
