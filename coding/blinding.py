"""What a coder may receive of an item: the one projection used by pages, API and downloads.

Blinded fields (design brief, rule 2) are removed here, on the server, before
anything is rendered or serialised; nothing is hidden with CSS. A field name in
Study.blinded_fields hides that key of every item's content; "thread.url" hides it
from threads only. With Study.blind_authors, authors and affiliations go too.
"""

AUTHOR_FIELDS = ("authors", "authors_parsed", "affiliations")


def hidden_fields(study, kind):
    hidden = set(AUTHOR_FIELDS) if study.blind_authors else set()
    for name in study.blinded_fields:
        scope, _, field = name.rpartition(".")
        if scope in ("", kind):
            hidden.add(field)
    return hidden


def coder_view(study, content):
    """The snapshot content with the study's blinded fields removed."""
    hidden = hidden_fields(study, content.get("kind"))
    return {key: value for key, value in content.items() if key not in hidden}


def quote_source(content, field):
    """The text of a field an evidence quote may point into: title, abstract, posts.N.body."""
    if field in ("title", "abstract"):
        return content.get(field) or ""
    parts = field.split(".")
    if len(parts) == 3 and parts[0] == "posts" and parts[1].isdigit() and parts[2] == "body":
        posts = content.get("posts") or []
        index = int(parts[1])
        return posts[index]["body"] if index < len(posts) else ""
    return ""
