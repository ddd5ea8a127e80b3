"""Turns an archived study's refusal (coding.access.archive.StudyArchived) into an answer.

The refusal is raised where the work would be done (queue, submission, import), so
every door refuses alike; here, once, it becomes a 409: JSON with `code: archived` for
the API, a page saying so (with the way back to the study) for the browser.
"""

from django.http import JsonResponse
from django.shortcuts import render

from coding.access.archive import StudyArchived


class ArchivedStudyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, StudyArchived):
            return None
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": str(exception), "code": exception.code}, status=409)
        return render(request, "coding/archived.html",
                      {"study": exception.study, "reason": str(exception),
                       "hide_archived_banner": True}, status=409)
