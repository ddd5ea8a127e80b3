"""The owner's queue page: who coded how much, what is left, and the reliability sample."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods

from coding.access.roles import access_study
from coding.actions import sample
from coding.items.curate import added_to_sample_by_hand
from coding.labeling import queue
from coding.models import Role


class SampleForm(forms.Form):
    share = forms.FloatField(required=False, min_value=0, max_value=1, label=gettext_lazy("Share"),
                             help_text=gettext_lazy("Share of items coded by every overlap coder, "
                                                    "e.g. 0.2."))
    count = forms.IntegerField(required=False, min_value=0, label=gettext_lazy("Count"),
                               help_text=gettext_lazy("…or a number of items."))
    stratify_by = forms.CharField(required=False, max_length=64, label=gettext_lazy("Stratify by"),
                                  help_text=gettext_lazy("Draw in proportion to a field, e.g. kind "
                                                         "or categories."))
    seed = forms.IntegerField(required=False, min_value=0, label=gettext_lazy("Seed"),
                              help_text=gettext_lazy("Leave empty to use the study's recorded "
                                                     "seed."))

    def clean(self):
        data = super().clean()
        if (data.get("share") is None) == (data.get("count") is None):
            raise forms.ValidationError(_("Give either a share or a count."))
        return data


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def queue_page(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    form = SampleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            chosen = sample.draw_reliability_sample(study, **form.cleaned_data, user=request.user)
        except ValueError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, ngettext("Drew a reliability sample of %(count)s item.",
                                               "Drew a reliability sample of %(count)s items.",
                                               len(chosen)) % {"count": len(chosen)})
            return redirect("queue", slug=slug)
    return render(request, "coding/queue.html", {
        "study": study, "summary": queue.queue_summary(study), "form": form,
        "rebuilding": queue.rebuilding(study),
        "by_hand": added_to_sample_by_hand(study),
    })
