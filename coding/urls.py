from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("studies/<slug:slug>/", views.study_detail, name="study-detail"),
    path("studies/<slug:slug>/settings/", views.study_settings, name="study-settings"),
    path("studies/<slug:slug>/codings/", views.coding_list, name="coding-list"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/", views.codebook_detail,
         name="codebook-detail"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/",
         views.codebook_detail, name="codebook-version"),
]
