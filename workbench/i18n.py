"""Languages: pages follow the reader's choice (the switcher's cookie, else the browser's
Accept-Language); the API always answers in English, so scripts read the same words
whatever the person who wrote them reads."""

from django.utils import translation
from django.views.decorators.http import require_POST
from django.views.i18n import set_language


class EnglishApiMiddleware:
    """After LocaleMiddleware: API requests are answered in English."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            translation.activate("en")
            request.LANGUAGE_CODE = "en"
        return self.get_response(request)


@require_POST
def choose_language(request):
    """The language switcher: Django's set_language (a cookie kept for a year, then back
    to the page the reader came from), taken by POST only."""
    return set_language(request)
