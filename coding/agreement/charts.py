"""Geometry of the agreement page's charts, drawn as server-side SVG by templates.

Pure functions from report values to coordinates; no chart library, nothing sent to
the browser but the SVG itself. Templates: coding/_chart_*.html.
"""

import math

from django.utils.translation import gettext_lazy

from coding.agreement.sample_size import RELIABLE, TENTATIVE, verdict

# Okabe-Ito colours: told apart with the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
           "#999933"]
LABEL_WIDTH = 190
PLOT_WIDTH = 460
ROW = 24


def alpha_bars(questions):
    """One bar per question: alpha, its 95% interval as a whisker, threshold lines."""
    rows = [q for q in questions if q.get("metric")]
    lows = [q["alpha"]["low"] for q in rows if q["alpha"]["low"] is not None]
    lows += [q["alpha"]["value"] for q in rows if q["alpha"]["value"] is not None]
    start = min(0.0, _floor_tenth(min(lows, default=0.0)))
    x = _scale(start, 1.0, LABEL_WIDTH, LABEL_WIDTH + PLOT_WIDTH)
    top = 22
    bars = []
    for i, q in enumerate(rows):
        alpha = q["alpha"]
        y = top + i * ROW
        mid = y + ROW / 2
        bar = {"top": y + 5, "mid": mid, "tip_top": mid - 5, "tip_bottom": mid + 5,
               "label": q.get("text") or q["key"], "key": q["key"], "verdict": alpha["verdict"],
               "text_x": LABEL_WIDTH + PLOT_WIDTH + 8, "x0": x(max(start, 0.0))}
        bar["undefined_x"] = bar["x0"] + 6
        if alpha["value"] is None:
            bar.update(defined=False, text="undefined: " + q["undefined"].get("alpha", ""))
        else:
            value = x(alpha["value"])
            bar.update(defined=True, x=min(value, bar["x0"]), width=abs(value - bar["x0"]),
                       text=f"{alpha['value']:.3f}", tooltip=_tooltip(q))
            if alpha["low"] is not None:
                bar.update(low=x(alpha["low"]), high=x(alpha["high"]))
        bars.append(bar)
    height = top + len(rows) * ROW + 22
    return {"width": LABEL_WIDTH + PLOT_WIDTH + 90, "height": height, "bars": bars,
            "ticks": _ticks(start, x, height - 14), "thresholds": _thresholds(x, top, height),
            "title": gettext_lazy("Krippendorff's alpha per question with 95% bootstrap interval")}


def heatmap(table, title, row_name="", column_name=""):
    """A confusion table as a grid of shaded cells; the diagonal (agreement) outlined.
    Row labels on the left, column labels slanted above."""
    if not table:
        return None
    labels, counts = table["labels"], table["counts"]
    cell = 30 if len(labels) <= 8 else 22
    margin = 16 + 7.2 * max(len(str(label)) for label in labels)
    left, top = margin, margin * 0.72 + 8
    biggest = max((c for row in counts for c in row), default=0) or 1
    cells = [{"x": left + j * cell, "y": top + i * cell, "count": count,
              "cx": left + (j + 0.5) * cell, "cy": top + (i + 0.5) * cell,
              "opacity": round(0.08 + 0.85 * count / biggest, 3) if count else 0,
              "dark": count / biggest > 0.55, "diagonal": i == j,
              "tooltip": f"{row_name or 'row'} {labels[i]}, {column_name or 'column'} "
                         f"{labels[j]}: {count}"}
             for i, row in enumerate(counts) for j, count in enumerate(row)]
    size = cell * len(labels)
    caption = gettext_lazy("rows: %(rows)s · columns: %(columns)s") % {
        "rows": row_name, "columns": column_name}
    return {"width": max(left + size + margin * 0.72 + 8, left + 6.2 * len(caption)),
            "height": top + size + 26, "cell": cell, "caption": caption,
            "cells": cells, "title": title, "row_name": row_name, "column_name": column_name,
            "caption_x": left, "caption_y": top + size + 18,
            "rows": [{"label": label, "x": left - 6, "y": top + (i + 0.5) * cell}
                     for i, label in enumerate(labels)],
            "columns": [{"label": label, "x": left + (j + 0.5) * cell, "y": top - 6}
                        for j, label in enumerate(labels)]}


def lines(history, book, axis=None):
    """Alpha of each of the codebook's questions at each snapshot, against codings so far.

    `axis` names the x axis for other series (the drift's windows): {"caption",
    "tick": x -> label, "point": (x, when) -> words}. A summary entry with "flag" true
    is drawn as a flagged point."""
    axis = axis or SNAPSHOT_AXIS
    keys = [q["key"] for q in book["questions"] if q.get("metric")]
    points = {key: [] for key in keys}
    flags = []
    for n_codings, created_at, summary in history:
        for key in keys:
            found = summary.get(f"{book['id']}:{key}")
            if found and found["value"] is not None:
                points[key].append((n_codings, found["value"], created_at))
                if found.get("flag"):
                    flags.append((key, n_codings, found["value"]))
    counts = [n for series in points.values() for n, _, _ in series]
    if len({*counts}) < 2:
        return None
    values = [v for series in points.values() for _, v, _ in series]
    # Zoomed to the data so close lines stay apart, with both thresholds in view.
    start = min(0.6, math.floor(10 * min(values) - 0.5) / 10)
    left, right, top, bottom = 48, 48 + PLOT_WIDTH + 120, 14, 230
    x = _scale(min(counts), max(counts), left, right)
    y = _scale(start, 1.0, bottom, top)
    series = []
    for i, key in enumerate(keys):
        if points[key]:
            series.append({"key": key, "colour": PALETTE[i % len(PALETTE)],
                           "dashed": i >= len(PALETTE),
                           "points": " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v, _ in points[key]),
                           "dots": [{"x": x(n), "y": y(v), "tooltip":
                                     f"{key}: α {v:.3f} {axis['point'](n, when)}"}
                                    for n, v, when in points[key]]})
    return {"width": right + 50 + 7 * max(map(len, keys)), "height": bottom + 40,
            "left": left, "right": right,
            "top": top, "bottom": bottom, "series": series,
            "legend": [{"key": s["key"], "colour": s["colour"], "dashed": s["dashed"],
                        "y": top + 6 + i * 18, "x": right + 16} for i, s in enumerate(series)],
            "y_ticks": [{"y": y(v), "label": f"{v:.1f}"}
                        for v in _multiples(start, 0.1 if start >= 0.4 else 0.2)],
            "x_ticks": [{"x": x(n), "label": axis["tick"](n)}
                        for n in _spread(min(counts), max(counts))],
            "caption": axis["caption"],
            "flags": [{"x": x(n), "y": y(v), "tooltip": gettext_lazy("%(key)s: flagged") % {
                "key": key}} for key, n, v in flags],
            "thresholds": [{"y": y(v), "label": f"{v:.3f}", "label_x": right - 4,
                            "label_y": y(v) - 3} for v in (TENTATIVE, RELIABLE)],
            "title": gettext_lazy("Krippendorff's alpha per question after each snapshot")}


SNAPSHOT_AXIS = {
    "caption": gettext_lazy("independent codings so far (each point a snapshot)"),
    "tick": lambda n: n,
    "point": lambda n, when: f"after {n} codings ({when:%Y-%m-%d %H:%M})"}


# --- helpers -------------------------------------------------------------------------

def _scale(low, high, out_low, out_high):
    span = (high - low) or 1.0
    return lambda value: out_low + (value - low) / span * (out_high - out_low)


def _floor_tenth(value):
    return math.floor(value * 10) / 10 if value < 0 else 0.0


def _tenths(start, stop, step):
    values, value = [], start
    while value <= stop + 1e-9:
        values.append(round(value, 1) + 0.0)  # + 0.0: -0.0 printed as 0.0
        value += step
    return values


def _ticks(start, x, bottom):
    return [{"x": x(v), "label": f"{v:.1f}", "bottom": bottom}
            for v in _multiples(start, 0.2 if start > -0.5 else 0.5)]


def _multiples(start, step):
    """Multiples of `step` from `start` up to 1.0: the tick values of an alpha axis."""
    first = math.ceil(round(start / step, 9)) * step
    return _tenths(first, 1.0, step)


def _thresholds(x, top, height):
    """The .667 and .800 lines, labelled under the plot."""
    return [{"x": x(v), "label": f"{v:.3f}", "top": top - 4, "bottom": height - 14,
             "label_y": height - 3} for v in (TENTATIVE, RELIABLE)]


def _spread(low, high, steps=4):
    if high - low < steps:
        return list(range(low, high + 1))
    return sorted({round(low + (high - low) * i / steps) for i in range(steps + 1)})


def _tooltip(q):
    alpha = q["alpha"]
    interval = ("" if alpha["low"] is None
                else f" [{alpha['low']:.3f}, {alpha['high']:.3f}]")
    return (f"{q['key']}: α {alpha['value']:.3f}{interval}, {q['units']} units, "
            f"{verdict(alpha['low'])} (on the lower bound)")
