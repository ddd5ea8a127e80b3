from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import api, metrics, tokens, views

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("metrics", metrics.metrics, name="metrics"),
    path("account/tokens/", tokens.tokens_page, name="tokens"),
    path("account/tokens/<int:pk>/revoke/", tokens.revoke_token, name="token-revoke"),
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.job_cancel, name="job-cancel"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/tokens/", tokens.ApiTokenList.as_view(), name="api-tokens"),
    path("api/tokens/<int:pk>/", tokens.ApiTokenDetail.as_view(), name="api-token"),
    path("api/jobs/", api.JobList.as_view(), name="api-jobs"),
    path("api/jobs/<int:pk>/", api.JobDetail.as_view(), name="api-job"),
    path("api/jobs/<int:pk>/cancel/", api.JobCancel.as_view(), name="api-job-cancel"),
    path("api/", include("coding.api_urls")),
    path("", include("coding.urls")),
]
