"""A person's own language (coding.accounts.languages): read and set over the API.

The API itself answers in English whatever is stored; the stored language is the one the
person's pages and mail use."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.accounts import languages


class LanguageSerializer(serializers.Serializer):
    language = serializers.CharField(
        allow_null=True, max_length=16,
        help_text="The language you chose (a code of `choices`), or null: none chosen, pages "
                  "follow the browser. PUT null to forget the choice.")
    effective = serializers.CharField(
        read_only=True, help_text="The language your pages and mail use now: the choice, "
                                  "else the site's default.")
    choices = serializers.ListField(child=serializers.CharField(), read_only=True,
                                    help_text="The languages offered.")


def _answer(user):
    chosen = languages.stored_language(user)
    return Response({"language": chosen, "effective": chosen or settings.LANGUAGE_CODE,
                     "choices": languages.language_codes()})


class MyLanguage(APIView):
    @extend_schema(responses=LanguageSerializer, summary="Your language")
    def get(self, request):
        return _answer(request.user)

    @extend_schema(request=LanguageSerializer, responses=LanguageSerializer,
                   summary="Choose your language",
                   description="Stores the language your pages use in any browser (as the "
                               "switcher does); an unknown code is refused with 400.")
    def put(self, request):
        body = LanguageSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        code = body.validated_data["language"]
        if code is None:
            languages.forget_language(request.user)
        else:
            try:
                languages.remember_language(request.user, code)
            except languages.UnknownLanguage as unknown:
                raise ValidationError({"language": [str(unknown)]}) from None
        return _answer(request.user)
