"""How the inclusion analysis's numbers are written for people (pages and the command); the
API and the export keep the exact values. Light on purpose: template tags load it."""


def shown_p(p):
    """A p-value as papers print it: three decimals, `< 0.001` below that (the API and the
    export keep the exact value)."""
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def shown_share(value):
    """A share as a whole percentage: 0.4 → 40%."""
    return "–" if value is None else f"{value:.0%}"


def in_reader_language(study, analysis):
    """The page's copy of an analysis with its explanations in the active language: the
    analysis itself keeps them in English (the API's, the command's and the export's
    words). Numbers and keys are untouched."""
    from django.utils.translation import gettext

    from coding.inclusion import analysis as words

    shown = {**analysis, "orientation": gettext(words.ORIENTATION),
             "test_rule": gettext(words.TEST_RULE_WORDS) % words.TEST_RULE_VALUES,
             "adjustment": gettext(words.ADJUSTMENT)}
    if analysis.get("reason") == words.NOT_AVAILABLE:
        shown["reason"] = gettext(words.NOT_AVAILABLE)
    source = analysis.get("source_key")
    if analysis.get("available") and source:
        shown["source"] = words.source_words(study, source, gettext)
    elif analysis.get("source") == words.TRACKER_SOURCE:
        shown["source"] = gettext(words.TRACKER_SOURCE)
    shown["fields"] = [{**f, "note": gettext(f["note"]) if f.get("note") ==
                        words.NOTHING_TO_COMPARE else f.get("note", "")}
                       for f in analysis.get("fields", [])]
    return shown
