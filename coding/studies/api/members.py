"""Members and roles, and one-time invitation links: REST API.

Every member reads the member list (coders by pseudonym when the study hides names);
only owners add, change or remove roles and make, list or revoke invites. Accepting an
invite needs no account: the token is the credential. An invite's token appears in one
answer only, the POST that made it.
"""

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.names import member_order, namer, sees_names
from coding.access.roles import access_study
from coding.accounts.languages import stored_language
from coding.labeling.api.coder import as_api_error
from coding.models import Invite, Membership, Role
from coding.rest import filters
from coding.rest.serializers import MemberSerializer
from coding.studies import members as service


class MembershipSerializer(MemberSerializer):
    id = serializers.IntegerField(read_only=True, help_text="The membership (one per role): "
                                                            "`member_id` in the paths below.")

    class Meta(MemberSerializer.Meta):
        fields = ["id", *MemberSerializer.Meta.fields]


class AddMemberSerializer(serializers.Serializer):
    username = serializers.CharField(required=False, max_length=150,
                                     help_text="The account's username; or give `email`.")
    email = serializers.EmailField(required=False, help_text="The account's e-mail address.")
    role = serializers.ChoiceField(choices=Role.choices)

    def validate(self, data):
        if bool(data.get("username")) == bool(data.get("email")):
            raise ValidationError({"username": [_("Give a username or an e-mail address "
                                                  "(one).")]})
        return data


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


def refused(error, code=status.HTTP_409_CONFLICT):
    return Response({"detail": str(error)}, status=code)


CONFLICT = OpenApiResponse(DetailSerializer, description="Refused by the study's state: "
                           "the last owner cannot be removed or demoted.")


class Members(generics.ListAPIView):
    """Who takes part in the study and in which role (one row per role), as the study
    page lists them. POST (owners) gives an existing account a role; a removed role is
    given back on the same row."""

    serializer_class = MembershipSerializer
    queryset = Membership.objects.none()
    filterset_class = filters.MemberFilter

    def get_queryset(self):
        self.scoped = access_study(self.request.user, self.kwargs["slug"])
        return (self.scoped.memberships.filter(deleted_at__isnull=True)
                .select_related("user").order_by(*member_order(self.hides_names())))

    def hides_names(self):
        return not sees_names(self.scoped, self.scoped.my_roles)

    def filter_queryset(self, queryset):
        # A coder who sees pseudonyms cannot probe for a person by username either.
        return queryset if self.hides_names() else super().filter_queryset(queryset)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if getattr(self, "scoped", None) is not None and self.hides_names():
            context["name"] = namer(self.scoped, self.request.user, self.scoped.my_roles)
        return context

    @extend_schema(request=AddMemberSerializer, responses={201: MembershipSerializer})
    def post(self, request, slug):
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = AddMemberSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        found = data.validated_data
        try:
            user = service.find_user(username=found.get("username", ""),
                                     email=found.get("email", ""))
            membership = service.add_member(study, user, found["role"], request.user)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response(MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)


def owned_membership(request, slug, member_id):
    """A live membership of a study the requester owns (403 for other roles, 404 else)."""
    study = access_study(request.user, slug, roles={Role.OWNER})
    return get_object_or_404(study.memberships.select_related("user", "study"), pk=member_id,
                             deleted_at__isnull=True)


class MemberDetail(APIView):
    def membership(self):
        return owned_membership(self.request, self.kwargs["slug"], self.kwargs["member_id"])

    @extend_schema(request=RoleSerializer, responses={200: MembershipSerializer, 409: CONFLICT})
    def patch(self, request, slug, member_id):
        """Change the member's role (owners). A role is a row of its own: the answer is the
        row of the new role, whose id may differ from the one in the path. A coder's held
        item goes back to the pool."""
        membership = self.membership()
        data = RoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            new = service.change_role(membership, data.validated_data["role"], request.user)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        except service.Refused as error:
            return refused(error)
        return Response(MembershipSerializer(new).data)

    @extend_schema(responses={204: None, 409: CONFLICT})
    def delete(self, request, slug, member_id):
        """Remove the role (owners; soft, kept in the history). A coder's held item goes back
        to the pool; their submitted codings stay."""
        try:
            service.remove_member(self.membership(), request.user)
        except service.Refused as error:
            return refused(error)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ResetLinkSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="The one-time link; shown in this answer only.")
    user = serializers.CharField()


class MemberResetLink(APIView):
    @extend_schema(request=None, responses={201: ResetLinkSerializer, 409: OpenApiResponse(
        DetailSerializer, description="Refused, saying why: the member has a role in a "
        "study you do not own, owns this one, or administers the workbench.")})
    def post(self, request, slug, member_id):
        """A one-time password reset link for the member (owners), as an invite link: it
        works once, for three days, and only while the password stays as it is."""
        membership = owned_membership(request, slug, member_id)
        try:
            url = service.make_reset_link(membership, request.user, request)
        except service.Refused as error:
            return refused(error)
        return Response({"url": url, "user": membership.user.username},
                        status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})


# --- invites ------------------------------------------------------------------------------

class InviteSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField(help_text="pending, used, revoked or expired.")
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    used_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    def get_state(self, invite) -> str:
        return service.invite_state(invite)

    class Meta:
        model = Invite
        fields = ["id", "role", "note", "email", "state", "created_by", "created_at",
                  "expires_at", "used_by", "used_at", "revoked_at"]
        read_only_fields = fields


class NewInviteSerializer(InviteSerializer):
    token = serializers.CharField(read_only=True, help_text="Shown only in this answer; the "
                                                            "workbench keeps its SHA-256.")
    link = serializers.CharField(read_only=True, help_text="The page where the person joins.")
    mailed = serializers.BooleanField(read_only=True,
                                      help_text="Sent to `email` by the configured mail server.")

    class Meta(InviteSerializer.Meta):
        fields = [*InviteSerializer.Meta.fields, "token", "link", "mailed"]
        read_only_fields = fields


class CreateInviteSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    note = serializers.CharField(required=False, allow_blank=True, max_length=200, default="",
                                 help_text="Who it is for, for your list.")
    email = serializers.EmailField(required=False, allow_blank=True, default="",
                                   help_text="Mailed the link when a mail server is configured.")
    days = serializers.IntegerField(required=False, default=service.INVITE_DAYS, min_value=1,
                                    max_value=service.MAX_INVITE_DAYS,
                                    help_text="Days until the link expires.")
    language = serializers.ChoiceField(
        choices=settings.LANGUAGES, required=False,
        help_text="The language the mail is written in. Without it: the invitee's chosen "
                  "language when `email` is that of an account that chose one, else yours "
                  "(`/api/account/language/`), else the site's default.")


class Invites(generics.ListAPIView):
    """The study's invites, newest first, in every state (owners). POST makes one and
    answers with its token and link: this once, never again."""

    serializer_class = InviteSerializer
    queryset = Invite.objects.none()
    filter_backends = []

    def get_queryset(self):
        study = access_study(self.request.user, self.kwargs["slug"], roles={Role.OWNER})
        return study.invites.select_related("created_by", "used_by").order_by("-created_at", "-id")

    @extend_schema(request=CreateInviteSerializer, responses={201: NewInviteSerializer})
    def post(self, request, slug):
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = CreateInviteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        asked = values.pop("language", None)
        try:
            invite, token = service.create_invite(study, values.pop("role"), request.user,
                                                  **values)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        invite.token = token
        invite.link = service.invite_link(token, request)
        # The API answers in English: the mail is in the language asked for, else the
        # invitee's or the inviter's chosen one (never English by default only).
        invite.mailed = service.send_invite(invite, invite.link, language=asked or service.invite_language(
            invite, maker_language=stored_language(request.user)))
        answer = Response(NewInviteSerializer(invite).data, status=status.HTTP_201_CREATED)
        answer["Cache-Control"] = "no-store"
        return answer


class InviteDetail(APIView):
    @extend_schema(responses={204: None, 409: OpenApiResponse(
        DetailSerializer, description="The invite was already used.")})
    def delete(self, request, slug, invite_id):
        """Revoke the invite (owners): its link stops working. Revoking twice is harmless."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        invite = get_object_or_404(study.invites, pk=invite_id)
        try:
            service.revoke_invite(invite, request.user)
        except service.Refused as error:
            return refused(error)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AcceptSerializer(serializers.Serializer):
    token = serializers.CharField(max_length=100, help_text="The token of the invite link.")
    username = serializers.CharField(required=False, max_length=150,
                                     help_text="For a new account (not signed in).")
    password = serializers.CharField(required=False, max_length=4096, trim_whitespace=False,
                                     style={"input_type": "password"}, write_only=True,
                                     help_text="For a new account; Django's password rules.")
    confirm_mixed = serializers.BooleanField(
        required=False, default=False, help_text="Signed in as a coder of the study, joining "
        "as adjudicator or viewer (where the study allows it): true once you have read why "
        "your later revisions are then recorded as informed (a 400 on confirm_mixed says it).")


class AcceptedSerializer(serializers.Serializer):
    study = serializers.CharField(help_text="The study's slug.")
    role = serializers.ChoiceField(choices=Role.choices)
    username = serializers.CharField()
    member_id = serializers.IntegerField()


class AcceptInvite(APIView):
    permission_classes = [AllowAny]

    @extend_schema(request=AcceptSerializer, responses={
        201: AcceptedSerializer,
        404: OpenApiResponse(DetailSerializer, description="No invite has this token (the "
                             "answer names no study)."),
        410: OpenApiResponse(DetailSerializer, description="The invite was used, revoked or "
                             "expired, or its study archived."),
        429: OpenApiResponse(DetailSerializer, description="Too many refused tokens from "
                             "this address: try again after the cool-off (as for logins)."),
    })
    def post(self, request):
        """Join a study with an invite's token. Not signed in: send a username and password
        and a new account is made. Signed in (session or API token): send the token alone
        and the role is added to your account. An unknown token is 404."""
        if service.INVITE_REFUSALS.blocked(request):
            return Response({"detail": _("Too many refused invite tokens from this address; "
                                         "try again in %(minutes)s minutes.")
                             % {"minutes": service.INVITE_REFUSALS.minutes()}},
                            status=status.HTTP_429_TOO_MANY_REQUESTS)
        data = AcceptSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        signed_in = request.user.is_authenticated
        account = None
        # The token first: only someone holding a live invite learns anything more (that
        # a username is taken, say), and each refused token counts against the address.
        try:
            service.check_usable(service.find_invite(values["token"]))
        except Http404:
            service.INVITE_REFUSALS.note(request)
            raise
        except service.InviteGone as gone:
            service.INVITE_REFUSALS.note(request)
            return refused(gone, status.HTTP_410_GONE)
        if signed_in and ("username" in values or "password" in values):
            raise ValidationError({"username": [_("You are signed in: the invite is accepted "
                                                  "for your account. Send the token alone.")]})
        if not signed_in:
            missing = {name: [_("Needed for a new account.")]
                       for name in ("username", "password") if not values.get(name)}
            if missing:
                raise ValidationError(missing)
            account = service.account_form(values["username"], values["password"])
            if not account.is_valid():
                errors = account.errors
                raise ValidationError({"password" if name.startswith("password") else name:
                                       list(messages) for name, messages in errors.items()})
        try:
            membership = service.accept_invite(values["token"],
                                               user=request.user if signed_in else None,
                                               account=account,
                                               confirm_mixed=values.get("confirm_mixed", False))
        except service.InviteGone as gone:
            return refused(gone, status.HTTP_410_GONE)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response({"study": membership.study.slug, "role": membership.role,
                         "username": membership.user.username, "member_id": membership.pk},
                        status=status.HTTP_201_CREATED)


urlpatterns = [
    path("studies/<slug:slug>/members/", Members.as_view(), name="api-members"),
    path("studies/<slug:slug>/members/<int:member_id>/", MemberDetail.as_view(),
         name="api-member"),
    path("studies/<slug:slug>/members/<int:member_id>/reset-link/", MemberResetLink.as_view(),
         name="api-member-reset-link"),
    path("studies/<slug:slug>/invites/", Invites.as_view(), name="api-invites"),
    path("studies/<slug:slug>/invites/<int:invite_id>/", InviteDetail.as_view(),
         name="api-invite"),
    path("invites/accept/", AcceptInvite.as_view(), name="api-invite-accept"),
]
