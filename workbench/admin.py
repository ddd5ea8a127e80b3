from django.contrib import admin

from .models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "done", "total", "created_by", "created_at"]
    list_filter = ["kind", "status"]
    readonly_fields = [f.name for f in Job._meta.fields]
