from django.urls import path
from rest_framework.routers import SimpleRouter

from coding.accounts import api as languages
from coding.adjudication import api as review
from coding.agreement import api as agreement
from coding.catalog.api import edit as catalog_edit
from coding.catalog.api import landings as catalog
from coding.codebooks.api import editor as codebook_edit
from coding.codebooks.api import files as codebook_files
from coding.export import api as export
from coding.inclusion import api as inclusion
from coding.items import api as items
from coding.labeling.api import calibration, coder, imports
from coding.model_raters import api as model_raters
from coding.raters import api as raters
from coding.screening import api as screening
from coding.studies.api import backup
from coding.studies.api import lists as views
from coding.studies.api import members
from coding.studies.api import setup as study_setup

router = SimpleRouter()
router.register("studies", views.StudyViewSet, basename="study")

urlpatterns = router.urls + [
    path("account/language/", languages.MyLanguage.as_view(), name="api-my-language"),
    path("studies/<slug:slug>/codebooks/", views.CodebookList.as_view(), name="api-codebooks"),
    path("studies/<slug:slug>/items/", items.ItemList.as_view(), name="api-items"),
    path("studies/<slug:slug>/items/actions/", items.ItemActions.as_view(),
         name="api-item-actions"),
    path("studies/<slug:slug>/items/<int:item_id>/", items.ItemDetail.as_view(),
         name="api-item"),
    path("studies/<slug:slug>/screening-round/", screening.Screening.as_view(),
         name="api-screening-round"),
    path("studies/<slug:slug>/screening-round/stop/", screening.ScreeningStop.as_view(),
         name="api-screening-round-stop"),
    path("studies/<slug:slug>/screening-round/resume/", screening.ScreeningResume.as_view(),
         name="api-screening-round-resume"),
    path("studies/<slug:slug>/screening-round/replay/", screening.ScreeningReplay.as_view(),
         name="api-screening-round-replay"),
    path("studies/<slug:slug>/screening-round/priors/", screening.ScreeningPriors.as_view(),
         name="api-screening-round-priors"),
    path("studies/<slug:slug>/assignments/", views.AssignmentList.as_view(),
         name="api-assignments"),
    path("studies/<slug:slug>/codings/", views.CodingList.as_view(), name="api-codings"),
    path("studies/<slug:slug>/next/", coder.NextItem.as_view(), name="api-next"),
    path("studies/<slug:slug>/assignments/<int:pk>/", coder.AssignmentDetail.as_view(),
         name="api-assignment"),
    path("studies/<slug:slug>/assignments/<int:pk>/submit/", coder.Submit.as_view(),
         name="api-submit"),
    path("studies/<slug:slug>/assignments/<int:pk>/skip/", coder.Skip.as_view(), name="api-skip"),
    path("studies/<slug:slug>/assignments/<int:pk>/draft/", coder.Draft.as_view(),
         name="api-draft"),
    path("studies/<slug:slug>/queue/", coder.QueueSummary.as_view(), name="api-queue"),
    path("studies/<slug:slug>/reliability-sample/", coder.ReliabilitySample.as_view(),
         name="api-reliability-sample"),
    path("studies/<slug:slug>/disagreements/", review.DisagreementList.as_view(),
         name="api-disagreements"),
    path("studies/<slug:slug>/items/<int:item_id>/review/", review.ItemReview.as_view(),
         name="api-item-review"),
    path("studies/<slug:slug>/decisions/", review.DecisionList.as_view(), name="api-decisions"),
    path("studies/<slug:slug>/feedback/", review.Feedback.as_view(), name="api-feedback"),
    path("studies/<slug:slug>/exports/", export.ExportStart.as_view(), name="api-exports"),
    path("studies/<slug:slug>/exports/qdpx/", export.QdpxExportStart.as_view(),
         name="api-export-qdpx"),
    path("studies/<slug:slug>/exports/<int:job_id>/download/", export.ExportDownload.as_view(),
         name="api-export-download"),
    path("studies/<slug:slug>/backups/", backup.BackupStart.as_view(), name="api-backups"),
    path("studies/<slug:slug>/backups/<int:backup_id>/download/",
         backup.BackupDownload.as_view(), name="api-backup-download"),
    path("studies/<slug:slug>/agreement/", agreement.AgreementReport.as_view(),
         name="api-agreement"),
    path("studies/<slug:slug>/agreement/history/", agreement.AgreementHistory.as_view(),
         name="api-agreement-history"),
    path("studies/<slug:slug>/agreement/recompute/", agreement.AgreementRecompute.as_view(),
         name="api-agreement-recompute"),
    path("studies/<slug:slug>/inclusion/", inclusion.InclusionAnalysis.as_view(),
         name="api-inclusion"),
    path("studies/<slug:slug>/inclusion/lists/", inclusion.InclusionLists.as_view(),
         name="api-inclusion-lists"),
    path("studies/<slug:slug>/imports/", imports.ImportStart.as_view(), name="api-imports"),
    path("studies/<slug:slug>/screening/", imports.ScreeningFlow.as_view(), name="api-screening"),
    path("studies/<slug:slug>/catalog/", catalog.Catalog.as_view(), name="api-catalog"),
    path("studies/<slug:slug>/frameworks/<int:framework_id>/", catalog.FrameworkDetail.as_view(),
         name="api-framework"),
]

for area in (study_setup, codebook_edit, codebook_files, members, calibration, catalog_edit,
             raters, model_raters):
    urlpatterns += area.urlpatterns
