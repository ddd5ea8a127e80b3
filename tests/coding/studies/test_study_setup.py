"""Running your own study: creating (blank, preset, copy), renaming, archiving and restoring,
the owner's checklist and audit trail (issue 14).

The people are conftest's: olive owns alpha, cora and cyril code it, ada adjudicates, vera
views, otto is an outsider (he codes beta). Creating needs `coding.create_study` (or
staff); `creator` grants it.
"""

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from coding.access.roles import may_create_study
from coding.codebooks.versions import draft_new_version, publish
from coding.labeling import queue
from coding.models import (
    Assignment, AuditEntry, Codebook, Coding, Decision, Framework, ImportRun, Item, Membership,
    Method, OptionName, Role, Study,
)
from coding.studies import setup as study_setup
from tests import factories


def grant(user):
    user.user_permissions.add(
        Permission.objects.get(codename="create_study", content_type__app_label="coding"))
    return type(user).objects.get(pk=user.pk)  # a fresh object: permissions are cached


@pytest.fixture
def creator(people):
    """olive, allowed to create studies."""
    return grant(people["olive"])


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def studies_named(name):
    return Study.objects.filter(name=name)


# --- who may create ---------------------------------------------------------------------

@pytest.mark.parametrize("who", ["cora", "vera", "ada", "otto"])
def test_a_user_without_the_permission_gets_403_on_the_page_and_the_api(people, alpha,
                                                                        client_for, who):
    user = people[who]
    client = client_for(user)
    assert client.get("/studies/new/").status_code == 403
    assert client.post("/studies/new/", {"name": "Mine", "start": "blank"}).status_code == 403
    assert api(user).post("/api/studies/", {"name": "Mine"}, format="json").status_code == 403
    assert not studies_named("Mine").exists()


def test_even_the_owner_of_a_study_needs_the_permission(people, alpha, client_for):
    assert client_for(people["olive"]).get("/studies/new/").status_code == 403


def test_staff_may_create_studies_by_default(people, client_for):
    staff = factories.user("stella")
    staff.is_staff = True
    staff.save()
    response = client_for(staff).post("/studies/new/", {"name": "Staff study", "start": "blank"})
    assert response.status_code == 302
    assert Membership.objects.filter(study__name="Staff study", user=staff,
                                     role=Role.OWNER).exists()


def test_grant_and_revoke_the_permission_by_command(people):
    cora = people["cora"]
    call_command("grant_study_creation", "cora")
    assert may_create_study(type(cora).objects.get(pk=cora.pk))
    call_command("grant_study_creation", "cora", "--revoke")
    assert not may_create_study(type(cora).objects.get(pk=cora.pk))
    assert list(AuditEntry.objects.filter(study=None).values_list("action", "target")) == [
        ("permission.revoke", "cora"), ("permission.grant", "cora")]
    with pytest.raises(CommandError):
        call_command("grant_study_creation", "nobody")


# --- creating -----------------------------------------------------------------------------

def test_a_blank_study_is_owned_by_its_creator_and_audited(creator, client_for):
    response = client_for(creator).post("/studies/new/", {
        "name": "My own study", "description": "Which papers?", "start": "blank"})
    study = Study.objects.get(name="My own study")
    assert response["Location"] == f"/studies/{study.slug}/"
    assert study.description == "Which papers?" and study.created_by == creator
    assert list(study.memberships.values_list("user__username", "role")) == [("olive", "owner")]
    assert not study.codebooks.exists() and not study.frameworks.exists()
    entry = AuditEntry.objects.get(study=study)
    assert (entry.action, entry.actor, entry.target) == ("study.create", creator, "My own study")


def test_the_rl_inclusion_preset_brings_codebooks_catalog_and_blinding(creator):
    response = api(creator).post("/api/studies/", {"name": "RL study", "preset": "rl-inclusion"},
                                 format="json")
    assert response.status_code == 201, response.content
    assert response.json()["my_roles"] == ["owner"]
    study = Study.objects.get(slug=response.json()["slug"])
    books = {b.applies_to: b for b in study.codebooks.all()}
    assert set(books) == {"paper", "thread"}
    assert all(b.current_version().number == 1 for b in books.values())
    assert "label" in set(books["paper"].current_version().questions.values_list("key", flat=True))
    assert study.frameworks.count() == 7 and study.methods.count() == 12
    assert OptionName.objects.filter(method__study=study, name="clip_ratio_high").exists()
    assert "included_in" in study.blinded_fields and "state" in study.blinded_fields
    entry = AuditEntry.objects.get(study=study)
    assert entry.details["preset"] == "rl-inclusion"


def test_the_thread_preset_has_the_thread_codebook_only(creator, client_for):
    client_for(creator).post("/studies/new/", {"name": "Threads", "start": "threads"})
    study = Study.objects.get(name="Threads")
    assert list(study.codebooks.values_list("applies_to", flat=True)) == ["thread"]
    assert not study.frameworks.exists() and "included_in" not in study.blinded_fields
    assert "state" in study.blinded_fields


@pytest.mark.parametrize("body, field", [
    ({}, "name"),
    ({"name": "   "}, "name"),
    ({"name": "x" * 201}, "name"),
    ({"name": "A", "preset": "nonsense"}, "preset"),
    ({"name": "A", "preset": "threads", "copy_of": "alpha-study"}, "preset"),
])
def test_bad_input_is_a_located_400_and_creates_nothing(creator, alpha, body, field):
    before = Study.objects.count()
    response = api(creator).post("/api/studies/", body, format="json")
    assert response.status_code == 400 and field in response.json()
    assert Study.objects.count() == before


def test_the_page_shows_errors_beside_the_fields(creator, client_for):
    response = client_for(creator).post("/studies/new/", {"name": "", "start": "blank"})
    assert response.status_code == 200 and "This field is required" in response.content.decode()


# --- copies -------------------------------------------------------------------------------

@pytest.mark.parametrize("who, status", [("cora", 403), ("vera", 403), ("ada", 403),
                                         ("otto", 404)])
def test_nobody_copies_a_study_they_do_not_own(people, alpha, client_for, who, status):
    user = grant(people[who])
    page = client_for(user).post("/studies/new/", {"name": "Stolen", "start": "copy",
                                                   "copy_of": alpha.slug})
    assert page.status_code == status
    response = api(user).post("/api/studies/", {"name": "Stolen", "copy_of": alpha.slug},
                              format="json")
    assert response.status_code == status
    assert not studies_named("Stolen").exists()


def test_the_page_offers_only_studies_you_own_to_copy(people, alpha, beta, client_for):
    html = client_for(grant(people["otto"])).get("/studies/new/").content.decode()
    assert "Beta study" not in html  # otto codes beta, he does not own it
    assert "Alpha study" not in html
    html = client_for(grant(people["olive"])).get("/studies/new/").content.decode()
    assert "Alpha study" in html


def test_a_copy_never_carries_items_codings_decisions_or_members(creator, alpha, people,
                                                                 client_for):
    factories.code(alpha.papers[0], people["cora"])
    factories.code(alpha.papers[0], people["cyril"])
    queue.assign(alpha.papers[1], people["cora"])
    assert Decision.objects.filter(item__study=alpha).exists()
    response = client_for(creator).post("/studies/new/", {"name": "Alpha again", "start": "copy",
                                                          "copy_of": alpha.slug})
    assert response.status_code == 302
    copy = Study.objects.get(name="Alpha again")
    assert not Item.objects.filter(study=copy).exists()
    assert not Assignment.objects.filter(study=copy).exists()
    assert not Coding.objects.filter(assignment__item__study=copy).exists()
    assert not Decision.objects.filter(item__study=copy).exists()
    assert list(copy.memberships.values_list("user__username", "role")) == [("olive", "owner")]
    assert copy.reliability_sample == {} and not copy.audit_entries.exclude(
        action="study.create").exists()


def test_a_copy_takes_settings_published_codebooks_and_the_catalog(creator, alpha, people):
    Study.objects.filter(pk=alpha.pk).update(
        overlap=3, blinded_fields=["state"], blind_authors=True, show_feedback=True,
        discussion_step=True, coders_see_names=True, calibration_threshold=0.9)
    alpha.refresh_from_db()
    v2 = draft_new_version(alpha.paper_codebook, note="second")
    publish(v2)
    draft_new_version(alpha.paper_codebook, note="unpublished draft")  # v3, a draft
    Codebook.objects.create(study=alpha, name="Only drafts", applies_to="thread").versions.create(
        number=1)
    verl = Framework.objects.create(study=alpha, name="verl", repository="verl-project/verl",
                                    main_branch="develop")
    method = Method.objects.create(study=alpha, name="GSPO", first_public="2025-07-24")
    OptionName.objects.create(method=method, framework=verl, name="gspo")

    copy = study_setup.create_study(creator, "Copy", copy_of=alpha)

    for name in study_setup.COPIED_SETTINGS:
        assert getattr(copy, name) == getattr(alpha, name), name
    book = copy.codebooks.get()
    assert book.name == alpha.paper_codebook.name
    version = book.versions.get()
    assert (version.number, version.is_published) == (1, True)
    assert "v2" in version.note and alpha.name in version.note
    assert list(version.questions.values_list("key", flat=True)) == list(
        v2.questions.values_list("key", flat=True))
    assert Framework.objects.get(study=copy).main_branch == "develop"
    assert OptionName.objects.get(method__study=copy).framework.study == copy
    details = AuditEntry.objects.get(study=copy).details
    assert details["copy_of"] == alpha.slug
    assert details["not_copied_unpublished"] == ["Only drafts"]


def test_a_copy_by_command_needs_the_owner_to_own_the_source(alpha, people, capsys):
    with pytest.raises(CommandError, match="does not own"):
        call_command("create_study", "Copy", "--owner", "cora", "--copy-of", alpha.slug)
    call_command("create_study", "Copy", "--owner", "olive", "--copy-of", alpha.slug)
    assert Study.objects.get(name="Copy").codebooks.count() == 1
    call_command("create_study", "Preset study", "--owner", "cora", "--preset", "threads")
    made = Study.objects.get(name="Preset study")
    assert made.roles_of(people["cora"]) == {Role.OWNER}
    assert "created preset-study" in capsys.readouterr().out.lower()


# --- slugs --------------------------------------------------------------------------------

def test_slugs_are_unique_even_against_removed_studies_and_page_names(creator):
    first = study_setup.create_study(creator, "Same name")
    second = study_setup.create_study(creator, "Same name")
    Study.objects.filter(pk=second.pk).update(deleted_at=timezone.now())
    third = study_setup.create_study(creator, "Same name")
    assert [first.slug, second.slug, third.slug] == ["same-name", "same-name-2", "same-name-3"]
    assert study_setup.create_study(creator, "New").slug == "new-2"
    assert study_setup.create_study(creator, "!!!").slug == "study"
    assert study_setup.create_study(creator, "Étude über Ähnlichkeit").slug == \
        "etude-uber-ahnlichkeit"
    assert len(study_setup.create_study(creator, "long " * 40).slug) <= 80


def test_the_new_study_page_is_not_taken_for_a_study_called_new(creator, client_for):
    study_setup.create_study(creator, "New")
    assert client_for(creator).get("/studies/new/").status_code == 200


# --- renaming -----------------------------------------------------------------------------

def test_renaming_on_the_settings_page_is_audited_with_from_and_to(alpha, people, client_for):
    from coding.studies.forms import StudySettingsForm

    data = StudySettingsForm(instance=alpha).initial
    data = {k: v for k, v in data.items() if k in StudySettingsForm.Meta.fields and v is not None}
    data.update(name="Alpha, renamed", description="Now with a description.", overlap=3)
    data = {k: v for k, v in data.items() if v is not False}
    response = client_for(people["olive"]).post(f"/studies/{alpha.slug}/settings/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    entries = {e.action: e for e in AuditEntry.objects.filter(study=alpha)}
    assert entries["study.rename"].details == {"from": "Alpha study", "to": "Alpha, renamed"}
    assert entries["study.describe"].details == {"from": "", "to": "Now with a description."}
    assert entries["study.settings"].details == {"overlap": {"from": 2, "to": 3}}
    assert entries["study.rename"].actor == people["olive"]


def test_renaming_through_the_api_is_audited_and_nothing_else_is_written(alpha, people):
    response = api(people["olive"]).patch(f"/api/studies/{alpha.slug}/",
                                          {"name": "Alpha prime"}, format="json")
    assert response.status_code == 200 and response.json()["name"] == "Alpha prime"
    assert list(AuditEntry.objects.filter(study=alpha).values_list("action", "details")) == [
        ("study.rename", {"from": "Alpha study", "to": "Alpha prime"})]
    api(people["olive"]).patch(f"/api/studies/{alpha.slug}/", {"name": "Alpha prime"},
                               format="json")
    assert AuditEntry.objects.filter(study=alpha).count() == 1  # no change, no entry


@pytest.mark.parametrize("who, status", [("cora", 403), ("vera", 403), ("ada", 403),
                                         ("otto", 404)])
def test_only_owners_rename_archive_or_restore(alpha, people, client_for, who, status):
    user = people[who]
    client = client_for(user)
    assert client.post(f"/studies/{alpha.slug}/settings/", {"name": "Hijacked"}).status_code \
        == status
    assert api(user).patch(f"/api/studies/{alpha.slug}/", {"name": "Hijacked"},
                           format="json").status_code == status
    assert client.post(f"/studies/{alpha.slug}/archive/").status_code == status
    assert api(user).post(f"/api/studies/{alpha.slug}/archive/").status_code == status
    alpha.refresh_from_db()
    assert alpha.name == "Alpha study" and alpha.archived_at is None
    study_setup.archive_study(alpha, people["olive"])
    assert client.post(f"/studies/{alpha.slug}/restore/").status_code == status
    assert api(user).post(f"/api/studies/{alpha.slug}/restore/").status_code == status
    alpha.refresh_from_db()
    assert alpha.archived_at is not None
    assert list(AuditEntry.objects.filter(study=alpha).values_list("actor__username", flat=True)) \
        == ["olive"]


# --- archiving ----------------------------------------------------------------------------

@pytest.fixture
def archived(alpha, people):
    held = queue.assign(alpha.papers[0], people["cora"])
    study_setup.archive_study(alpha, people["olive"])
    alpha.refresh_from_db()
    alpha.held = held
    return alpha


def test_an_archived_study_hands_out_no_item_on_the_page_or_the_api(archived, people,
                                                                   client_for):
    cyril = people["cyril"]
    page = client_for(cyril).post(f"/studies/{archived.slug}/code/")
    assert page.status_code == 409 and "archived" in page.content.decode()
    response = api(cyril).post(f"/api/studies/{archived.slug}/next/")
    assert response.status_code == 409 and response.json()["code"] == "archived"
    assert not Assignment.objects.filter(coder=cyril).exists()


def test_an_archived_study_takes_no_submission_on_the_page_or_the_api(archived, people,
                                                                     client_for):
    cora, held = people["cora"], archived.held
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    response = api(cora).post(f"/api/studies/{archived.slug}/assignments/{held.pk}/submit/",
                              {"values": answers}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "archived"
    page = client_for(cora).post(f"/studies/{archived.slug}/code/{held.pk}/", {
        "q-label": "analysis", "q-size_b": "7", "q-failures": "none", "q-code_released": "no"})
    assert page.status_code == 409
    assert not Coding.objects.filter(assignment=held).exists()


def test_an_archived_study_takes_no_import_by_page_api_or_command(archived, people, client_for):
    olive = people["olive"]
    page = client_for(olive).post(f"/studies/{archived.slug}/import/", {
        "format": "arxiv_api", "search_query": "cat:cs.LG"})
    assert page.status_code == 409
    response = api(olive).post(f"/api/studies/{archived.slug}/imports/", {
        "source": {"format": "arxiv_api", "search_query": "cat:cs.LG"}}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "archived"
    with pytest.raises(CommandError, match="archived"):
        call_command("import_to_study", archived.slug, "--format", "arxiv_api",
                     "--search-query", "cat:cs.LG")
    assert not ImportRun.objects.filter(study=archived).exists()


def test_an_archived_study_leaves_the_lists_but_stays_readable(archived, people, client_for):
    cora, olive = people["cora"], people["olive"]
    assert "Alpha study" not in client_for(cora).get("/").content.decode()
    assert api(cora).get("/api/studies/").json()["results"] == []
    listed = api(cora).get("/api/studies/?archived=true").json()["results"]
    assert [s["slug"] for s in listed] == [archived.slug] and listed[0]["archived_at"]
    assert api(cora).get("/api/studies/?archived=maybe").status_code == 400
    page = client_for(cora).get(f"/studies/{archived.slug}/")
    assert page.status_code == 200 and "takes no new work" in page.content.decode()
    assert api(cora).get(f"/api/studies/{archived.slug}/").status_code == 200
    home = client_for(olive).get("/").content.decode()
    assert "Archived" in home and f"/studies/{archived.slug}/restore/" in home


def test_a_coder_is_not_offered_the_restore_button(archived, people, client_for):
    assert "/restore/" not in client_for(people["cora"]).get("/").content.decode()


def test_restoring_opens_the_study_to_work_again(archived, people, client_for):
    response = api(people["olive"]).post(f"/api/studies/{archived.slug}/restore/")
    assert response.status_code == 200 and response.json()["archived_at"] is None
    assert api(people["cyril"]).post(f"/api/studies/{archived.slug}/next/").status_code == 200
    assert list(AuditEntry.objects.filter(study=archived).values_list("action", flat=True)) == [
        "study.restore", "study.archive"]


def test_archiving_twice_writes_one_entry_and_the_command_restores(alpha, people, capsys):
    client = api(people["olive"])
    assert client.post(f"/api/studies/{alpha.slug}/archive/").status_code == 200
    assert client.post(f"/api/studies/{alpha.slug}/archive/").status_code == 200
    assert AuditEntry.objects.filter(study=alpha, action="study.archive").count() == 1
    call_command("archive_study", alpha.slug, "--restore")
    alpha.refresh_from_db()
    assert alpha.archived_at is None
    entry = AuditEntry.objects.filter(study=alpha).first()
    assert (entry.action, entry.actor) == ("study.restore", None)
    call_command("archive_study", alpha.slug)
    alpha.refresh_from_db()
    assert alpha.archived_at is not None


def test_the_archive_page_redirects_the_owner_to_the_study(alpha, people, client_for):
    response = client_for(people["olive"]).post(f"/studies/{alpha.slug}/archive/")
    assert response.status_code == 302 and response["Location"] == f"/studies/{alpha.slug}/"


# --- home and checklist -------------------------------------------------------------------

def test_a_user_who_may_create_is_offered_to_create_a_study(people, client_for):
    html = client_for(grant(people["otto"])).get("/").content.decode()
    assert "/studies/new/" in html and "Create a study" in html


def test_a_user_who_may_not_create_is_told_to_ask_for_an_invitation(people, client_for):
    html = client_for(people["otto"]).get("/").content.decode()
    assert "/studies/new/" not in html and "Ask a study owner to invite you" in html


def test_a_new_study_walks_its_owner_through_setup(creator, people, client_for):
    study = study_setup.create_study(creator, "Fresh")
    steps = {s.key: s for s in study_setup.setup_checklist(study)}
    assert [k for k, s in steps.items() if not s.optional] == [
        "codebook", "members", "items", "started"]
    assert not any(s.done for s in steps.values())
    html = client_for(creator).get(f"/studies/{study.slug}/").content.decode()
    assert "Set up this study" in html and "Publish a codebook" in html
    factories.codebook(study)
    factories.member(study, people["cora"], Role.CODER)
    steps = {s.key: s for s in study_setup.setup_checklist(study)}
    assert steps["codebook"].done and steps["members"].done and not steps["items"].done
    assert steps["items"].url == f"/studies/{study.slug}/import/"
    assert "Set up this study" not in client_for(people["cora"]).get(
        f"/studies/{study.slug}/").content.decode()


def test_a_link_to_a_page_that_does_not_exist_is_none():
    assert study_setup.safe_reverse("no-such-page", "x") is None


@pytest.fixture
def sized_study(creator, people):
    def make(n):
        study = study_setup.create_study(creator, f"Sized {n}")
        book = factories.codebook(study)
        factories.member(study, people["cora"], Role.CODER)
        for i in range(n):
            factories.paper_item(study, book, n * 1000 + i)
        factories.code(Item.objects.filter(study=study).first(), people["cora"])
        return study
    return make


def test_the_checklist_and_the_study_page_take_as_many_queries_at_500_items_as_at_50(
        sized_study, creator, client_for, django_assert_max_num_queries,
        django_assert_num_queries):
    client = client_for(creator)
    counts = []
    for n in (50, 500):
        study = sized_study(n)
        with django_assert_num_queries(1):
            steps = study_setup.setup_checklist(study)
        assert all(s.done for s in steps if s.key != "calibration" and not s.optional)
        with django_assert_max_num_queries(25) as captured:
            assert client.get(f"/studies/{study.slug}/").status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]


# --- the audit trail ----------------------------------------------------------------------

def test_the_audit_trail_pages_newest_first_by_keyset(alpha, people, client_for):
    for n in range(120):
        AuditEntry.objects.create(study=alpha, actor=people["olive"], action="member.add",
                                  target=f"coder c{n:03d}", details={"role": "coder"})
    client = client_for(people["olive"])
    first = client.get(f"/studies/{alpha.slug}/audit/").content.decode()
    assert "coder c119" in first and "coder c070" in first and "coder c069" not in first
    after = AuditEntry.objects.get(target="coder c070").pk
    assert f"?after={after}" in first
    third = client.get(f"/studies/{alpha.slug}/audit/?after="
                       f"{AuditEntry.objects.get(target='coder c020').pk}").content.decode()
    assert "coder c019" in third and "coder c000" in third and "Older" not in third
    assert "role: coder" in third  # a role reads as its label
    assert client.get(f"/studies/{alpha.slug}/audit/?after=zzz").status_code == 400

    body = api(people["olive"]).get(f"/api/studies/{alpha.slug}/audit/?limit=100").json()
    assert body["count"] == 120 and len(body["results"]) == 100
    assert body["results"][0]["target"] == "coder c119"
    assert body["results"][0]["actor"] == "olive"
    rest = api(people["olive"]).get(body["next"]).json()
    assert [r["target"] for r in rest["results"]][-1] == "coder c000" and rest["next"] is None


def test_another_studys_entry_is_not_a_page_token(alpha, beta, people, client_for):
    other = AuditEntry.objects.create(study=beta, action="study.create", target="Beta")
    url = f"/studies/{alpha.slug}/audit/?after={other.pk}"
    assert client_for(people["olive"]).get(url).status_code == 400
    assert api(people["olive"]).get(f"/api/studies/{alpha.slug}/audit/?after={other.pk}") \
        .status_code == 400


def test_every_change_here_is_in_the_trail_in_words(creator, client_for):
    client = client_for(creator)
    client.post("/studies/new/", {"name": "Audited", "start": "threads"})
    study = Study.objects.get(name="Audited")
    api(creator).patch(f"/api/studies/{study.slug}/", {"name": "Audited again", "overlap": 3},
                       format="json")
    client.post(f"/studies/{study.slug}/archive/")
    client.post(f"/studies/{study.slug}/restore/")
    html = client.get(f"/studies/{study.slug}/audit/").content.decode()
    for words in ("created the study", "renamed the study", "from “Audited” to “Audited again”",
                  "changed settings", "overlap: 2 → 3", "archived the study",
                  "restored the study", "preset: Thread study: the thread codebook only"):
        assert words in html, words


def test_the_schema_documents_the_setup_operations(people, client_for):
    schema = client_for(people["olive"]).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert "post" in paths["/api/studies/"]
    assert "201" in paths["/api/studies/"]["post"]["responses"]
    assert "archived" in {p["name"] for p in paths["/api/studies/"]["get"]["parameters"]}
    for path in ("/api/studies/{slug}/archive/", "/api/studies/{slug}/restore/"):
        assert "post" in paths[path]
    assert "get" in paths["/api/studies/{slug}/audit/"]


def test_an_archived_studys_coding_page_offers_no_start_button(archived, people, client_for):
    html = client_for(people["cyril"]).get(f"/studies/{archived.slug}/code/").content.decode()
    assert 'id="start-coding"' not in html and "the study is archived" in html


def test_the_owner_restores_from_the_archived_studys_page(archived, people, client_for):
    html = client_for(people["olive"]).get(f"/studies/{archived.slug}/").content.decode()
    assert f'action="/studies/{archived.slug}/restore/"' in html
    assert "Set up this study" not in html


def test_the_schema_documents_409_archived_where_new_work_is_refused(people, client_for):
    paths = client_for(people["olive"]).get(
        "/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for path in ("/api/studies/{slug}/next/", "/api/studies/{slug}/imports/",
                 "/api/studies/{slug}/assignments/{id}/submit/"):
        assert "409" in paths[path]["post"]["responses"], path
