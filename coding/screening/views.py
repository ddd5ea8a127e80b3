"""The screening page: its settings, how far each screener and the study have come, the
stopping rule in words, the curve of includes found, and the owner's stop and resume.

Owners only: the figures are every screener's labels counted, which a coder must not read
(a person who also codes in the study has read others' work, coding.labeling.codings
.record_reads, as on every page that shows it)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from coding.access.names import name_for
from coding.access.roles import access_study
from coding.labeling.codings import record_reads
from coding.models import CodebookVersion, OthersWorkRead, Rater, Role
from coding.screening import model as screening_model
from coding.screening import priors, progress, setup
from coding.screening.charts import recall_svg


def _number(raw, default):
    try:
        return float(raw)
    except (TypeError, ValueError):
        return default


def _questions(study):
    """(key, text, answers) of the study's questions a screening decision may be."""
    found = {}
    versions = (CodebookVersion.objects.filter(codebook__study=study)
                .order_by("published_at", "pk").prefetch_related("questions__options"))
    for version in versions:
        for question in version.questions.all():
            if question.kind in setup.KINDS:
                found[question.key] = (question.key, question.text, setup.answers_of(question))
    return sorted(found.values())


def _curve(report):
    """The study's includes found against records screened, as shares of the total and of
    the includes found so far, and each screener's beside it."""
    total = max(report["total"], 1)
    figures = report["study"]
    if not figures or not figures["screened"] or not figures["includes"]:
        return None
    named = report["named"]
    curves = [(_("the study"), [(n, found / figures["includes"]) for n, found in figures["curve"]],
               total)]
    for row in report["screeners"]:
        if row["includes"]:
            curves.append((named(row["coder"]), [(n, found / row["includes"])
                                                 for n, found in row["curve"]], total))
    return mark_safe(recall_svg(curves, target=None, title=_("Includes found so far"),
                                y_label=_("share of the includes found so far")))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def screening_page(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    errors, status = {}, 200
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "configure":
                setup.configure(
                    study, user=request.user, question=request.POST.get("question", ""),
                    include=[v.strip() for v in request.POST.get("include", "").split(",")
                             if v.strip()],
                    model=request.POST.get("model", screening_model.DEFAULT),
                    random_share=_number(request.POST.get("random_share"), -1),
                    target_recall=_number(request.POST.get("target_recall"), -1),
                    confidence=_number(request.POST.get("confidence"), -1),
                    prior_rater=request.POST.get("prior_rater", ""))
                messages.success(request, _("Screening settings saved."))
            elif action == "stop":
                progress.stop(study, request.user)
                messages.success(request, _("Screening stopped: no more records are served."))
            elif action == "resume":
                progress.resume(study, request.user)
                messages.success(request, _("Screening resumed."))
            elif action == "priors":
                upload = request.FILES.get("file")
                if upload is None:
                    raise setup.SettingsError("file", _("Choose the file of prior labels."))
                counts = priors.use_priors(study, upload.file, user=request.user,
                                           name=upload.name)
                messages.success(request, _("%(rows)s prior labels imported.")
                                 % {"rows": counts["rows"]})
            elif action == "replay":
                seeds = int(_number(request.POST.get("seeds"), 0))
                job = progress.replay_study(study, request.user, seeds=seeds)
                return redirect("job-detail", job.pk)
            else:
                raise setup.SettingsError("action", _("Choose an action."))
        except setup.SettingsError as problem:
            errors, status = {problem.field: str(problem)}, 400
        except (ValueError, UnicodeDecodeError) as problem:
            errors, status = {"screening" if action != "priors" else "file": str(problem)}, 400
        else:
            return redirect(request.path)
    report = progress.progress(study)
    record_reads(study, request.user, OthersWorkRead.Kind.SCREENING)
    report["named"] = name_for(study, study.my_roles)
    settings = report["settings"]
    return render(request, "coding/screening.html", {
        "study": study, "report": report, "settings": settings, "errors": errors,
        "stopped": settings.get("stopped"), "questions": _questions(study),
        "models": [(name, cls.label) for name, cls in screening_model.MODELS.items()],
        "raters": Rater.objects.filter(study=study).order_by("name"),
        "screeners": [{**row, "name": report["named"](row["coder"])}
                      for row in report["screeners"]],
        "chart": _curve(report), "target_percent": round(settings["target_recall"] * 100),
        "confidence_percent": round(settings["confidence"] * 100),
        "include_text": ", ".join(settings["include"]),
    }, status=status)
