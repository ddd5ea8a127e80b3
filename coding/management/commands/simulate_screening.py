import json
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from coding.screening import model as screening_model
from coding.screening.charts import recall_svg
from coding.screening.simulate import LabelledSetError, read_labelled, simulate

FIGURES = ("records_to_95", "records_to_100", "wss_95", "rrf_10", "stop", "stop_recall",
           "stop_saved", "seconds")


class Command(BaseCommand):
    help = ("Replay a fully labelled screening set (an ASReview-style CSV: title, abstract, "
            "label_included) as a screener would, from one include and one exclude drawn by "
            "each seed: records to 95% and 100% recall, WSS@95, RRF@10, and where the "
            "stopping rule would have stopped with the true recall there.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="the labelled CSV")
        parser.add_argument("--seeds", type=int, default=1, help="replays, seeds 0 … n-1")
        parser.add_argument("--model", default=screening_model.DEFAULT,
                            choices=sorted(screening_model.MODELS))
        parser.add_argument("--random-share", type=float, default=0.0,
                            help="share of records served at random (default 0)")
        parser.add_argument("--target", type=float, default=0.95, help="target recall")
        parser.add_argument("--confidence", type=float, default=0.95)
        parser.add_argument("--label-column", default="label_included")
        parser.add_argument("--plot", help="write the recall curve of the first seed as SVG")
        parser.add_argument("--json", action="store_true", help="print JSON, one line a seed")

    def handle(self, *args, file, seeds, model, random_share, target, confidence,
               label_column, plot, json: bool, **options):
        try:
            texts, labels, _ids = read_labelled(file, label_column)
        except (LabelledSetError, OSError) as error:
            raise CommandError(str(error)) from None
        counts = screening_model.features(texts)
        runs = []
        for seed in range(seeds):
            run = simulate(texts, labels, seed=seed, model=model, random_share=random_share,
                           target=target, confidence=confidence, counts=counts)
            runs.append(run)
            if json:
                self.stdout.write(_json({k: run[k] for k in ("seed", "priors", *FIGURES)}))
            else:
                self.stdout.write(f"seed {seed}: " + _words(run))
        if not json and seeds > 1:
            self.stdout.write("mean: " + _words({k: _mean([r[k] for r in runs])
                                                 for k in FIGURES}))
        if plot:
            first = runs[0]
            points = [(i + 1, r) for i, r in enumerate(first["recall"])]
            stop = ((first["stop"], first["stop_recall"]) if first["stop"] else None)
            Path(plot).write_text(recall_svg(
                [(f"{model} (seed 0)", points[::max(1, len(points) // 400)] + points[-1:],
                  len(points))], target=target, stop=stop,
                title=f"Recall curve: {Path(file).name}"), encoding="utf-8")
            self.stderr.write(f"Recall curve written to {plot}.")


def _json(value):
    return json.dumps(value, default=float)


def _mean(values):
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _words(run):
    def show(key, fmt):
        value = run.get(key)
        return "—" if value is None else format(value, fmt)

    return (f"records to 95% recall {show('records_to_95', '.0f')}, to 100% "
            f"{show('records_to_100', '.0f')}, WSS@95 {show('wss_95', '.3f')}, RRF@10 "
            f"{show('rrf_10', '.3f')}; the stopping rule stops after {show('stop', '.0f')} "
            f"records with recall {show('stop_recall', '.3f')} (work saved "
            f"{show('stop_saved', '.3f')}); {show('seconds', '.1f')} s")
