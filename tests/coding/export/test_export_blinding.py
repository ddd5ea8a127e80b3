"""Blinding in exports: every shape in every format, through the API job and the page, as
each role. A unique marker sits in every blinded field; an adjudicator or viewer without
the study's `adjudicators_see_blinded` setting finds none in any file of the bundle (the
Parquet files decoded too, as their pages are compressed), and the data dictionary
describes only the columns that are there. With the setting on, or as owner, they are."""

import io
import json
import zipfile

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.dataset import load
from coding.export.bundle import FORMATS, SHAPES
from coding.export.jobs import start_export
from coding.labeling import queue
from coding.models import Assignment, Role
from tests import factories
from workbench import jobs
from workbench.models import Job

MARKERS = {
    "included_in": "SECRET-FRAMEWORK-7f3",
    "authors": "SECRET-AUTHOR-19c",
    "affiliations": "SECRET-AFFILIATION-2ab",
    "state": "SECRET-STATE-88d",
    "labels": "SECRET-LABEL-4e1",
    "url": "SECRET-THREAD-URL-c05",
    "closed_at": "2031-01-01",
    "events": "SECRET-CLOSER-d42",
}
BLINDED = ["included_in", "state", "merged", "labels", "closed_at", "events", "thread.url"]
DROPPED = {"included_in", "frameworks_landed", "state", "merged", "labels", "closed_at",
           "authors", "affiliations", "snapshot_sha256"}
CHANNELS = ("api", "page")


@pytest.fixture
def blinded(alpha, people, django_capture_on_commit_callbacks):
    """Alpha blinding inclusion, a thread's state, labels, closing and url, and authors;
    a paper and a thread carrying a marker in each, coded by cora and cyril (who differ
    on the paper, which ada decides)."""
    alpha.blinded_fields = BLINDED
    alpha.blind_authors = True
    alpha.save()
    paper = factories.paper(60, included_in=[MARKERS["included_in"], "TRL"],
                            authors=[MARKERS["authors"]],
                            affiliations=[MARKERS["affiliations"]])
    paper.url = "https://example.org/paper-60"
    paper.save()
    thread = factories.thread(61, state=MARKERS["state"], labels=[MARKERS["labels"], "bug"],
                              closed_at="2031-01-01T00:00:00+00:00",
                              events=[{"event": "closed", "actor": MARKERS["events"]}])
    thread.url = f"https://example.org/{MARKERS['url']}"
    thread.save()
    alpha.marked = [queue.add_item(alpha, paper, alpha.paper_codebook),
                    queue.add_item(alpha, thread, alpha.paper_codebook)]
    for item, labels in zip(alpha.marked, (("analysis", "rl_method"), ("analysis", "analysis"))):
        for coder, label in zip((people["cora"], people["cyril"]), labels):
            assignment = queue.assign(item, coder)
            with django_capture_on_commit_callbacks(execute=True):
                submit(Assignment.objects.get(pk=assignment.pk),
                       {"label": label, "size_b": 7, "failures": ["none"],
                        "code_released": "no", **({"scope": "general"} if label == "rl_method"
                                                  else {})})
    adjudication.decide(alpha.marked[0], "label", "analysis", people["ada"])
    return alpha


def export_via(channel, client, study, shapes, fmt, capture):
    """The bundle's bytes, exported as the client's user through the API job or the page."""
    if channel == "page":
        response = client.post(f"/studies/{study.slug}/export/", {"shapes": shapes, "format": fmt})
        assert response.status_code == 200, response.content[:500]
        return b"".join(response.streaming_content)
    with capture(execute=True):
        started = client.post(f"/api/studies/{study.slug}/exports/",
                              {"shapes": shapes, "format": fmt}, content_type="application/json")
    assert started.status_code == 202, started.content[:500]
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.DONE, job.error
    download = client.get(job.result["download"])
    assert download.status_code == 200
    return b"".join(download.streaming_content)


def bundle_texts(body):
    """{file name: everything it holds, as text}: the raw bytes, and for Parquet the
    decoded values, schema and key-value metadata too."""
    texts = {}
    with zipfile.ZipFile(io.BytesIO(body)) as bundle:
        for name in bundle.namelist():
            data = bundle.read(name)
            text = data.decode("utf-8", errors="replace")
            if name.endswith(".parquet"):
                parquet = pq.ParquetFile(io.BytesIO(data))
                table = parquet.read()
                text += json.dumps(table.to_pylist(), default=str, ensure_ascii=False)
                text += str(table.schema) + str(parquet.metadata.metadata)
            texts[name] = text
    return texts


def leaks(body):
    return sorted({(name, field) for name, text in bundle_texts(body).items()
                   for field, marker in MARKERS.items() if marker in text})


def data_package(body):
    with zipfile.ZipFile(io.BytesIO(body)) as bundle:
        return json.loads(bundle.read("datapackage.json")), bundle.read("README.md").decode()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("name", ["ada", "vera"])
def test_without_the_setting_no_blinded_value_leaves_in_any_shape_or_format(
        blinded, people, client_for, django_capture_on_commit_callbacks, name, channel, shape, fmt):
    body = export_via(channel, client_for(people[name]), blinded, [shape], fmt,
                      django_capture_on_commit_callbacks)
    assert leaks(body) == []
    package, readme = data_package(body)
    assert "Withheld: " in readme and "adjudicators_see_blinded" in readme
    if shape == "items":
        (items,) = package["resources"]
        columns = {f["name"] for f in items["schema"]["fields"]}
        assert not DROPPED & columns, "the dictionary names a withheld column"
        assert "url" in columns  # blinded for threads only: kept, empty for them
        url = next(f for f in items["schema"]["fields"] if f["name"] == "url")
        assert "Empty for threads" in url["description"]
        assert "leaves out the columns" in readme


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("channel", CHANNELS)
def test_the_dictionary_stays_true_to_the_table(blinded, people, client_for,
                                                django_capture_on_commit_callbacks, channel, fmt):
    body = export_via(channel, client_for(people["ada"]), blinded, list(SHAPES), fmt,
                      django_capture_on_commit_callbacks)
    package, _ = data_package(body)
    with zipfile.ZipFile(io.BytesIO(body)) as bundle:
        for resource in package["resources"]:
            described = [f["name"] for f in resource["schema"]["fields"]]
            data = bundle.read(resource["path"])
            if fmt == "csv":
                header = data.decode().splitlines()[0].split(",")
            elif fmt == "parquet":
                header = pq.ParquetFile(io.BytesIO(data)).schema_arrow.names
            elif not data:  # an empty table in JSON Lines has no row to name its columns
                continue
            else:
                header = list(json.loads(data.decode().splitlines()[0]))
            assert header == described, resource["name"]
    path = io.BytesIO(body)
    items = load(path)["items"].set_index("item_id")
    paper, thread = blinded.marked
    assert items.loc[paper.pk, "url"] == paper.snapshot.content["url"]
    assert items.isna().loc[thread.pk, "url"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("channel", CHANNELS)
def test_with_the_setting_the_adjudicator_and_viewer_get_them(blinded, people, client_for,
                                                              django_capture_on_commit_callbacks,
                                                              channel, fmt):
    blinded.adjudicators_see_blinded = True
    blinded.save()
    for name in ("ada", "vera"):
        body = export_via(channel, client_for(people[name]), blinded, ["items"], fmt,
                          django_capture_on_commit_callbacks)
        found = {field for _, field in leaks(body)}
        assert found == set(MARKERS) - {"events"}, name  # events are never a column
        assert "nothing was withheld" in data_package(body)[1]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("channel", CHANNELS)
def test_the_owner_gets_every_field(blinded, people, client_for,
                                    django_capture_on_commit_callbacks, channel, fmt):
    body = export_via(channel, client_for(people["olive"]), blinded, ["items"], fmt,
                      django_capture_on_commit_callbacks)
    assert {field for _, field in leaks(body)} == set(MARKERS) - {"events"}
    package, _ = data_package(body)
    columns = {f["name"] for f in package["resources"][0]["schema"]["fields"]}
    assert DROPPED <= columns


def test_an_adjudicator_who_also_codes_never_gets_them(blinded, people, client_for,
                                                       django_capture_on_commit_callbacks):
    """Rule 2 is about everything a coder receives: the setting does not reach a coder."""
    blinded.adjudicators_see_blinded = True
    blinded.save()
    factories.member(blinded, people["cora"], Role.ADJUDICATOR)
    for channel in CHANNELS:
        body = export_via(channel, client_for(people["cora"]), blinded, list(SHAPES), "jsonl",
                          django_capture_on_commit_callbacks)
        assert leaks(body) == [], channel


def test_the_same_data_and_role_give_the_same_bytes(blinded, people, client_for,
                                                    django_capture_on_commit_callbacks):
    ada = client_for(people["ada"])
    capture = django_capture_on_commit_callbacks
    page = [export_via("page", ada, blinded, list(SHAPES), "parquet", capture) for _ in range(2)]
    job = export_via("api", ada, blinded, list(SHAPES), "parquet", capture)
    assert page[0] == page[1] == job
    owner = export_via("page", client_for(people["olive"]), blinded, list(SHAPES), "parquet",
                       capture)
    assert owner != job


def test_the_job_takes_the_requesters_roles_when_it_starts(blinded, people, client_for):
    """Asked for while the setting was on, run after it was turned off: nothing blinded."""
    blinded.adjudicators_see_blinded = True
    blinded.save()
    job = start_export(blinded, people["ada"], shapes=list(SHAPES), fmt="csv")  # not sent yet
    blinded.adjudicators_see_blinded = False
    blinded.save()
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.error
    download = client_for(people["ada"]).get(job.result["download"])
    assert leaks(b"".join(download.streaming_content)) == []
    assert "state" in job.result["withheld"] and "path" not in job.result


def test_an_export_that_held_blinded_fields_is_not_handed_out_after_the_setting_goes_off(
        blinded, people, client_for, django_capture_on_commit_callbacks):
    blinded.adjudicators_see_blinded = True
    blinded.save()
    ada = client_for(people["ada"])
    with django_capture_on_commit_callbacks(execute=True):
        started = ada.post(f"/api/studies/{blinded.slug}/exports/", {"shapes": ["items"]},
                           content_type="application/json")
    job = Job.objects.get(pk=started.json()["id"])
    assert ada.get(job.result["download"]).status_code == 200
    blinded.adjudicators_see_blinded = False
    blinded.save()
    assert ada.get(job.result["download"]).status_code == 404
    assert client_for(people["olive"]).get(job.result["download"]).status_code == 200


def test_a_requester_no_longer_in_the_study_gets_no_export(blinded, people):
    job = start_export(blinded, people["ada"], shapes=["items"], fmt="csv")
    blinded.memberships.filter(user=people["ada"]).delete()
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error.startswith("Export refused: whoever asked for job")


def test_the_export_command_is_owner_level_unless_told_whose_view(blinded, people, client_for,
                                                                  tmp_path, capsys):
    everything = tmp_path / "all.zip"
    call_command("export_dataset", blinded.slug, "--format", "csv", "--out", str(everything))
    assert {field for _, field in leaks(everything.read_bytes())} == set(MARKERS) - {"events"}
    as_ada = tmp_path / "ada.zip"
    call_command("export_dataset", blinded.slug, "--format", "csv", "--out", str(as_ada),
                 "--as-user", "ada")
    assert leaks(as_ada.read_bytes()) == []
    assert "Withheld (blinded for ada): " in capsys.readouterr().out
    page = client_for(people["ada"]).post(f"/studies/{blinded.slug}/export/",
                                          {"shapes": list(SHAPES), "format": "csv"})
    assert as_ada.read_bytes() == b"".join(page.streaming_content)


def test_the_export_command_refuses_a_user_who_may_not_export(blinded, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="may not export"):
        call_command("export_dataset", blinded.slug, "--out", str(tmp_path / "x.zip"),
                     "--as-user", "cora")
    with pytest.raises(CommandError, match="only owners may export the coder mapping"):
        call_command("export_dataset", blinded.slug, "--out", str(tmp_path / "x.zip"),
                     "--as-user", "ada", "--include-mapping")


def test_the_review_page_shows_blinded_fields_by_the_same_rule(blinded, people, client_for):
    url = f"/studies/{blinded.slug}/review/{blinded.marked[0].pk}/"
    assert MARKERS["included_in"] not in client_for(people["ada"]).get(url).content.decode()
    assert MARKERS["included_in"] in client_for(people["olive"]).get(url).content.decode()
    blinded.adjudicators_see_blinded = True
    blinded.save()
    assert MARKERS["included_in"] in client_for(people["ada"]).get(url).content.decode()


def test_the_method_catalog_follows_the_blinded_inclusion(alpha, people, client_for):
    """Framework inclusion blinded and adjudicators not shown blinded fields: the catalog,
    which is that inclusion, is refused to them, page and API, and not offered on their card;
    the owner still reads it, and so do adjudicators once the owner allows it."""
    alpha.blinded_fields = ["included_in"]
    alpha.save()
    urls = (f"/studies/{alpha.slug}/catalog/", f"/api/studies/{alpha.slug}/catalog/")
    ada = client_for(people["ada"])  # one test client: each login replaces the last
    assert [ada.get(url).status_code for url in urls] == [403, 403]
    assert "Method catalog" not in ada.get(f"/studies/{alpha.slug}/").content.decode()
    olive = client_for(people["olive"])
    assert [olive.get(url).status_code for url in urls] == [200, 200]
    ada = client_for(people["ada"])
    alpha.adjudicators_see_blinded = True
    alpha.save()
    assert ada.get(f"/api/studies/{alpha.slug}/catalog/").status_code == 200
