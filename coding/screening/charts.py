"""The recall curve as a standalone SVG: recall against the share of records screened, the
random-order baseline (the diagonal: in random order recall grows with the share read), the
target recall as a line and where the stopping rule stopped. Pure; no chart library. The
simulation command writes it to a file; the screening page draws the same picture inline."""

from xml.sax.saxutils import escape

from django.utils.translation import gettext

from coding.agreement.charts import PALETTE

WIDTH, HEIGHT = 560, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 540, 24, 310


def recall_svg(curves, *, target=0.95, title="", stop=None, y_label=None):
    """`curves`: [(name, [(records screened, recall)], records in all)], drawn in order;
    `stop`: (records screened, recall) where the stopping rule stopped, or None; `target`
    None draws no target line."""

    def x(share):
        return LEFT + (RIGHT - LEFT) * share

    def y(recall):
        return BOTTOM - (BOTTOM - TOP) * recall

    words = {"title": title or gettext("Recall curve"),
             "x": gettext("share of records screened"), "y": y_label or gettext("recall"),
             "stop": gettext("stopping rule stops")}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="sans-serif" '
             f'font-size="12"><title>{escape(words["title"])}</title>',
             f'<rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" height="{BOTTOM - TOP}" '
             'fill="none" stroke="#888"/>']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<text x="{x(tick):.1f}" y="{BOTTOM + 16}" text-anchor="middle">'
                     f'{round(tick * 100)}%</text>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                     f'{round(tick * 100)}%</text>')
    parts.append(f'<text x="{(LEFT + RIGHT) / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
                 f'{escape(words["x"])}</text>')
    parts.append(f'<text x="14" y="{(TOP + BOTTOM) / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {(TOP + BOTTOM) / 2})">'
                 f'{escape(words["y"])}</text>')
    if target is not None:
        parts.append(f'<line x1="{x(0)}" y1="{y(target):.1f}" x2="{x(1)}" '
                     f'y2="{y(target):.1f}" stroke="#999" stroke-dasharray="2 3"/>')
    parts.append(f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#999" '
                 'stroke-dasharray="6 4"/>')
    legend = [(gettext("random order (expected)"), "#999", "6 4")]
    for i, (name, points, total) in enumerate(curves):
        colour = PALETTE[i % len(PALETTE)]
        path = " ".join(f"{x(n / total):.1f},{y(r):.1f}" for n, r in [(0, 0), *points])
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                     'stroke-width="2"/>')
        legend.append((name, colour, ""))
        if stop and i == 0:
            sx, sy = x(stop[0] / total), y(stop[1])
            parts.append(f'<circle cx="{sx:.1f}" cy="{sy:.1f}" r="5" fill="none" '
                         f'stroke="{colour}" stroke-width="2"/>')
            parts.append(f'<text x="{sx + 8:.1f}" y="{sy + 16:.1f}">'
                         f'{escape(words["stop"])}</text>')
    for i, (name, colour, dash) in enumerate(legend):
        ly = BOTTOM - 14 - 18 * (len(legend) - 1 - i)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<line x1="{RIGHT - 200}" y1="{ly}" x2="{RIGHT - 176}" y2="{ly}" '
                     f'stroke="{colour}" stroke-width="2"{dashes}/>')
        parts.append(f'<text x="{RIGHT - 170}" y="{ly + 4}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
