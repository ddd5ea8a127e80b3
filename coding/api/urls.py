from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("studies", views.StudyViewSet, basename="study")

urlpatterns = router.urls + [
    path("studies/<slug:slug>/codebooks/", views.CodebookList.as_view(), name="api-codebooks"),
    path("studies/<slug:slug>/assignments/", views.AssignmentList.as_view(),
         name="api-assignments"),
    path("studies/<slug:slug>/codings/", views.CodingList.as_view(), name="api-codings"),
]
