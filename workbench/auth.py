"""API authentication by token (django-rest-knox), noting when each token was last used.

Kept apart from workbench.tokens: DRF imports this while loading its settings, so it
must not import DRF views itself.
"""

from datetime import timedelta

from django.utils import timezone
from knox.auth import TokenAuthentication as KnoxTokenAuthentication

MARK_USED_EVERY = timedelta(minutes=1)


class TokenAuthentication(KnoxTokenAuthentication):
    """Knox's check, plus when a token was last used (written at most once a minute)."""

    def validate_user(self, auth_token):
        now = timezone.now()
        if auth_token.last_used_at is None or now - auth_token.last_used_at > MARK_USED_EVERY:
            type(auth_token).objects.filter(pk=auth_token.pk).update(last_used_at=now)
        return super().validate_user(auth_token)
