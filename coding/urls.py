"""The pages' routes: each capability's views, found in its own package."""

from django.contrib.auth import views as auth_views
from django.urls import path

from coding.accounts import languages
from coding.accounts import views as account
from coding.adjudication import views as review
from coding.agreement import views as agreement
from coding.catalog.views import edit as catalog_edit
from coding.catalog.views import landings as catalog
from coding.codebooks.views import editor as codebook_edit
from coding.codebooks.views import files as codebook_files
from coding.codebooks.views import pages as codebook_pages
from coding.export import views as export
from coding.inclusion import views as inclusion
from coding.items import views as items
from coding.labeling.views import calibration, code, codings, imports, queue
from coding.model_raters import views as model_raters
from coding.raters import views as raters
from coding.screening import views as screening
from coding.studies.views import backup, creators, members
from coding.studies.views import setup as study_setup
from coding.studies.views import studies

# Django's password forms answer PUT as POST: these pages take only what a browser sends.
FORM = ["get", "head", "post"]

urlpatterns = [
    path("", studies.home, name="home"),
    path("account/", account.account_page, name="account"),
    path("account/password/", auth_views.PasswordChangeView.as_view(http_method_names=FORM),
         name="password_change"),
    path("account/password/done/", auth_views.PasswordChangeDoneView.as_view(),
         name="password_change_done"),
    path("password_reset/", account.PasswordResetView.as_view(http_method_names=FORM),
         name="password_reset"),
    path("password_reset/done/", auth_views.PasswordResetDoneView.as_view(),
         name="password_reset_done"),
    path("reset/<str:uidb64>/<str:token>/",
         auth_views.PasswordResetConfirmView.as_view(http_method_names=FORM),
         name="password_reset_confirm"),
    path("reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    path("staff/creators/", creators.creators_page, name="creators"),
    path("language/", languages.choose_language, name="set-language"),
    path("language/original/", languages.choose_original, name="show-original"),
    # Ahead of studies/<slug>/, which would take "new" for a slug (never given to a study).
    path("studies/new/", study_setup.study_new, name="study-new"),
    path("studies/<slug:slug>/", studies.study_detail, name="study-detail"),
    path("studies/<slug:slug>/settings/", studies.study_settings, name="study-settings"),
    path("studies/<slug:slug>/queue/", queue.queue_page, name="queue"),
    path("studies/<slug:slug>/codings/", codings.coding_list, name="coding-list"),
    path("studies/<slug:slug>/items/", items.item_list, name="items"),
    path("studies/<slug:slug>/screening-round/", screening.screening_page,
         name="screening-round"),
    path("studies/<slug:slug>/items/<int:item_id>/", items.item_page, name="item-page"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/", codebook_pages.codebook_detail,
         name="codebook-detail"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/",
         codebook_pages.codebook_detail, name="codebook-version"),
    path("studies/<slug:slug>/code/", code.code_next, name="code-next"),
    path("studies/<slug:slug>/code/previous/", code.code_previous, name="code-previous"),
    path("studies/<slug:slug>/code/<int:pk>/", code.code_item, name="code-item"),
    path("studies/<slug:slug>/code/<int:pk>/draft/", code.save_draft_view, name="code-draft"),
    path("studies/<slug:slug>/code/<int:pk>/skip/", code.skip_item, name="code-skip"),
    path("studies/<slug:slug>/review/", review.review_queue, name="review-queue"),
    path("studies/<slug:slug>/review/<int:item_id>/", review.review_item, name="review-item"),
    path("studies/<slug:slug>/feedback/", review.feedback, name="feedback"),
    path("studies/<slug:slug>/export/", export.export_page, name="export"),
    path("studies/<slug:slug>/export/qdpx/", export.export_qdpx, name="export-qdpx"),
    path("studies/<slug:slug>/exports/<int:job_id>/download/", export.export_download,
         name="export-download"),
    path("studies/<slug:slug>/backup/", backup.backup_start, name="backup-start"),
    path("studies/<slug:slug>/backups/<int:backup_id>/download/", backup.backup_download,
         name="backup-download"),
    path("studies/<slug:slug>/agreement/", agreement.agreement_page, name="agreement"),
    path("studies/<slug:slug>/agreement/recompute/", agreement.agreement_recompute,
         name="agreement-recompute"),
    path("studies/<slug:slug>/inclusion/", inclusion.inclusion_page, name="inclusion"),
    path("studies/<slug:slug>/catalog/", catalog.catalog_page, name="catalog"),
    path("studies/<slug:slug>/import/", imports.import_page, name="import"),
    path("studies/<slug:slug>/frameworks/<int:framework_id>/", catalog.framework_page,
         name="framework"),
]

# The study-setup areas keep their own routes beside their views.
for area in (study_setup, codebook_edit, codebook_files, members, calibration, catalog_edit,
             raters, model_raters):
    urlpatterns += area.urlpatterns
