"""The owner's queue page: who coded how much, what is left, and the reliability sample."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from .. import queue
from ..access import access_study
from ..models import Role


class SampleForm(forms.Form):
    share = forms.FloatField(required=False, min_value=0, max_value=1,
                             help_text="Share of items coded by every overlap coder, e.g. 0.2.")
    count = forms.IntegerField(required=False, min_value=0, help_text="…or a number of items.")
    stratify_by = forms.CharField(required=False, max_length=64,
                                  help_text="Draw in proportion to a field, e.g. kind or categories.")
    seed = forms.IntegerField(required=False, min_value=0,
                              help_text="Leave empty to use the study's recorded seed.")

    def clean(self):
        data = super().clean()
        if (data.get("share") is None) == (data.get("count") is None):
            raise forms.ValidationError("Give either a share or a count.")
        return data


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def queue_page(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    form = SampleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            chosen = queue.draw_reliability_sample(study, **form.cleaned_data, user=request.user)
        except ValueError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Drew a reliability sample of {len(chosen)} items.")
            return redirect("queue", slug=slug)
    return render(request, "coding/queue.html", {
        "study": study, "summary": queue.queue_summary(study), "form": form,
        "rebuilding": queue.rebuilding(study),
    })
