"""items: list a study's items with their states (the item browser's filters), or act on
chosen items as an owner does on the page (coding.items.curate).

    manage.py items STUDY [--state held] [--q TEXT] [--round main] [--kind paper]
                          [--coder USER_ID] [--run RUN_ID] [--after ID] [--limit 50]
    manage.py items STUDY --do exclude --keys 2501.00001,2501.00002 --reason "duplicate"
                          [--ids 17,18] [--user USERNAME]
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.items import browse, curate
from coding.management.studies import study_or_error
from coding.models import Item


class Command(BaseCommand):
    help = ("List a study's items with their states, filtered as on the Items page; or, "
            "with --do, " + ", ".join(curate.ACTIONS) + " the items named by --ids or --keys "
            "(all of them or none, audited).")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        for name in ("q", "state", "round", "kind", "coder", "run", "sample"):
            parser.add_argument(f"--{name}", default="", help=f"filter: {name}")
        parser.add_argument("--after", type=int, help="list items after this id (paging)")
        parser.add_argument("--limit", type=int, default=browse.PAGE)
        parser.add_argument("--do", choices=list(curate.ACTIONS), help="the action")
        parser.add_argument("--ids", default="", help="item ids, comma-separated")
        parser.add_argument("--keys", default="", help="document keys, comma-separated")
        parser.add_argument("--reason", default="", help="why (required to exclude)")
        parser.add_argument("--user", help="the username the audit trail names")

    def handle(self, *args, study, **options):
        found = study_or_error(study)
        if options["do"]:
            return self.act(found, options)
        try:
            filters = browse.parse_filters({k: str(options[k] or "") for k in (
                "q", "state", "round", "kind", "coder", "run", "sample")})
        except browse.FilterError as problem:
            raise CommandError(f"--{problem.field}: {problem}") from None
        rows, after = browse.page_of(found, filters, options["after"],
                                     max(1, min(options["limit"], 1000)))
        for item in rows:
            self.stdout.write(f"{item.pk}\t{item.document.key}\t{item.round}\t"
                              f"{item.state_words}\t{item.document.title[:70]}")
        if after is not None:
            self.stdout.write(f"more: --after {after}")

    def act(self, study, options):
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"No user {options['user']!r}.")
        ids = [i.strip() for i in options["ids"].split(",") if i.strip()]
        keys = [k.strip() for k in options["keys"].split(",") if k.strip()]
        if keys:
            known = dict(Item.objects.filter(study=study, document__key__in=keys)
                         .values_list("document__key", "pk"))
            missing = [k for k in keys if k not in known]
            if missing:
                raise CommandError("No such document in this study: " + ", ".join(missing))
            ids += [known[k] for k in keys]
        try:
            done = curate.apply(study, actor, options["do"], ids, options["reason"])
        except ValidationError as problem:
            lines = [f"  {name}: {' '.join(messages)}"
                     for name, messages in problem.message_dict.items()]
            raise CommandError("Nothing changed.\n" + "\n".join(lines)) from None
        self.stdout.write(f"{options['do']}: {len(done['changed'])} items "
                          f"({', '.join(done['changed'][:10])}"
                          f"{' …' if len(done['changed']) > 10 else ''}).")
