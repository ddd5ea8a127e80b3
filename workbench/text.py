"""Searching the text of JSON-like values (request bodies, answers, job parameters)."""


def find_in_json(value, pattern):
    """The first string (keys included) in a JSON-like value where the compiled regex
    `pattern` matches, as (where, match): `where` is the path of keys and indexes, ending in
    "<key>" when the match is in a key. None when nothing matches. Walked without
    recursion, so deeply nested input cannot exhaust the stack."""
    pending = [((), value)]
    while pending:
        where, current = pending.pop()
        if isinstance(current, str):
            found = pattern.search(current)
            if found:
                return where, found
        elif isinstance(current, dict):
            for key, item in current.items():
                if isinstance(key, str) and (found := pattern.search(key)):
                    return (*where, "<key>"), found
                pending.append(((*where, key), item))
        elif isinstance(current, list | tuple):
            pending.extend(((*where, i), item) for i, item in enumerate(current))
    return None
