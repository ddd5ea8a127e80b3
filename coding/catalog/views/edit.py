"""Editing the method catalog (methods, option names) and frameworks: pages.

One page, owners only: the methods and frameworks as tables, one of them opened for
editing at a time (`?method=<id>`, `?framework=<id>`), and a form to add each. Every
write goes through coding.catalog.edit, as the API and `manage.py catalog` do.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.catalog import edit as catalog_edit
from coding.models import Landing, Method, OptionName, Role
from coding.studies.presets import FAILURES


def access_catalog_editor(user, slug):
    """The study if the user owns it (and, as for reading the catalog, may see framework
    inclusion: coding.access.blinding decides)."""
    study = access_study(user, slug, roles={Role.OWNER})
    check_inclusion_visible(study, study.my_roles)
    return study


class MethodForm(forms.Form):
    name = forms.CharField(required=False, label=gettext_lazy("Name"))
    first_public = forms.CharField(required=False, label=gettext_lazy("First public"),
                                   help_text=gettext_lazy("YYYY-MM-DD, or YYYY-MM, or YYYY"))
    source_arxiv_id = forms.CharField(required=False, label=gettext_lazy("Source arXiv id"),
                                      help_text=gettext_lazy("e.g. 2503.14476; may be empty"))
    failure_addressed = forms.CharField(required=False, label=gettext_lazy("Failure addressed"))
    position = forms.CharField(required=False, label=gettext_lazy("Order"),
                               help_text=gettext_lazy("Methods are listed by this number"))

    def __init__(self, *args, frameworks=(), names=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.frameworks = list(frameworks)
        for framework in self.frameworks:
            self.fields[f"names_{framework.pk}"] = forms.CharField(
                required=False, label=framework.name,
                initial=", ".join((names or {}).get(framework.pk, [])))

    def names_fields(self):
        return [self[f"names_{f.pk}"] for f in self.frameworks]

    def fields_sent(self):
        """The method's fields this form was sent with (a field left out keeps its value)."""
        return {name: self.cleaned_data[name] for name in MethodForm.base_fields
                if name in self.data}

    def names_by_framework(self):
        """{framework: [names]} for the frameworks whose field was sent; others stay as
        they are."""
        return {f: [n for n in self.cleaned_data[f"names_{f.pk}"].split(",") if n.strip()]
                for f in self.frameworks if f"names_{f.pk}" in self.data}

    def add_errors(self, error):
        by_name = {f"option_names.{f.name}": f"names_{f.pk}" for f in self.frameworks}
        for field, messages_ in error.message_dict.items():
            field = by_name.get(field, field)
            for message in messages_:
                self.add_error(field if field in self.fields else None, message)


class FrameworkForm(forms.Form):
    name = forms.CharField(required=False, label=gettext_lazy("Name"))
    repository = forms.CharField(required=False, label=gettext_lazy("Repository"),
                                 help_text=gettext_lazy("owner/name on GitHub"))
    main_branch = forms.CharField(required=False, label=gettext_lazy("Default branch"),
                                  initial="main",
                                  help_text=gettext_lazy("The branch whose history is scanned"))

    def add_errors(self, error):
        for field, messages_ in error.message_dict.items():
            for message in messages_:
                self.add_error(field if field in self.fields else None, message)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def catalog_edit_page(request, slug):
    study = access_catalog_editor(request.user, slug)
    frameworks = sorted(study.frameworks.select_related("scan"), key=lambda f: f.name.lower())
    methods = list(Method.objects.filter(study=study).prefetch_related("option_names"))
    state = {"method_form": None, "framework_form": None, "confirm": None}
    if request.method == "POST":
        done = handle(request, study, methods, frameworks, state)
        if done:
            return done
    return render(request, "coding/catalog_edit.html",
                  context(request, study, methods, frameworks, state))


def handle(request, study, methods, frameworks, state):
    """Do the POSTed action; a redirect when done, None to show the page with its errors."""
    action, user, data = request.POST.get("action"), request.user, request.POST
    confirm = data.get("confirm") == "yes"
    method = (_pick(methods, data.get("method_id"))
              if action in ("edit-method", "remove-method") else None)
    framework = (_pick(frameworks, data.get("framework_id"))
                 if action in ("edit-framework", "remove-framework") else None)
    try:
        if action in ("add-method", "edit-method"):
            form = MethodForm(data, frameworks=frameworks)
            state["method_form"], state["editing_method"] = form, method
            form.is_valid()
            saved = catalog_edit.save_method_and_names(
                study, user, form.fields_sent(), form.names_by_framework(), method, confirm)
            return _done(request, study, saved_words(saved.name, method), "methods")
        if action == "remove-method":
            state["editing_method"] = method
            catalog_edit.remove_method(method, user, confirm)
            return _done(request, study, _("%(name)s removed.") % {"name": method.name},
                         "methods")
        if action in ("add-framework", "edit-framework"):
            form = FrameworkForm(data)
            state["framework_form"], state["editing_framework"] = form, framework
            form.is_valid()
            sent = {name: value for name, value in form.cleaned_data.items() if name in data}
            saved = catalog_edit.save_framework(study, user, sent, framework)
            return _done(request, study, saved_words(saved.name, framework), "frameworks")
        if action == "remove-framework":
            state["editing_framework"] = framework
            catalog_edit.remove_framework(framework, user, confirm)
            return _done(request, study, _("%(name)s removed.") % {"name": framework.name},
                         "frameworks")
    except ValidationError as error:
        (state["method_form"] or state["framework_form"]).add_errors(error)
        return None
    except catalog_edit.NeedsConfirmation as needed:
        state["confirm"] = {"action": action, "removes": needed.removes, "data": data}
        return None
    messages.error(request, _("Nothing was changed: the form sent no action this page knows."))
    return redirect("catalog-edit", slug=study.slug)


def saved_words(name, existing):
    if existing:
        return _("%(name)s saved.") % {"name": name}
    return _("%(name)s added.") % {"name": name}


def _pick(objects, pk):
    """The object of this study with id `pk` (from the page's own lists): 404 otherwise,
    so an id from another study is never touched."""
    found = next((o for o in objects if str(o.pk) == str(pk)), None)
    if found is None:
        raise Http404(_("No such method or framework in this study."))
    return found


def _done(request, study, text, anchor):
    messages.success(request, text)
    return redirect(reverse("catalog-edit", args=[study.slug]) + f"#{anchor}")


def context(request, study, methods, frameworks, state):
    """The page: fixed queries whatever the number of methods and frameworks."""
    by_id = {f.pk: f for f in frameworks}
    landed = {(row["method_id"], row["framework_id"]) for row in
              Landing.objects.filter(method__study=study).values("method_id", "framework_id")}
    names_in = dict(OptionName.objects.filter(framework__study=study).values_list("framework_id")
                    .annotate(n=Count("pk")))
    rows = []
    for method in methods:
        names = {}
        for option in method.option_names.all():
            names.setdefault(option.framework_id, []).append(option.name)
        rows.append({"method": method, "landings": sorted(by_id[f].name for m, f in landed
                                                          if m == method.pk),
                     "names": [(by_id[f], sorted(n)) for f, n in
                               sorted(names.items(), key=lambda pair: by_id[pair[0]].name.lower())],
                     "initial": names})
    editing = _editing(request, state, rows, frameworks)
    return {
        "study": study, "rows": rows, "failures": [label for _, label in FAILURES],
        "frameworks": [{"framework": f, "names": names_in.get(f.pk, 0),
                        "landings": sum(1 for _, fw in landed if fw == f.pk)}
                       for f in frameworks],
        **editing, "confirm": state["confirm"],
    }


def _editing(request, state, rows, frameworks):
    """Which method and framework are open for editing, and the forms: after a refused
    change the POSTed form with its errors, otherwise one filled from the database."""
    posted, method = state["method_form"], state.get("editing_method")
    method = method or _pick_from([r["method"] for r in rows], request.GET.get("method"))
    if posted and state.get("editing_method"):
        method_form = posted
    elif method:
        names = next(r["initial"] for r in rows if r["method"].pk == method.pk)
        method_form = MethodForm(initial={f: getattr(method, f) for f in MethodForm.base_fields},
                                 frameworks=frameworks, names=names)
    else:
        method_form = None
    add_method = posted if posted and not state.get("editing_method") else MethodForm(
        frameworks=frameworks)

    posted, framework = state["framework_form"], state.get("editing_framework")
    framework = framework or _pick_from(frameworks, request.GET.get("framework"))
    if posted and state.get("editing_framework"):
        framework_form = posted
    elif framework:
        framework_form = FrameworkForm(initial={f: getattr(framework, f)
                                                for f in FrameworkForm.base_fields})
    else:
        framework_form = None
    add_framework = posted if posted and not state.get("editing_framework") else FrameworkForm()
    return {"editing_method": method, "method_form": method_form,
            "add_method_form": add_method, "add_method_open": add_method.is_bound,
            "editing_framework": framework, "framework_form": framework_form,
            "add_framework_form": add_framework, "add_framework_open": add_framework.is_bound}


def _pick_from(objects, pk):
    return next((o for o in objects if pk and str(o.pk) == pk), None)


urlpatterns = [
    path("studies/<slug:slug>/catalog/edit/", catalog_edit_page, name="catalog-edit"),
]
