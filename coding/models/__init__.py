from coding.models.audit import AuditEntry
from coding.models.catalog import (
    Framework, FrameworkScan, InclusionList, Landing, ListedInclusion, Method, MethodLink,
    OptionName,
)
from coding.models.codebooks import Codebook, CodebookVersion, Option, Question
from coding.models.codings import Assignment, Coding, Exposure, OthersWorkRead
from coding.models.decisions import Decision
from coding.models.disagreements import StoredDisagreement
from coding.models.imports import ImportRun
from coding.models.items import Item, ItemChange
from coding.models.preferences import LanguagePreference
from coding.models.raters import (
    AssistedRound, Comparison, ModelCall, ModelRun, ModelSettings, Rater, RaterCoding,
)
from coding.models.reliability import AgreementSnapshot
from coding.models.screening import ScreeningRanking
from coding.models.studies import Invite, Membership, Role, Study
from coding.models.tallies import Tally

__all__ = [
    "AgreementSnapshot", "AssistedRound", "Assignment", "AuditEntry", "Codebook", "CodebookVersion", "Coding", "Comparison",
    "Decision", "Exposure", "OthersWorkRead",
    "Framework", "FrameworkScan", "ImportRun", "InclusionList", "ListedInclusion", "Invite", "Item", "ItemChange", "LanguagePreference", "Landing", "Membership", "Method",
    "MethodLink", "ModelCall", "ModelRun", "ModelSettings", "Option", "OptionName", "Question", "Rater", "RaterCoding", "Role", "ScreeningRanking", "StoredDisagreement", "Study",
    "Tally",
]
