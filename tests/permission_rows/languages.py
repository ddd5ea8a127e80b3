"""Permission rows: a person's own language (coding.accounts.languages), read and set by anyone
signed in; it concerns no study."""

ROWS = {
    "api/account/language/": {"GET": "LYYYYYY", "PUT": "LYYYYYY"},
}
