"""A model rater's page, API and command on a fresh study: what each role gets, what the
key never shows, and what a coder holding a second role is refused or leaves a trace of."""

import io
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from coding.model_raters import config
from coding.models import ModelRun, OthersWorkRead, RaterCoding, Role
from tests import factories


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def base(team, rater):
    return f"/api/studies/{team['study'].slug}/raters/{rater.name}"


@pytest.mark.django_db(transaction=True)
def test_the_api_sets_previews_runs_and_validates(team, model_rater, server):
    owner = api(team["owner"])
    url = base(team, model_rater)
    saved = owner.put(f"{url}/model/", {"temperature": 0.0, "api_key": "sk-secret-invented",
                                       "instructions": "Be careful."}, format="json")
    assert saved.status_code == 200, saved.content
    assert saved.json()["key"] == "stored" and "sk-secret" not in saved.content.decode()
    bad = owner.put(f"{url}/model/", {"concurrency": 99}, format="json")
    assert bad.status_code == 400 and "concurrency" in bad.json()
    preview = owner.get(f"{url}/model/preview/", {"item": "2599.00002"}).json()
    assert preview["item"] == "2599.00002" and preview["endpoint"].endswith("/chat/completions")
    assert "Be careful." in preview["request"]["messages"][0]["content"]
    assert preview["withheld"] == ["authors"] and not preview["cached"]
    assert owner.get(f"{url}/model/preview/", {"item": "nope"}).status_code == 400
    started = owner.post(f"{url}/model/runs/", {"scope": {"sample": "yes"}}, format="json")
    assert started.status_code == 202, started.content
    run = started.json()
    assert run["status"] == "done" and run["answered"] == 12 and run["job_url"]
    assert owner.post(f"{url}/model/runs/", {"scope": {"colour": "red"}},
                      format="json").status_code == 400
    assert owner.post(f"{url}/model/runs/{run['id']}/explode/").status_code == 404
    again = owner.post(f"{url}/model/runs/{run['id']}/resume/")
    assert again.status_code == 400 and "resumes" in json.dumps(again.json())
    assert owner.get(f"{url}/model/preview/", {"item": "2599.00002"}).json()["cached"]
    checked = owner.get(f"{url}/validation/").json()
    assert {q["question"] for q in checked["questions"]} >= {"label", "size_b"}
    assert owner.get(f"{url}/validation/", {"epsilon": "0.5"}).status_code == 400


@pytest.mark.django_db(transaction=True)
def test_coders_are_refused_and_a_coder_who_also_views_leaves_a_trace(team, model_rater,
                                                                      server):
    ann, _bo = team["coders"]
    url = base(team, model_rater)
    for path in ("model/", "model/runs/", "validation/", "model/preview/"):
        assert api(ann).get(f"{url}/{path}").status_code == 403
    viewer = factories.user("vic")
    factories.member(team["study"], viewer, Role.VIEWER)
    assert api(viewer).get(f"{url}/model/preview/").status_code == 403  # may hold blinded
    assert api(viewer).put(f"{url}/model/", {"model": "x"}, format="json").status_code == 403
    assert api(viewer).get(f"{url}/model/").json()["key"] == "none"
    # A coder who is also a viewer reads the validation: recorded as reading others' work.
    study = team["study"]
    study.coders_hold_other_roles = True
    study.save()
    factories.member(study, ann, Role.VIEWER)
    assert api(ann).get(f"{url}/validation/").status_code == 200
    assert OthersWorkRead.objects.filter(coder=ann).exists()


@pytest.mark.django_db(transaction=True)
def test_the_pages_set_preview_run_and_validate(team, model_rater, server, client):
    client.force_login(team["owner"])
    page = f"/studies/{team['study'].slug}/raters/{model_rater.name}/model/"
    html = client.get(page).content.decode()
    assert 'id="preview-request"' in html
    assert "&quot;model&quot;: &quot;test-coder-8b&quot;" in html
    assert "Withheld from the model" in html and "<code>authors</code>" in html
    saved = client.post(page, {"action": "settings", "base_url": server.url,
                               "model": "test-coder-8b", "temperature": "0", "max_tokens": "512",
                               "output": "json_schema", "concurrency": "2",
                               "requests_per_minute": "0", "timeout_seconds": "5",
                               "invalid_retries": "1", "api_key": "sk-page-invented"})
    assert saved.status_code == 302
    assert config.key_state(model_rater.__class__.objects.get(pk=model_rater.pk).machine) == \
        "stored"
    assert "sk-page-invented" not in client.get(page).content.decode()
    refused = client.post(page, {"action": "settings", "base_url": "nope", "model": "m",
                                 "temperature": "0", "max_tokens": "5", "output": "text",
                                 "concurrency": "1", "requests_per_minute": "0",
                                 "timeout_seconds": "5", "invalid_retries": "0"})
    assert refused.status_code == 400 and "base_url" in refused.content.decode()
    assert client.post(page, {"action": "run", "set": "sample", "replicates": "1",
                              "q": "number 1"}).status_code == 302
    assert ModelRun.objects.get().scope == {"sample": "yes", "q": "number 1"}
    assert RaterCoding.objects.filter(rater=model_rater, question_key="label").count() == 4
    assert client.post(page, {"action": "run", "set": "sample", "replicates": "1"}
                       ).status_code == 302
    assert RaterCoding.objects.filter(rater=model_rater, question_key="label").count() == 12
    html = client.get(page).content.decode()
    assert "status-done" in html and "12 / 12" in html
    validation = client.get(f"/studies/{team['study'].slug}/raters/{model_rater.name}"
                            "/validation/").content.decode()
    assert 'id="rule"' in validation and "question-label" in validation


@pytest.mark.django_db(transaction=True)
def test_the_command_creates_sets_runs_and_validates(team, server):
    out = io.StringIO()
    call_command("model_rater", team["study"].slug, "cli-model", "--create",
                 "--setting", f"base_url={server.url}", "--setting", "model=test-coder-8b",
                 "--run", "sample", "--validate", stdout=out)
    text = out.getvalue()
    assert "settings saved" in text and "12 answered" in text and "label:" in text
    assert ModelRun.objects.get().status == "done"
    out = io.StringIO()
    call_command("model_rater", team["study"].slug, "cli-model", "--preview", "2599.00003",
                 stdout=out)
    assert json.loads(out.getvalue())["cached"] is True


@pytest.mark.django_db(transaction=True)
def test_model_rater_pages_and_lists_cost_the_same_queries_at_any_size(team, model_rater,
                                                                      server, client):
    from tests.conftest import page_queries

    client.force_login(team["owner"])
    slug, name = team["study"].slug, model_rater.name
    urls = [f"/studies/{slug}/raters/{name}/model/", f"/studies/{slug}/raters/{name}/validation/",
            f"/api/studies/{slug}/raters/{name}/model/",
            f"/api/studies/{slug}/raters/{name}/model/preview/",
            f"/api/studies/{slug}/raters/{name}/model/runs/",
            f"/api/studies/{slug}/raters/{name}/validation/"]
    ann, bo = team["coders"]

    def grow(numbers):
        for n in numbers:
            item = factories.paper_item(team["study"], team["codebook"], n)
            factories.code(item, ann)
            factories.code(item, bo)
        from coding.model_raters import runs
        return runs.start_run(model_rater, team["owner"])

    run = grow(range(20, 24))
    urls.append(f"/api/studies/{slug}/raters/{name}/model/runs/{run.pk}/")
    small = [page_queries(client, url) for url in urls]
    grow(range(30, 60))
    assert [page_queries(client, url) for url in urls] == small


@pytest.mark.django_db(transaction=True)
def test_the_export_carries_runs_validation_calls_and_the_methods_text(team, model_rater,
                                                                       server, tmp_path):
    import zipfile

    from coding.export.bundle import build_bundle
    from coding.models import Role as Roles

    config.configure(model_rater, team["owner"], {"send_blinded": True},
                     api_key="sk-never-exported")
    from coding.model_raters import runs

    runs.start_run(model_rater, team["owner"], {"sample": "yes"})
    paths = []
    for n, roles in enumerate(({Roles.OWNER}, {Roles.VIEWER})):
        path = tmp_path / f"bundle-{n}.zip"
        build_bundle(team["study"], path, shapes=["long"], fmt="csv", roles=roles)
        paths.append(path)
    with zipfile.ZipFile(paths[0]) as bundle:
        machines = json.loads(bundle.read("model_raters.json"))
        calls = [json.loads(line) for line in bundle.read("model_calls.jsonl").splitlines()]
        readme = bundle.read("README.md").decode()
        long = bundle.read("long.csv").decode()
        every = b"".join(bundle.read(n) for n in bundle.namelist())
    assert machines[0]["rater"] == "test-model" and machines[0]["runs"][0]["answered"] == 12
    assert machines[0]["validation"]["questions"] and "alternative annotator test" in \
        machines[0]["methods_text"]
    assert len(calls) == 12 and json.loads(calls[0]["raw"])["object"] == "chat.completion"
    assert "## Model raters" in readme and "test-coder-8b" in readme
    assert "with prompt" in long
    assert b"sk-never-exported" not in every
    with zipfile.ZipFile(paths[1]) as bundle:  # a viewer: the run sent blinded fields
        calls = [json.loads(line) for line in bundle.read("model_calls.jsonl").splitlines()]
    assert all(c["raw"] is None and c["raw_withheld"] for c in calls)
    # The same data gives the same bytes.
    again = tmp_path / "again.zip"
    build_bundle(team["study"], again, shapes=["long"], fmt="csv", roles={Roles.OWNER})
    with zipfile.ZipFile(paths[0]) as one, zipfile.ZipFile(again) as two:
        assert one.read("model_raters.json") == two.read("model_raters.json")
        assert one.read("model_calls.jsonl") == two.read("model_calls.jsonl")


@pytest.mark.django_db(transaction=True)
def test_a_coder_in_a_blind_round_never_receives_the_models_answers(team, model_rater,
                                                                     server, client):
    from coding.model_raters import runs

    runs.start_run(model_rater, team["owner"])
    ann, _bo = team["coders"]
    served = api(ann).post(f"/api/studies/{team['study'].slug}/next/")
    assert served.status_code in (200, 201), served.content
    body = served.json()
    assert body["suggestions"] == []
    assert "test-model" not in served.content.decode()
    client.force_login(ann)
    page = client.get(f"/studies/{team['study'].slug}/code/", follow=True).content.decode()
    assert "test-model" not in page and "suggestion-" not in page
