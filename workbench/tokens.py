"""API tokens for scripts: made and revoked by their owner in the browser, the API or
`manage.py api_token`; authenticated by django-rest-knox (only a digest is stored)."""

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import generics, mixins, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from .models import ApiToken

# Choices offered for how long a new token lives; None never expires.
LIFETIMES = {"7": 7, "30": 30, "90": 90, "365": 365, "never": None}
MAX_TOKENS = 50  # live ones per person; each request checks the tokens sharing its prefix


def create_token(user, name, days=90):
    """A new token for the user; returns (row, key). The key is not stored and not shown again."""
    name = (name or "").strip()
    if not name:
        raise ValueError(_("Give the token a name, so you can tell it apart later."))
    if live_tokens(user).count() >= MAX_TOKENS:
        raise ValueError(_("You have %(max)d live tokens; revoke one you no longer use first.")
                         % {"max": MAX_TOKENS})
    return ApiToken.objects.create(user, expiry=timedelta(days=days) if days else None,
                                   name=name[:100])


def live_tokens(user):
    return ApiToken.objects.filter(user=user).exclude(expiry__lt=timezone.now())


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, label=gettext_lazy("Name"), help_text=gettext_lazy(
        "What uses it, e.g. “export script on lab server”."))
    lifetime = forms.ChoiceField(
        label=gettext_lazy("Expires after"),
        choices=[("7", gettext_lazy("7 days")), ("30", gettext_lazy("30 days")),
                 ("90", gettext_lazy("90 days")), ("365", gettext_lazy("1 year")),
                 ("never", gettext_lazy("Never expires"))], initial="90")


@never_cache  # shows a new token's key once: no cache may keep it
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def tokens_page(request):
    form = TokenForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = create_token(request.user, form.cleaned_data["name"],
                                          LIFETIMES[form.cleaned_data["lifetime"]])
            form = TokenForm()
        except ValueError as error:
            form.add_error(None, str(error))
    return render(request, "account/tokens.html", {
        "form": form, "new_key": new_key, "tokens": live_tokens(request.user),
    })


@login_required
@require_POST
def revoke_token(request, pk):
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token.delete()
    messages.success(request, _("Token “%(name)s” revoked; scripts using it are refused from "
                                "now on.") % {"name": token.name})
    return redirect("tokens")


# --- over the API -------------------------------------------------------------

class ApiTokenSerializer(serializers.ModelSerializer):
    lifetime = serializers.ChoiceField(choices=list(LIFETIMES), default="90", write_only=True,
                                       help_text="Days the token lives, or never.")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "token_key", "created", "expiry", "last_used_at", "lifetime"]
        read_only_fields = ["id", "token_key", "created", "expiry", "last_used_at"]


class NewApiTokenSerializer(ApiTokenSerializer):
    key = serializers.CharField(read_only=True, help_text="The token itself; shown only now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "key"]


class ApiTokenList(generics.ListCreateAPIView):
    """Your live API tokens (never their keys); POST makes one and returns its key once."""

    serializer_class = ApiTokenSerializer
    queryset = ApiToken.objects.none()
    filterset_fields = ["name"]
    ordering_fields = ["created", "last_used_at", "name"]

    def get_queryset(self):
        return live_tokens(self.request.user)

    @extend_schema(request=ApiTokenSerializer, responses={201: NewApiTokenSerializer})
    def post(self, request):
        """Only from a logged-in browser session: a token may not mint tokens, or a leaked
        short-lived token could make itself a key that never expires."""
        if request.auth is not None:
            raise PermissionDenied("Tokens are made from a logged-in session (the API tokens "
                                   "page, or this endpoint with your session), not with a token.")
        data = ApiTokenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            token, key = create_token(request.user, data.validated_data["name"],
                                      LIFETIMES[data.validated_data["lifetime"]])
        except ValueError as error:
            raise ValidationError({"name": [str(error)]}) from None
        token.key = key
        response = Response(NewApiTokenSerializer(token).data, status=status.HTTP_201_CREATED)
        add_never_cache_headers(response)  # the key, shown once: no cache may keep it
        return response


class ApiTokenDetail(mixins.DestroyModelMixin, generics.RetrieveAPIView):
    """One of your tokens; DELETE revokes it at once."""

    serializer_class = ApiTokenSerializer

    def get_queryset(self):
        return live_tokens(self.request.user)

    def delete(self, request, *args, **kwargs):
        return self.destroy(request, *args, **kwargs)
