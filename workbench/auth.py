"""API authentication by token (django-rest-knox), noting when each token was last used.

Kept apart from workbench.tokens: DRF imports this while loading its settings, so it
must not import DRF views itself.
"""

from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

MARK_USED_EVERY = timedelta(minutes=1)


def client_address(request):
    """The address a request came from, for login throttling (django-axes).

    Without a proxy, REMOTE_ADDR. Behind WORKBENCH_PROXY_COUNT trusted proxies, each of
    which appends the address it received from to X-Forwarded-For, the entry the
    outermost proxy appended: entries further left are whatever the client sent, and
    trusting them would let anyone pose as any address (or as the victim's)."""
    count = settings.WORKBENCH_PROXY_COUNT
    if count:
        forwarded = [part.strip() for part in
                     request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= count:
            return forwarded[-count]
    return request.META.get("REMOTE_ADDR")


class Refusals:
    """Refused attempts from one address at something guessable other than logging in
    (an invite's token), throttled as login is: after settings.AXES_FAILURE_LIMIT refusals
    within AXES_COOLOFF_TIME the address is refused outright until they age out. Kept in
    the cache (per process without a shared one, as DRF's throttles are)."""

    def __init__(self, scope):
        self.scope = scope

    def _key(self, request):
        return f"refusals:{self.scope}:{client_address(request)}"

    def blocked(self, request):
        return cache.get(self._key(request), 0) >= settings.AXES_FAILURE_LIMIT

    def note(self, request):
        key, seconds = self._key(request), int(settings.AXES_COOLOFF_TIME.total_seconds())
        if not cache.add(key, 1, seconds):
            try:
                cache.incr(key)
            except ValueError:  # expired between the two calls
                cache.add(key, 1, seconds)

    def minutes(self):
        return int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)


class TokenAuthentication(KnoxTokenAuthentication):
    """Knox's check, plus when a token was last used (written at most once a minute)."""

    def authenticate_credentials(self, token):
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:  # knox would let this escape as a server error
            raise AuthenticationFailed("Invalid token.") from None
        return super().authenticate_credentials(token)

    def validate_user(self, auth_token):
        now = timezone.now()
        if auth_token.last_used_at is None or now - auth_token.last_used_at > MARK_USED_EVERY:
            type(auth_token).objects.filter(pk=auth_token.pk).update(last_used_at=now)
        return super().validate_user(auth_token)
