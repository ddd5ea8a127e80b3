import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.labeling import calibration
from coding.management.studies import study_or_error
from coding.models import Item


class Command(BaseCommand):
    help = ("Set a study's calibration up: add or remove calibration items by document key, "
            "set an item's reference answer from a JSON file, the pass threshold, waivers; "
            "--status prints the items and each coder's results.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--add", nargs="+", metavar="KEY",
                            help="move these uncoded main-round items into calibration")
        action.add_argument("--remove", nargs="+", metavar="KEY",
                            help="move these calibration items nobody coded back to the main round")
        action.add_argument("--reference", nargs=2, metavar=("KEY", "FILE"),
                            help='the item\'s reference answer: a JSON object of question key '
                                 'to answer, e.g. {"label": "rl_method"}')
        action.add_argument("--threshold", type=float,
                            help="share of matching answers needed to pass, 0 to 1 (e.g. 0.8)")
        action.add_argument("--waive", metavar="USERNAME",
                            help="let this coder go on to the main round whatever their score")
        action.add_argument("--require", metavar="USERNAME",
                            help="take a waiver back: the coder must pass again")
        action.add_argument("--status", action="store_true",
                            help="print the calibration items and each coder's results")

    def handle(self, *args, **options):
        study = study_or_error(options["study"])
        try:
            self.act(study, options)
        except ValidationError as error:
            raise CommandError(described(error)) from error

    def act(self, study, options):
        if options["add"]:
            added = calibration.add_items(study, None, keys=options["add"])
            self.stdout.write(f"Added to calibration: {', '.join(added['added']) or 'none'}.")
            if added["already"]:
                self.stdout.write(f"Already in calibration: {', '.join(added['already'])}.")
        elif options["remove"]:
            for key in options["remove"]:
                calibration.remove_item(study, self.item(study, key), None)
                self.stdout.write(f"{key} is back in the main round.")
        elif options["reference"]:
            key, path = options["reference"]
            item = self.item(study, key)
            values = read_json(path)
            calibration.set_reference(item, values, None)
            self.stdout.write(f"Reference answer saved for {key}.")
        elif options["threshold"] is not None:
            calibration.change(study, None, threshold=options["threshold"])
            self.stdout.write(f"Pass threshold of {study.slug}: {options['threshold']:.0%}.")
        elif options["waive"] or options["require"]:
            name = options["waive"] or options["require"]
            calibration.change(study, None, waived={name: bool(options["waive"])})
            self.stdout.write(f"Calibration {'waived' if options['waive'] else 'required'} "
                              f"for {name}.")
        else:
            self.status(study)

    def item(self, study, key):
        item = (Item.objects.alive().filter(study=study, document__key=key)
                .select_related("document", "codebook").first())
        if item is None:
            raise CommandError(f"No document {key!r} in the pool of {study.slug}.")
        if item.round != Item.Round.CALIBRATION:
            raise CommandError(f"{key} is not a calibration item (add it with --add).")
        item.study = study
        return item

    def status(self, study):
        items = calibration.calibration_items(study)
        self.stdout.write(f"Calibration of {study.slug}: {len(items)} items, pass threshold "
                          f"{study.calibration_threshold:.0%}.")
        for item in items:
            reference = "reference entered" if item.reference_values else "NO REFERENCE"
            self.stdout.write(f"  {item.document.key:<30} {reference:<18} "
                              f"{item.finished} coder(s) finished")
        self.stdout.write("Coders:")
        for row in calibration.results(study):
            score = "–" if row["score"] is None else f"{row['score']:.0%}"
            self.stdout.write(f"  {row['coder'].username:<20} {row['done']}/{row['total']} done  "
                              f"score {score:<5} {row['status']}")
            for question, differences in row["differences"].items():
                self.stdout.write(f"      differed on {question}: "
                                  + ", ".join(d["document_key"] for d in differences))


def read_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
    except (ValueError, RecursionError) as error:
        raise CommandError(f"{path} is not JSON: {error}") from None


def described(error):
    if hasattr(error, "error_dict"):
        return "; ".join(f"{key}: {' '.join(messages)}"
                         for key, messages in error.message_dict.items())
    return " ".join(error.messages)
