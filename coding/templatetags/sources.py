"""How a thread's posts are laid out on the coding page: review comments under their file
and line, each reply under the comment it answers (the REST reply chain)."""

from django import template

register = template.Library()


@register.filter
def threaded(posts):
    """The posts in order, each with its `index` (its place in the snapshot, which evidence
    quotes name as posts.N.body) and the replies to it in `replies`; a review comment or
    discussion reply whose parent is in the thread is shown under it, not again on its own."""
    entries, by_id = [], {}
    for index, post in enumerate(posts or []):
        entry = {"post": post, "index": index, "replies": []}
        key = post.get("id")
        parent = by_id.get(post.get("in_reply_to") or post.get("reply_to"))
        if parent is not None:
            parent["replies"].append(entry)
        else:
            entries.append(entry)
        if key:
            by_id[key] = parent or entry
    return entries
