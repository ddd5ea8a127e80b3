from django import forms
from django.utils.translation import gettext_lazy as _

from coding.models import Study


class StudySettingsForm(forms.ModelForm):
    blinded_fields = forms.CharField(
        required=False, label=_("Blinded fields"),
        help_text=_("Content fields removed from everything coders receive, comma-separated."),
        widget=forms.TextInput(attrs={"size": 60}),
    )

    class Meta:
        model = Study
        fields = ["name", "description", "overlap", "lease_minutes", "blinded_fields",
                  "blind_authors", "adjudicators_see_blinded", "allow_self_adjudication",
                  "coders_hold_other_roles", "discussion_step", "show_feedback", "feedback_shows_reasons", "coders_see_names",
                  "adjudicators_see_names", "calibration_threshold"]
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}
        labels = {
            "name": _("Name"), "description": _("Description"), "overlap": _("Overlap"),
            "lease_minutes": _("Lease minutes"), "blind_authors": _("Blind authors"),
            "adjudicators_see_blinded": _("Adjudicators see blinded fields"),
            "allow_self_adjudication": _("Allow self-adjudication"),
            "coders_hold_other_roles": _("Coders may also adjudicate or view"),
            "discussion_step": _("Discussion step"), "show_feedback": _("Show feedback"),
            "feedback_shows_reasons": _("Feedback shows reasons"),
            "coders_see_names": _("Coders see names"),
            "adjudicators_see_names": _("Adjudicators see names"),
            "calibration_threshold": _("Calibration threshold"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial["blinded_fields"] = ", ".join(self.instance.blinded_fields or [])

    def clean_blinded_fields(self):
        # Typed as "a, b, c"; the model's validator checks each name.
        raw = self.cleaned_data["blinded_fields"]
        return [part.strip() for part in raw.split(",") if part.strip()]
