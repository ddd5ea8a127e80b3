"""What each role may receive of an item: the one projection used by pages, API and exports.

Blinded fields (design brief, rule 2) are removed here, on the server, before
anything is rendered, serialised or written to an export; nothing is hidden with
CSS. A field name in Study.blinded_fields hides that key of every item's content;
"thread.url" hides it from threads only. With Study.blind_authors, authors and
affiliations go too.

Who receives blinded fields (`sees_blinded`), one rule for every page and shape:

- owners: always (they set the study up; `export_dataset` works at this level);
- anyone else who codes in the study: never, whatever other role they hold, since
  rule 2 is about everything a coder receives;
- adjudicators and viewers: only when the study's `adjudicators_see_blinded` is on
  (the study has no setting of its own for viewers, so they follow adjudicators).

The coding page and the coder API pass the coder role alone (`coder_view`): a
person coding an item is blinded whatever else they are.
"""

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _

from coding.models import Role

AUTHOR_FIELDS = ("authors", "authors_parsed", "affiliations", "author_records")
# Fields that tell a blinded field's value another way: hiding the key hides these too
# (a thread's merged_at says it was merged; its state_reason and closed_at that it is
# closed). Not every study blinds what tells; this is what the importers write.
TELLING = {
    "merged": ("merged_at", "merged_by", "merge_commit_sha"),
    "state": ("state_reason", "closed_at"),
    "answered": ("answer_chosen_at",),
}
# Timeline events that tell a blinded field (a "merged" event says merged), dropped from
# the `events` list, and keys of each post that do ("is_answer" marks the answer).
TELLING_EVENTS = {"merged": {"merged"}, "state": {"closed", "reopened"}}
TELLING_POST_KEYS = {"answered": ("is_answer",)}
# The kinds of document an item can be; a name scoped as "thread.url" applies to one.
KINDS = ("paper", "thread")
# The level of an operator's command (export_dataset without --as-user).
OWNER_LEVEL = frozenset({Role.OWNER})
CODER_LEVEL = frozenset({Role.CODER})


def hidden_fields(study, kind):
    """The content keys the study blinds for an item of this kind (what a coder never gets)."""
    hidden = set(AUTHOR_FIELDS) if study.blind_authors else set()
    for name in study.blinded_fields:
        scope, _, field = name.rpartition(".")
        if scope in ("", kind):
            hidden.add(field)
            hidden.update(TELLING.get(field, ()))
    return hidden


def sees_blinded(study, roles):
    """Whether a person holding these roles in the study may receive its blinded fields."""
    roles = set(roles or ())
    if Role.OWNER in roles:
        return True
    if Role.CODER in roles:
        return False
    return bool(roles & {Role.ADJUDICATOR, Role.VIEWER}) and study.adjudicators_see_blinded


def hides_inclusion(study, roles):
    """Whether the study blinds framework inclusion and these roles may not see blinded fields:
    then the method catalog, which is that inclusion, is not theirs to read either."""
    return "included_in" in study.blinded_fields and not sees_blinded(study, roles)


def check_inclusion_visible(study, roles):
    """PermissionDenied when hides_inclusion: for the catalog, the inclusion report and its
    API alike (a report of included against not-included papers, narrowed by its
    population filter, is the inclusion item by item)."""
    if hides_inclusion(study, roles):
        raise PermissionDenied(_("This study hides framework inclusion from your role; its "
                                 "owner can let adjudicators and viewers see blinded fields in "
                                 "Settings."))


def hidden_fields_for(study, roles, kind):
    """The content keys of an item of this kind that a person with these roles may not receive."""
    return set() if sees_blinded(study, roles) else hidden_fields(study, kind)


def view_for(study, roles, content):
    """The snapshot content as a person with these roles may receive it."""
    hidden = hidden_fields_for(study, roles, content.get("kind"))
    view = {key: value for key, value in content.items() if key not in hidden}
    events = set().union(*(TELLING_EVENTS.get(field, set()) for field in hidden))
    if events and isinstance(view.get("events"), list):
        view["events"] = [e for e in view["events"]
                          if not (isinstance(e, dict) and e.get("event") in events)]
    post_keys = {key for field in hidden for key in TELLING_POST_KEYS.get(field, ())}
    if post_keys and isinstance(view.get("posts"), list):
        view["posts"] = [{k: v for k, v in post.items() if k not in post_keys}
                         if isinstance(post, dict) else post for post in view["posts"]]
    return view


def coder_view(study, content):
    """The snapshot content with the study's blinded fields removed: what a coder receives."""
    return view_for(study, CODER_LEVEL, content)


def withheld_names(study, roles):
    """The blinded field names (as the study writes them, authors included) withheld from
    these roles, sorted: what an export's README lists."""
    if sees_blinded(study, roles):
        return []
    names = set(study.blinded_fields) | (set(AUTHOR_FIELDS) if study.blind_authors else set())
    return sorted(names)


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
