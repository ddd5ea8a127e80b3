from django.urls import path

from . import languages, views
from .views import backup
from .views import inclusion
from .views import (calibration, catalog_edit, codebook_edit, codebook_files, members, raters,
                    study_setup)

urlpatterns = [
    path("", views.home, name="home"),
    path("language/", languages.choose_language, name="set-language"),
    path("language/original/", languages.choose_original, name="show-original"),
    # Ahead of studies/<slug>/, which would take "new" for a slug (never given to a study).
    path("studies/new/", study_setup.study_new, name="study-new"),
    path("studies/<slug:slug>/", views.study_detail, name="study-detail"),
    path("studies/<slug:slug>/settings/", views.study_settings, name="study-settings"),
    path("studies/<slug:slug>/queue/", views.queue_page, name="queue"),
    path("studies/<slug:slug>/codings/", views.coding_list, name="coding-list"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/", views.codebook_detail,
         name="codebook-detail"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/",
         views.codebook_detail, name="codebook-version"),
    path("studies/<slug:slug>/code/", views.code_next, name="code-next"),
    path("studies/<slug:slug>/code/previous/", views.code_previous, name="code-previous"),
    path("studies/<slug:slug>/code/<int:pk>/", views.code_item, name="code-item"),
    path("studies/<slug:slug>/code/<int:pk>/draft/", views.save_draft_view, name="code-draft"),
    path("studies/<slug:slug>/code/<int:pk>/skip/", views.skip_item, name="code-skip"),
    path("studies/<slug:slug>/review/", views.review_queue, name="review-queue"),
    path("studies/<slug:slug>/review/<int:item_id>/", views.review_item, name="review-item"),
    path("studies/<slug:slug>/feedback/", views.feedback, name="feedback"),
    path("studies/<slug:slug>/export/", views.export_page, name="export"),
    path("studies/<slug:slug>/exports/<int:job_id>/download/", views.export_download,
         name="export-download"),
    path("studies/<slug:slug>/backup/", backup.backup_start, name="backup-start"),
    path("studies/<slug:slug>/backups/<int:backup_id>/download/", backup.backup_download,
         name="backup-download"),
    path("studies/<slug:slug>/agreement/", views.agreement_page, name="agreement"),
    path("studies/<slug:slug>/agreement/recompute/", views.agreement_recompute,
         name="agreement-recompute"),
    path("studies/<slug:slug>/inclusion/", inclusion.inclusion_page, name="inclusion"),
    path("studies/<slug:slug>/catalog/", views.catalog_page, name="catalog"),
    path("studies/<slug:slug>/import/", views.import_page, name="import"),
    path("studies/<slug:slug>/frameworks/<int:framework_id>/", views.framework_page,
         name="framework"),
]

# The study-setup areas keep their own routes beside their views.
for area in (study_setup, codebook_edit, codebook_files, members, calibration, catalog_edit,
             raters):
    urlpatterns += area.urlpatterns
