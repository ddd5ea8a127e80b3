"""Editing the method catalog (methods, option names) and frameworks: REST API.

Reading is for whoever may see the catalog (never coders); writing for owners. Every
write goes through coding.catalog.edit, as the page and `manage.py catalog` do. A removal
that would take landings with it answers 409 with what would go, until repeated with
`?confirm=true`.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.catalog import edit as catalog_edit
from coding.catalog.views.edit import access_catalog_editor
from coding.catalog.views.landings import access_catalog
from coding.models import Method, OptionName
from coding.rest.filters import MAX_ID


class OptionNameSerializer(serializers.ModelSerializer):
    framework = serializers.CharField(source="framework.name", read_only=True)

    class Meta:
        model = OptionName
        fields = ["id", "framework_id", "framework", "name"]


class MethodSerializer(serializers.ModelSerializer):
    option_names = OptionNameSerializer(many=True, read_only=True)

    class Meta:
        model = Method
        fields = ["id", "name", "first_public", "source_arxiv_id", "failure_addressed",
                  "position", "option_names"]


class MethodInput(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True, help_text="Unique in the study.")
    first_public = serializers.CharField(required=False, allow_blank=True,
                                         help_text="YYYY, YYYY-MM or YYYY-MM-DD.")
    source_arxiv_id = serializers.CharField(required=False, allow_blank=True,
                                            help_text="e.g. 2503.14476 (no version); may be empty.")
    failure_addressed = serializers.CharField(required=False, allow_blank=True)
    position = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000,
                                        help_text="Methods are listed by this; a new one "
                                                  "goes last when it is left out.")


class FrameworkSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(required=False, allow_blank=True, help_text="Unique in the study.")
    repository = serializers.CharField(required=False, allow_blank=True,
                                       help_text="owner/name on GitHub.")
    main_branch = serializers.CharField(required=False, allow_blank=True,
                                        help_text="The branch scanned; `main` when empty.")


class OptionNameInput(serializers.Serializer):
    framework = serializers.IntegerField(min_value=1, max_value=MAX_ID,
                                         help_text="A framework id of this study.")
    name = serializers.CharField(help_text="The option's name in that framework's code.")


class ConfirmQuery(serializers.Serializer):
    confirm = serializers.BooleanField(required=False, default=False)


class NeedsConfirmationSerializer(serializers.Serializer):
    detail = serializers.CharField()
    removes = serializers.ListField(child=serializers.CharField(),
                                    help_text="What would be removed with it, one line each.")


CONFIRM = OpenApiParameter("confirm", bool, required=False,
                           description="Also remove the landings this takes away.")
REMOVAL = {204: None, 409: OpenApiResponse(NeedsConfirmationSerializer, description=(
    "Landings would go with it: nothing removed; repeat with ?confirm=true."))}


def write(function, *args, **kwargs):
    """Call a catalog_edit writer, turning its located errors into a 400 and a needed
    confirmation into a 409."""
    try:
        return function(*args, **kwargs)
    except DjangoValidationError as error:
        raise ValidationError(error.message_dict) from None
    except catalog_edit.NeedsConfirmation as needed:
        return Response({"detail": _("This also removes landings; repeat with ?confirm=true."),
                         "removes": needed.removes}, status=status.HTTP_409_CONFLICT)


def confirmed(request):
    query = ConfirmQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data["confirm"]


def removed(result):
    return result if isinstance(result, Response) else Response(status=status.HTTP_204_NO_CONTENT)


def valid(serializer_class, request, partial=False):
    data = serializer_class(data=request.data, partial=partial)
    data.is_valid(raise_exception=True)
    return data.validated_data


def study_methods(study):
    return (Method.objects.filter(study=study)
            .prefetch_related("option_names__framework").order_by("position", "name"))


class MethodList(APIView):
    @extend_schema(responses={200: MethodSerializer(many=True)})
    def get(self, request, slug):
        """The study's methods with their option names (not for coders)."""
        study = access_catalog(request.user, slug)
        return Response(MethodSerializer(study_methods(study), many=True).data)

    @extend_schema(request=MethodInput, responses={201: MethodSerializer})
    def post(self, request, slug):
        """Add a method (owners); its option names are added apart."""
        study = access_catalog_editor(request.user, slug)
        method = write(catalog_edit.save_method, study, request.user, valid(MethodInput, request))
        return Response(MethodSerializer(method).data, status=status.HTTP_201_CREATED)


class MethodDetail(APIView):
    def method(self, request, slug, method_id, edit=False):
        study = (access_catalog_editor if edit else access_catalog)(request.user, slug)
        return get_object_or_404(study_methods(study), pk=method_id)

    @extend_schema(responses={200: MethodSerializer})
    def get(self, request, slug, method_id):
        """One method with its option names."""
        return Response(MethodSerializer(self.method(request, slug, method_id)).data)

    @extend_schema(request=MethodInput, responses={200: MethodSerializer})
    def patch(self, request, slug, method_id):
        """Change a method's fields (owners); fields left out keep their values."""
        method = self.method(request, slug, method_id, edit=True)
        write(catalog_edit.save_method, method.study, request.user,
              valid(MethodInput, request, partial=True), method)
        return Response(MethodSerializer(self.method(request, slug, method_id)).data)

    @extend_schema(parameters=[CONFIRM], responses=REMOVAL)
    def delete(self, request, slug, method_id):
        """Remove a method with its option names (owners); with landings, only confirmed."""
        method = self.method(request, slug, method_id, edit=True)
        return removed(write(catalog_edit.remove_method, method, request.user, confirmed(request)))


class OptionNameCreate(APIView):
    @extend_schema(request=OptionNameInput, responses={201: OptionNameSerializer})
    def post(self, request, slug, method_id):
        """Add an option name for the method in one framework (owners). Several per method
        and framework are allowed (an old and a renamed option); the framework's next scan
        searches a new name through its whole history."""
        study = access_catalog_editor(request.user, slug)
        method = get_object_or_404(study.methods, pk=method_id)
        data = valid(OptionNameInput, request)
        framework = study.frameworks.filter(pk=data["framework"]).first()
        if framework is None:
            raise ValidationError({"framework": [_("no such framework in this study")]})
        option = write(catalog_edit.add_option_name, method, framework, data["name"], request.user)
        return Response(OptionNameSerializer(option).data, status=status.HTTP_201_CREATED)


class OptionNameDetail(APIView):
    @extend_schema(parameters=[CONFIRM], responses=REMOVAL)
    def delete(self, request, slug, option_name_id):
        """Remove an option name (owners); the landing found with it goes only if confirmed."""
        study = access_catalog_editor(request.user, slug)
        option = get_object_or_404(OptionName.objects.select_related("method__study", "framework"),
                                   pk=option_name_id, method__study=study)
        return removed(write(catalog_edit.remove_option_name, option, request.user,
                             confirmed(request)))


class FrameworkList(APIView):
    @extend_schema(responses={200: FrameworkSerializer(many=True)})
    def get(self, request, slug):
        """The study's frameworks (not for coders)."""
        study = access_catalog(request.user, slug)
        return Response(FrameworkSerializer(study.frameworks.order_by("name"), many=True).data)

    @extend_schema(request=FrameworkSerializer, responses={201: FrameworkSerializer},
                   operation_id="studies_frameworks_add")
    def post(self, request, slug):
        """Add a framework (owners)."""
        study = access_catalog_editor(request.user, slug)
        framework = write(catalog_edit.save_framework, study, request.user,
                          valid(FrameworkSerializer, request))
        return Response(FrameworkSerializer(framework).data, status=status.HTTP_201_CREATED)


# PATCH and DELETE of api/studies/<slug>/frameworks/<framework_id>/ are in
# coding/catalog/api/landings.py FrameworkDetail, beside its GET and POST (one class per path).

urlpatterns = [
    path("studies/<slug:slug>/methods/", MethodList.as_view(), name="api-methods"),
    path("studies/<slug:slug>/methods/<int:method_id>/", MethodDetail.as_view(),
         name="api-method"),
    path("studies/<slug:slug>/methods/<int:method_id>/option-names/", OptionNameCreate.as_view(),
         name="api-method-option-names"),
    path("studies/<slug:slug>/option-names/<int:option_name_id>/", OptionNameDetail.as_view(),
         name="api-option-name"),
    path("studies/<slug:slug>/frameworks/", FrameworkList.as_view(), name="api-frameworks"),
]
