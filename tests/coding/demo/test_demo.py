"""The demo study a new user meets after `make run`."""

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import override_settings

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Coding, Item, Method, Study
from ingest.models import Document, Snapshot


@pytest.fixture(scope="module")
def loaded_demo(django_db_setup, django_db_blocker):
    """The demo, loaded once for the module inside a transaction rolled back at its end;
    each test runs in a savepoint within it (pytest-django's `db`), so what one test
    changes is undone before the next."""
    with (django_db_blocker.unblock(),
          override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
          transaction.atomic()):
        call_command("load_demo", verbosity=0)
        yield
        transaction.set_rollback(True)


@pytest.fixture
def demo(loaded_demo, db):
    return Study.objects.get(slug=DEMO_SLUG)


def test_demo_holds_papers_threads_and_codings(demo):
    assert Item.objects.filter(study=demo, document__kind="paper").count() >= 200
    assert Item.objects.filter(study=demo, document__kind="thread").count() >= 50
    assert Coding.objects.filter(assignment__item__study=demo).count() >= 100
    assert set(demo.memberships.values_list("user__username", flat=True)) == {
        "owner", "coder1", "coder2", "coder3", "adjudicator"}


def test_demo_threads_have_several_posts_with_markdown_and_code(demo):
    threads = Document.objects.filter(kind="thread")
    assert all(t.posts.count() >= 1 for t in threads)
    assert threads.filter(posts__position=2).exists()
    bodies = " ".join(t.posts.first().body for t in threads)
    assert "```" in bodies and "**" in bodies


def test_demo_carries_the_preset_catalog_and_blinding(demo):
    assert demo.frameworks.count() == 7
    clip = Method.objects.get(study=demo, name="Clip-higher")
    assert clip.option_names.get(framework__name="verl").name == "clip_ratio_high"
    assert {"state", "merged", "labels", "included_in"} <= set(demo.blinded_fields)
    assert {c.applies_to for c in demo.codebooks.all()} == {"paper", "thread"}


def test_demo_codings_disagree_somewhere(demo):
    """The later pages need disagreements to show."""
    by_item = {}
    for coding in Coding.objects.filter(assignment__item__study=demo).select_related("assignment"):
        by_item.setdefault(coding.assignment.item_id, []).append(coding.values)
    pairs = [v for v in by_item.values() if len(v) == 2]
    assert pairs and any(a != b for a, b in pairs) and any(a == b for a, b in pairs)


def test_loading_the_demo_twice_changes_nothing(demo, capsys):
    counts = (Document.objects.count(), Snapshot.objects.count(), Coding.objects.count())
    call_command("load_demo")
    assert (Document.objects.count(), Snapshot.objects.count(), Coding.objects.count()) == counts
    assert "Already loaded" in capsys.readouterr().out


def test_demo_coder_can_log_in_and_see_the_demo_study(demo, client):
    response = client.post("/login/", {"username": "coder1", "password": DEMO_PASSWORD},
                           follow=True)
    assert response.status_code == 200
    assert demo.name in response.content.decode()


def test_demo_frameworks_show_scanned_histories(demo, client):
    """make run's catalog is not empty: every framework's invented history was scanned."""
    from coding.models import FrameworkScan, Landing, MethodLink
    from coding.models.catalog import OptionHit

    assert FrameworkScan.objects.filter(framework__study=demo).count() == 7
    assert set(Landing.objects.filter(method__study=demo).values_list("framework__name", flat=True)) \
        == {"verl", "TRL", "OpenRLHF", "NeMo-RL", "AReaL", "ROLL", "slime"}
    # slime's TIS flag was renamed: both names keep their own first appearance.
    old, new = (OptionHit.objects.get(option__framework__study=demo,
                                      option__framework__name="slime", option__name=name)
                for name in ("enable_off_policy_correction", "use_tis"))
    assert old.committed_at < new.committed_at and new.renamed
    assert Landing.objects.filter(method__study=demo, upper_bound=True).exists()  # the ROLL sync
    # ROLL's GSPO is switched on by a value, OpenRLHF's TIS is part of a longer flag.
    assert {(h.option.name, h.variant) for h in OptionHit.objects.filter(
        option__framework__study=demo,
        option__name__in=["importance_sampling=seq", "*is_correction"]).select_related("option")} \
        == {("importance_sampling=seq", "importance_sampling: seq"),
            ("*is_correction", "--enable-vllm-is-correction")}
    titled = MethodLink.objects.filter(method__study=demo, kind="proposes",
                                       document__title__startswith="[Feature] Add Clip-higher")
    assert titled.filter(method__name="Clip-higher").exists()
    client.post("/login/", {"username": "owner", "password": DEMO_PASSWORD})
    catalog = client.get(f"/studies/{demo.slug}/catalog/").content.decode()
    assert "none of" not in catalog
    verl = demo.frameworks.get(name="verl")
    page = client.get(f"/studies/{demo.slug}/frameworks/{verl.pk}/").content.decode()
    assert "History not scanned yet" not in page and "mentioned earlier in a comment" in page
