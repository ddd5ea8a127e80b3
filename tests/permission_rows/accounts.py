"""Permission rows: a person's own account, password change and reset (issue 39).

Everyone logged in has an account page and changes their own password; the reset pages
are everyone's, logged in or not (a reset link is its own credential: `reset_uid` and
`reset_token` are coder A's, valid for each test). Only staff decide who may create
studies, and no one of the table is staff."""

from django.contrib.auth.tokens import default_token_generator
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

ANYONE = {"GET": "YYYYYYY", "POST": "MMMMMMM", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
          "DELETE": "MMMMMMM"}
SIGNED_IN = {"GET": "LYYYYYY", "POST": "LYYYYYY"}

ROWS = {
    "account/": SIGNED_IN,
    "account/password/": SIGNED_IN,
    "account/password/done/": {"GET": "LYYYYYY"},
    "password_reset/": {**ANYONE, "POST": "YYYYYYY"},
    "password_reset/done/": ANYONE,
    # Django's confirm view first moves a valid token into the session, redirecting to
    # its set-password page, whatever the method; that page takes GET and POST only.
    "reset/<str:uidb64>/<str:token>/": {method: "YYYYYYY" for method in ANYONE},
    "reset/done/": ANYONE,
    "staff/creators/": {"GET": "LFFFFFF", "POST": "LFFFFFF"},
}


def values(world, alpha, people):
    cora = people["cora"]
    return {"uidb64": urlsafe_base64_encode(force_bytes(cora.pk)),
            "token": default_token_generator.make_token(cora)}
