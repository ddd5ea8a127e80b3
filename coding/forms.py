from django import forms

from .models import Study


class StudySettingsForm(forms.ModelForm):
    blinded_fields = forms.CharField(
        required=False,
        help_text="Content fields removed from everything coders receive, comma-separated.",
        widget=forms.TextInput(attrs={"size": 60}),
    )

    class Meta:
        model = Study
        fields = ["name", "description", "overlap", "lease_minutes", "blinded_fields",
                  "blind_authors", "adjudicators_see_blinded", "allow_self_adjudication",
                  "discussion_step", "show_feedback", "feedback_shows_reasons", "coders_see_names",
                  "calibration_threshold"]
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial["blinded_fields"] = ", ".join(self.instance.blinded_fields or [])

    def clean_blinded_fields(self):
        # Typed as "a, b, c"; the model's validator checks each name.
        raw = self.cleaned_data["blinded_fields"]
        return [part.strip() for part in raw.split(",") if part.strip()]
