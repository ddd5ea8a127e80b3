"""The coder's workflow over the API: next item, submit, skip, draft; the owner's queue."""

import re

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.blinding import coder_view
from coding.access.names import named_groups, namer
from coding.access.roles import access_assignment, access_study
from coding.actions import sample
from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.labeling import queue
from coding.labeling.codings import NotHeld, latest_coding, save_draft
from coding.labeling.suggestions import suggestions_for
from coding.models import Role
from coding.rest.serializers import (
    ARCHIVED_RESPONSE, CoderAssignmentSerializer, NotHeldSerializer, SampleSerializer,
    SkipSerializer, WorkSerializer,
)


def coder_payload(assignment):
    item = assignment.item
    name = namer(item.study, assignment.coder)
    latest = latest_coding(assignment)
    return {
        "id": assignment.pk, "status": assignment.status, "leased_until": assignment.leased_until,
        "item": {"id": item.pk, "round": item.round, "snapshot": item.snapshot.number,
                 "content": coder_view(item.study, item.snapshot.content)},
        "codebook_version": item.codebook.current_version().number,
        "draft": assignment.draft,
        "latest": latest and {"revision": latest.revision, "values": latest.values,
                              "notes": latest.notes, "evidence": latest.evidence,
                              "unsure": latest.unsure, "submitted_at": latest.submitted_at,
                              "assisted": latest.assisted},
        # Only once the item's discussion is open, to its coders (the study's choice).
        # Others by pseudonym unless the study shows names (coding.access.names).
        "discussion": [{"question": q.key, "answers": groups_payload(groups, name)}
                       for q, groups in adjudication.discussion_for(assignment)],
        # Only in an assisted round, outside the reliability sample; recorded as shown.
        "suggestions": list(suggestions_for(assignment).values()),
    }


def groups_payload(groups, name):
    return [{"value": value, "coders": coders} for value, coders in named_groups(groups, name)]


def as_api_error(error):
    return ValidationError(error.message_dict if hasattr(error, "error_dict") else error.messages)


class CoderView(APIView):
    def study(self):
        return access_study(self.request.user, self.kwargs["slug"], roles={Role.CODER})

    def assignment(self):
        return access_assignment(self.request.user, self.study(), self.kwargs["pk"])


class NextItem(CoderView):
    @extend_schema(request=None, responses={200: CoderAssignmentSerializer, 204: None,
                                            409: ARCHIVED_RESPONSE})
    def post(self, request, slug):
        """Your open item, or the next one reserved for you; 204 when nothing is left."""
        assignment = queue.next_item(self.study(), request.user)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        assignment = access_assignment(request.user, assignment.item.study, assignment.pk)
        return Response(coder_payload(assignment))


class AssignmentDetail(CoderView):
    @extend_schema(responses=CoderAssignmentSerializer)
    def get(self, request, slug, pk):
        """One of your assignments with the blinded item, your draft and your latest coding."""
        return Response(coder_payload(self.assignment()))


IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9._:-]{8,100}$")


def submission_key(request):
    """The Idempotency-Key header, checked; "" when the client sent none."""
    key = request.headers.get("Idempotency-Key", "").strip()
    if key and not IDEMPOTENCY_KEY.match(key):
        raise ValidationError({"Idempotency-Key": _(
            "8 to 100 letters, digits or . _ : - (a UUID will do)")})
    return key


class Submit(CoderView):
    @extend_schema(request=WorkSerializer, parameters=[OpenApiParameter(
        "Idempotency-Key", str, OpenApiParameter.HEADER, description=(
            "A key of your own for this submission (a UUID will do). Sent again with the "
            "same key, on this assignment, the submission is not recorded twice: the answer "
            "is 200 with the coding as recorded the first time."))],
        responses={201: CoderAssignmentSerializer, 200: CoderAssignmentSerializer,
                   400: None, 409: NotHeldSerializer})
    def post(self, request, slug, pk):
        """Submit answers; a second submission is kept as a new revision, unless it carries
        the Idempotency-Key of one already recorded (then 200, nothing recorded).

        409 when the item went back to the pool and filled up meanwhile: nothing is
        recorded, the answers come back in `work` and are kept as the draft. Also 409,
        with `code: archived` and no `work`, when the study is archived."""
        assignment = self.assignment()
        key = submission_key(request)
        work = WorkSerializer(data=request.data)
        work.is_valid(raise_exception=True)
        try:
            coding = submit(assignment, **work.validated_data, submission=key)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        except NotHeld as refused:
            return Response({"detail": str(refused), "code": "not_held", "work": refused.work},
                            status=status.HTTP_409_CONFLICT)
        assignment.refresh_from_db()
        return Response(coder_payload(assignment), status=status.HTTP_200_OK if getattr(
            coding, "repeated", False) else status.HTTP_201_CREATED)


class Skip(CoderView):
    @extend_schema(request=SkipSerializer, responses={204: None})
    def post(self, request, slug, pk):
        """Pass on the item with a reason; it is never offered to you again."""
        assignment = self.assignment()  # who may touch it first, then what was sent
        data = SkipSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if not queue.skip(assignment, data.validated_data["reason"]):
            raise ValidationError(_("Only an item you hold now can be skipped."))
        return Response(status=status.HTTP_204_NO_CONTENT)


class Draft(CoderView):
    @extend_schema(request=WorkSerializer, responses={204: None})
    def put(self, request, slug, pk):
        """Keep unsent work; nothing is checked or counted until submitted."""
        assignment = self.assignment()
        work = WorkSerializer(data=request.data)
        work.is_valid(raise_exception=True)
        try:
            save_draft(assignment, work.validated_data)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response(status=status.HTTP_204_NO_CONTENT)


class QueueSummary(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug):
        """Per coder done, skipped, in progress and median seconds; per round what is left."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        summary = queue.queue_summary(study)
        for row in summary["coders"]:
            row["coder"] = row["coder"].username
        return Response(summary)


class ReliabilitySample(APIView):
    @extend_schema(request=SampleSerializer, responses={201: dict})
    def post(self, request, slug):
        """Draw which items are coded by every overlap coder (the rest by one)."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = SampleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            sample.draw_reliability_sample(study, **data.validated_data)
        except ValueError as error:
            raise ValidationError(str(error)) from error
        study.refresh_from_db()
        return Response(study.reliability_sample, status=status.HTTP_201_CREATED)
