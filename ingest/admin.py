from django.contrib import admin

from .models import CachedResponse, Document, Post, Snapshot


class PostInline(admin.TabularInline):
    model = Post
    extra = 0
    fields = ["position", "kind", "author", "author_role", "created", "body"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "source", "title", "published"]
    list_filter = ["kind", "source"]
    search_fields = ["key", "title"]
    date_hierarchy = "published"
    inlines = [PostInline]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["document", "number", "taken_at", "sha256"]
    search_fields = ["document__key"]
    readonly_fields = ["document", "number", "content", "sha256", "taken_at"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(CachedResponse)
class CachedResponseAdmin(admin.ModelAdmin):
    """Conditional-request cache of the live clients: inspect or delete to force a re-fetch."""

    list_display = ["url", "etag", "fetched_at"]
    search_fields = ["url"]
    readonly_fields = ["key", "url", "etag", "last_modified", "next_url", "body", "fetched_at"]
