from django.contrib import admin

from coding.models import (
    AgreementSnapshot, Assignment, Codebook, CodebookVersion, Coding, Decision, Framework,
    FrameworkScan, ImportRun, Item, Landing, Membership, Method, MethodLink, Option, OptionName,
    Question, Study,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "overlap", "created_at", "deleted_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


class VersionInline(admin.TabularInline):
    model = CodebookVersion
    extra = 0
    fields = ["number", "status", "note", "published_at"]
    readonly_fields = fields
    show_change_link = True


@admin.register(Codebook)
class CodebookAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "applies_to"]
    list_filter = ["study", "applies_to"]
    inlines = [VersionInline]


class QuestionInline(admin.StackedInline):
    model = Question
    extra = 0
    show_change_link = True
    fields = ["position", "key", "text", "kind", "required", "level", "show_if", "definition"]


@admin.register(CodebookVersion)
class CodebookVersionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "status", "created_at", "published_at"]
    list_filter = ["status", "codebook__study"]
    inlines = [QuestionInline]

    def get_readonly_fields(self, request, obj=None):
        # A published version is immutable (design brief, rule 5).
        if obj and obj.is_published:
            return ["codebook", "number", "status", "note", "published_at"]
        return ["published_at"]

    def has_delete_permission(self, request, obj=None):
        return not (obj and obj.is_published)


class OptionInline(admin.TabularInline):
    model = Option
    extra = 0


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["key", "version", "kind", "required", "level"]
    list_filter = ["kind", "version__codebook"]
    inlines = [OptionInline]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["document", "study", "round", "priority", "added_at"]
    list_filter = ["study", "round", "document__kind"]
    search_fields = ["document__key", "document__title"]
    raw_id_fields = ["document", "snapshot"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "coder", "status", "leased_until", "finished_at"]
    list_filter = ["status", "item__study"]
    raw_id_fields = ["item"]


@admin.register(Coding)
class CodingAdmin(admin.ModelAdmin):
    list_display = ["assignment", "revision", "phase", "codebook_version", "submitted_at"]
    list_filter = ["phase", "assignment__item__study"]

    # Revisions are a record; they are never edited or deleted (rule 4).
    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Decision)
class DecisionAdmin(CodingAdmin):
    list_display = ["item", "question_key", "revision", "value", "method", "decided_by"]
    list_filter = ["method", "item__study"]


class OptionNameInline(admin.TabularInline):
    model = OptionName
    extra = 0


@admin.register(Method)
class MethodAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "first_public", "source_arxiv_id"]
    list_filter = ["study"]
    inlines = [OptionNameInline]


@admin.register(Framework)
class FrameworkAdmin(admin.ModelAdmin):
    list_display = ["name", "repository", "study"]
    list_filter = ["study"]


@admin.register(Landing)
class LandingAdmin(admin.ModelAdmin):
    list_display = ["method", "framework", "option_name", "committed_at", "pull_request",
                    "upper_bound"]
    list_filter = ["framework", "upper_bound"]


@admin.register(MethodLink)
class MethodLinkAdmin(admin.ModelAdmin):
    list_display = ["method", "document", "kind", "by"]
    list_filter = ["kind", "by"]
    raw_id_fields = ["document"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by the system: read in the admin, never edited there."""

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(FrameworkScan)
class FrameworkScanAdmin(ReadOnlyAdmin):
    list_display = ["framework", "branch", "last_commit", "scanned_at"]


@admin.register(ImportRun)
class ImportRunAdmin(ReadOnlyAdmin):
    list_display = ["study", "created_at", "finished_at"]
    list_filter = ["study"]


@admin.register(AgreementSnapshot)
class AgreementSnapshotAdmin(ReadOnlyAdmin):
    list_display = ["study", "round", "created_at", "n_codings"]
    list_filter = ["study", "round"]
