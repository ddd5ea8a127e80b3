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
