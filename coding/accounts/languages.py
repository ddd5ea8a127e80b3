"""The language a person reads, remembered per user.

The switcher (base.html) sets a cookie for anyone; for a signed-in person it also stores
the choice (LanguagePreference), so it follows them to another browser and outlives the
cookie. The signed-in person is read with their choice in the same query (UserBackend), and
UserLanguageMiddleware applies it on every page, at no cost per request. The API stays in
English (workbench.i18n.EnglishApiMiddleware); mail and other text written for a person
outside their request asks `user_language(user)`.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseBadRequest
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from coding.models import LanguagePreference
from workbench import i18n


class UnknownLanguage(ValueError):
    pass


def language_codes():
    return [code for code, _name in settings.LANGUAGES]


def check_language(code):
    """The code if it is one of settings.LANGUAGES, else UnknownLanguage naming them."""
    if not isinstance(code, str) or code not in language_codes():
        raise UnknownLanguage(_("Unknown language %(code)r: one of %(codes)s.") % {
            "code": code, "codes": ", ".join(language_codes())})
    return code


def stored_language(user):
    """The language the person chose, or None if they never did."""
    if not getattr(user, "is_authenticated", False):
        return None
    found = LanguagePreference.objects.filter(user=user).values_list("language", flat=True).first()
    return found if found in language_codes() else None


def _signed_in_choice(user):
    """The choice read with the signed-in person (UserBackend): no query of its own."""
    try:
        language = user.language_preference.language
    except LanguagePreference.DoesNotExist:
        return None
    return language if language in language_codes() else None


def user_language(user):
    """The language to write to this person in: their choice, else the site's default
    (settings.LANGUAGE_CODE). For mail and anything made outside their request; use it with
    `translation.override(user_language(user))`."""
    return stored_language(user) or settings.LANGUAGE_CODE


def job_language(job):
    """The language a job writes its progress, refusals and log in: the one it was started
    in (`params["language"]`: the page's for a page, English from the API, whose readers
    are scripts, and from the commands); for a job started before that was kept, its
    owner's."""
    language = job.params.get("language")
    return language if language in language_codes() else user_language(job.created_by)


def remember_language(user, code):
    """Store the person's choice (checked; UnknownLanguage if it is not offered)."""
    check_language(code)
    LanguagePreference.objects.update_or_create(user=user, defaults={"language": code})
    return code


def shows_original(user):
    """Whether the person chose to read codebooks as written (the switch of
    coding/_show_original.html), read with the signed-in person: no query of its own."""
    try:
        return user.language_preference.show_original
    except (AttributeError, LanguagePreference.DoesNotExist):
        return False


def forget_language(user):
    LanguagePreference.objects.filter(user=user).delete()


class UserBackend(ModelBackend):
    """Django's own sign-in, reading the signed-in person with their stored language in
    one query, so the middleware needs none."""

    def get_user(self, user_id):
        user = (get_user_model()._default_manager.select_related("language_preference")
                .filter(pk=user_id).first())
        return user if user is not None and self.user_can_authenticate(user) else None


class UserLanguageMiddleware:
    """After AuthenticationMiddleware: a signed-in person's stored language wins over the
    browser's cookie and Accept-Language (another browser, an expired cookie), and the
    cookie is set to match, so a page after sign-out stays in it too."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        language = None
        if not request.path.startswith("/api/") and request.user.is_authenticated:
            language = _signed_in_choice(request.user)
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        response = self.get_response(request)
        cookie = settings.LANGUAGE_COOKIE_NAME
        if language and request.COOKIES.get(cookie) != language and cookie not in response.cookies:
            _set_cookie(response, language)
        return response


def _set_cookie(response, language):
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME, language, max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH, domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE, httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE)


@require_POST
def choose_language(request):
    """The switcher: the cookie for anyone (workbench.i18n), and for a signed-in person the
    stored choice too. A code that is not offered is refused (400), not
    quietly ignored."""
    code = request.POST.get("language")
    try:
        check_language(code)
    except UnknownLanguage as unknown:
        return HttpResponseBadRequest(str(unknown), content_type="text/plain; charset=utf-8")
    response = i18n.choose_language(request)
    if request.user.is_authenticated:
        remember_language(request.user, code)
    return response


@login_required
@require_POST
def choose_original(request):
    """The "codebook as written" switch, sent as it changes (coding/show_original.js): kept
    per person, so the next item, page or device opens the same way. A person who has not
    chosen a language gets a row without one (stored_language still reads None)."""
    LanguagePreference.objects.update_or_create(
        user=request.user, defaults={"show_original": request.POST.get("show_original") == "1"})
    return HttpResponse(status=204)
