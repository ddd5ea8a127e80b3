"""Importing into a study's pool from the browser, and the study's screening flow."""

import json
import re
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from coding.access.archive import check_open
from coding.access.roles import access_study
from coding.labeling import pool
from coding.models import ImportRun, Item, Role
from ingest.imports import FILE_FORMATS, LIVE_FORMATS, check_params
from ingest.samples import NOTES, SAMPLES
from workbench import jobs, storage

FORMAT_LABELS = {
    "arxiv_snapshot_file": gettext_lazy("arXiv metadata snapshot (JSON Lines, .gz allowed)"),
    "arxiv_atom_file": gettext_lazy("arXiv API response (Atom XML)"),
    "arxiv_oai_file": gettext_lazy("arXiv OAI-PMH response (arXiv or arXivRaw)"),
    "github_file": gettext_lazy("Saved GitHub threads (JSON or JSON Lines)"),
    "csv_file": gettext_lazy("CSV with a column mapping"),
    "jsonl_file": gettext_lazy("JSON Lines with a field mapping"),
    "ris_file": gettext_lazy("RIS (Zotero, EndNote, Mendeley)"),
    "asreview_csv_file": gettext_lazy("ASReview-style CSV (title, abstract, doi, authors, "
                                      "year)"),
    "arxiv_api": gettext_lazy("Live: arXiv API search"),
    "arxiv_oai": gettext_lazy("Live: arXiv OAI-PMH harvest"),
    "github": gettext_lazy("Live: a GitHub repository's issues and pull requests"),
}


# The kind of document each format reads (the mapped tables may hold either).
FORMAT_KINDS = {fmt: ("thread",) if fmt.startswith("github") else
                ("paper", "thread") if fmt in ("csv_file", "jsonl_file") else ("paper",)
                for fmt in FILE_FORMATS + LIVE_FORMATS}


def unpoolable_formats(study):
    """The formats whose documents would not join the study's pool (no codebook for their
    kind), and the words that say so; ([], None) when every kind has one."""
    missing = pool.missing_kinds(study)
    if not missing:
        return [], None
    formats = [fmt for fmt, kinds in FORMAT_KINDS.items() if set(kinds) & set(missing)]
    return formats, pool.no_codebook_words(study)


FIELD_FORMATS = {"file": FILE_FORMATS, "mapping": ("csv_file", "jsonl_file"),
                 "search_query": ("arxiv_api",), "oai_set": ("arxiv_oai",),
                 "repository": ("github",), "since": ("arxiv_oai", "github")}


class ImportForm(forms.Form):
    format = forms.ChoiceField(label=gettext_lazy("Format"),
                               choices=[(f, FORMAT_LABELS[f]) for f in FILE_FORMATS + LIVE_FORMATS])
    round = forms.ChoiceField(
        label=gettext_lazy("Add new documents to"), initial=Item.Round.MAIN, required=False,
        choices=[(Item.Round.MAIN, gettext_lazy("the main round")),
                 (Item.Round.CALIBRATION, gettext_lazy(
                     "calibration: every coder codes them first, against your reference answers"))],
        help_text=gettext_lazy("Documents already in the pool keep their round."))
    file = forms.FileField(required=False, label=gettext_lazy("File"),
                           help_text=gettext_lazy("For the file formats."))
    mapping = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                              label=gettext_lazy("Mapping"), help_text=gettext_lazy(
                                  'CSV / JSON Lines: JSON mapping of fields to columns, '
                                  'e.g. {"key": "id", "title": "title"}.'))
    search_query = forms.CharField(required=False, label=gettext_lazy("Search query"),
                                   help_text=gettext_lazy("arXiv API, e.g. cat:cs.LG AND abs:policy"))
    oai_set = forms.CharField(required=False, label=gettext_lazy("OAI set"),
                              help_text=gettext_lazy("e.g. cs"))
    repository = forms.CharField(required=False, label=gettext_lazy("Repository"),
                                 help_text=gettext_lazy("GitHub owner/name"))
    since = forms.CharField(required=False, label=gettext_lazy("Since"),
                            help_text=gettext_lazy("Live sources: from this date (YYYY-MM-DD)"))
    date_from = forms.DateField(required=False, label=gettext_lazy("Screening: first version from"))
    date_to = forms.DateField(required=False, label=gettext_lazy("Screening: first version until"))
    categories = forms.CharField(required=False, label=gettext_lazy("Categories"),
                                 help_text=gettext_lazy("arXiv categories, comma-separated"))
    query = forms.CharField(required=False, label=gettext_lazy("Query"), help_text=gettext_lazy(
        "Keywords (comma-separated, any) over title and abstract, or a regular expression"))
    regex = forms.BooleanField(required=False, label=gettext_lazy("The query is a regular expression"))
    strict = forms.BooleanField(required=False, label=gettext_lazy("Stop at the first bad record"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Which formats use a field: the page shows only those of the chosen format.
        for name, formats in FIELD_FORMATS.items():
            self.fields[name].formats = formats

    def clean(self):
        data = super().clean()
        fmt = data.get("format")
        if fmt in FILE_FORMATS and not data.get("file"):
            self.add_error("file", _("Choose a file for this format."))
        try:
            self.screening = pool.Screening.from_dict({
                "date_from": data.get("date_from"), "date_to": data.get("date_to"),
                "categories": (data.get("categories") or "").split(","),
                "query": data.get("query"), "regex": data.get("regex")})
        except ValueError as error:
            self.add_error("query", str(error))
        if fmt in ("csv_file", "jsonl_file"):
            try:
                data["mapping"] = json.loads(data.get("mapping") or "null")
            except json.JSONDecodeError as error:
                self.add_error("mapping", _("Not JSON: %(error)s") % {"error": error})
        return data


def source_params(data, stored=None):
    fmt = data["format"]
    params = {"format": fmt, "strict": data.get("strict", False)}
    if stored:
        params["stored"] = stored
    if fmt in ("csv_file", "jsonl_file"):
        params["mapping"] = data.get("mapping")
    if fmt == "arxiv_api":
        params["search_query"] = data.get("search_query")
    if fmt == "arxiv_oai":
        params.update({"metadata_prefix": "arXiv", "set": data.get("oai_set") or None,
                       "from": data.get("since") or None})
    if fmt == "github":
        params.update({"repository": data.get("repository"), "since": data.get("since") or None})
    return params


# Saved names are bounded in bytes: file systems refuse names over 255 bytes, and a
# name of 255 accented characters is 510 (Django bounds them in characters only).
MAX_NAME_BYTES = 120


def upload_name(name):
    """A name to save an upload under: no directory part, no control characters, bounded,
    keeping the suffixes (`.jsonl.gz`) that tell the readers what the file is."""
    name = re.sub(r"[\x00-\x1f\x7f]", "_", Path(name or "").name).strip()
    if name in ("", ".", ".."):
        name = "upload"
    suffix = "".join(Path(name).suffixes[-2:])
    if len(suffix.encode()) > 40:
        suffix = ""
    stem = name[:len(name) - len(suffix)]
    while stem and len((stem + suffix).encode()) > MAX_NAME_BYTES:
        stem = stem[:-1]
    return (stem or "upload") + suffix


def in_import_folder(path):
    """A server path named from a page or the API, taken inside the import folder
    (settings.IMPORT_DIR) and refused (ValueError) if it leads out of it: an owner may use
    the files and clones an administrator put there, not any file the server can read.
    The management commands, run by whoever has the shell, take any path."""
    root = Path(settings.IMPORT_DIR).resolve()
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise ValueError(_("give the name of a file or folder in the import folder"))
    try:
        target = (root / path).resolve()
    except (OSError, RuntimeError) as error:  # a symlink loop, a name too long
        raise ValueError(_("%(path)r cannot be used: %(problem)s")
                         % {"path": path[:200], "problem": error}) from None
    if not target.is_relative_to(root):
        raise ValueError(_("%(path)r is outside the server's import folder; upload the file "
                           "instead, or ask an administrator to place it in "
                           "WORKBENCH_IMPORT_DIR") % {"path": path[:200]})
    return str(target)


def named_import_file(study, source):
    """A file named by `path` in an import source, confined: with local files, inside the
    import folder (in_import_folder); with an object store, under the study's own key
    prefix imports/<slug>/ (the worker reads it from there)."""
    if "path" not in source:
        return source
    source = dict(source)
    path = source.pop("path")
    if storage.is_remote():
        source["stored"] = storage.import_key(study.slug, path)
    else:
        source["path"] = in_import_folder(path)
    return source


def save_upload(study, upload):
    """Store the uploaded file for the study's import; returns its key (workbench.storage)."""
    return storage.save_upload(storage.upload_key(study.slug, upload_name(upload.name)), upload)


def check_stored(study, source):
    """A stored source must be the study's own and be there (ValueError otherwise)."""
    key = source.get("stored")
    if key is None:
        return
    if not storage.owned_by(key, study.slug):
        raise ValueError(_("the stored file is not one of this study's"))
    if not (storage.exists(key) or storage.walk(key)):
        raise ValueError(_("nothing is stored as %(name)r in the study's import folder")
                         % {"name": key.split("/", 2)[-1][:200]})


def start_import(study, user, source, screening, round=Item.Round.MAIN):
    check_open(study)
    check_params(source)
    check_stored(study, source)
    # The job writes its log in the language its starter reads here: the page's (the
    # owner's choice), English from the API and the commands (coding.labeling.pool.run_import_job).
    return jobs.enqueue("import_to_study", {
        "study": study.pk, "study_slug": study.slug, "study_name": study.name, "source": source,
        "screening": screening.to_dict(), "round": round,
        "language": translation.get_language()}, user=user)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def import_page(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    # The format of the study's last import stays chosen: a team imports one kind of file
    # again and again (issue 39, finding 7).
    last = (ImportRun.objects.filter(study=study).order_by("-pk")
            .values_list("params__format", flat=True).first())
    form = ImportForm(request.POST or None, request.FILES or None,
                      initial={"round": request.GET.get("round", Item.Round.MAIN),
                               **({"format": last} if last in FORMAT_LABELS else {})})
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data.get("file")
        stored = save_upload(study, upload) if upload else None
        try:
            job = start_import(study, request.user, source_params(form.cleaned_data, stored),
                               form.screening, form.cleaned_data["round"] or Item.Round.MAIN)
        except ValueError as error:
            form.add_error(None, str(error))
        else:
            return redirect("job-detail", pk=job.pk)
    flow = pool.screening_flow(study)
    for run in flow["runs"]:
        run.format_label = FORMAT_LABELS.get(run.params.get("format"), run.params.get("format"))
        run.screening_words = [(form.fields[key].label if key in form.fields else key, value)
                               for key, value in run.screening.items() if value]
    unpoolable, unpoolable_words = unpoolable_formats(study)
    return render(request, "coding/import.html", {
        "study": study, "form": form, "flow": flow, "rules": pool.RULES,
        "samples": [(fmt, FORMAT_LABELS[fmt], text, NOTES[fmt]) for fmt, text in SAMPLES.items()],
        "unpoolable": unpoolable, "unpoolable_words": unpoolable_words,
    })
