"""The export's items table carries what issue 19 keeps of a source: per-author records,
a pull request's head and base, its review states and review comments, a discussion's
category and answer; the data dictionary describes each, and blinding withholds what
tells a blinded outcome."""

import json

import pytest

from coding.dataset import data_dictionary, load
from coding.export.bundle import build_bundle
from coding.labeling import queue
from coding.models import Role
from ingest.models import Post
from tests import factories

NEW_COLUMNS = ("author_records", "state_reason", "merged_at", "head_label", "head_sha",
               "head_repo", "head_repo_deleted", "base_ref", "review_states",
               "n_review_comments", "category", "answered")
AUTHORS = [{"name": "Ann Example", "keyname": "Example", "forenames": "Ann", "suffix": None,
            "affiliations": ["Invented Institute"], "orcid": "0000-0002-5555-0001"},
           {"name": "Bo Sample", "keyname": "Sample", "forenames": "Bo", "suffix": None,
            "affiliations": [], "orcid": None}]


@pytest.fixture
def sources(alpha):
    paper = factories.paper(70, author_records=AUTHORS)
    thread = factories.thread(
        71, state="closed", merged=False, merged_at=None, state_reason="not_planned",
        head={"label": "bo:fix", "ref": "fix", "sha": "7c1d2e3", "repo": None, "repo_deleted": True},
        base={"label": "example:main", "ref": "main", "sha": "0a1b2c3", "repo": "example/repo",
              "repo_deleted": False})
    for n, (kind, details) in enumerate([
            (Post.Kind.REVIEW, {"state": "CHANGES_REQUESTED"}),
            (Post.Kind.REVIEW_COMMENT, {"path": "src/a.py", "line": 3, "original_line": 3}),
            (Post.Kind.REVIEW, {"state": "APPROVED"})], start=2):
        Post.objects.create(document=thread, position=n, external_id=f"x{n}", kind=kind,
                            author="user1", created=thread.published, body="", details=details)
    items = [queue.add_item(alpha, paper, alpha.paper_codebook),
             queue.add_item(alpha, thread, alpha.paper_codebook)]
    return alpha, items


def export(study, tmp_path, **options):
    path = tmp_path / f"export-{len(list(tmp_path.iterdir()))}.zip"
    build_bundle(study, path, shapes=["items"], fmt="csv", **options)
    return path


def test_the_items_table_has_a_column_for_each_new_field(sources, tmp_path):
    study, (paper, thread) = sources
    path = export(study, tmp_path)
    items = load(path)["items"].set_index("item_id")
    assert json.loads(items.loc[paper.pk, "author_records"]) == AUTHORS
    row = items.loc[thread.pk]
    assert (row["head_label"], row["head_sha"], row["base_ref"]) == ("bo:fix", "7c1d2e3", "main")
    assert bool(row["head_repo_deleted"]) is True and items.isna().loc[thread.pk, "head_repo"]
    assert row["review_states"] == "CHANGES_REQUESTED; APPROVED"
    assert row["n_review_comments"] == 1 and row["state_reason"] == "not_planned"


def test_the_data_dictionary_describes_every_new_column(sources, tmp_path):
    study, _ = sources
    package = data_dictionary(export(study, tmp_path))
    fields = {f["name"]: f for r in package["resources"] if r["name"] == "items"
              for f in r["schema"]["fields"]}
    for column in NEW_COLUMNS:
        assert fields[column]["description"], column


def test_a_coders_export_withholds_what_tells_a_blinded_outcome(sources, tmp_path, people):
    study, (_, thread) = sources
    study.blinded_fields = ["state", "merged"]
    study.blind_authors = True
    study.save()
    path = export(study, tmp_path, roles=frozenset({Role.CODER}))
    items = load(path)["items"]
    assert not {"state", "state_reason", "merged", "merged_at", "author_records"} & set(items)
    assert "head_label" in items  # what tells no outcome stays
