"""Method landings found in small git repositories built here, on known dates."""

import os
import subprocess
from datetime import UTC, datetime

import pytest

from coding.catalog import landings
from coding.models import Framework, FrameworkScan, Landing, Method, MethodLink, OptionName
from tests import factories


class Repo:
    """A throwaway git repository whose commits carry the dates we give them."""

    def __init__(self, path):
        self.path = path
        path.mkdir(parents=True)
        self.run("init", "-q", "-b", "main")

    def run(self, *args, env=None):
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True,
                              text=True, env={**os.environ, **(env or {})}).stdout

    def commit(self, message, when, files, author="Dana Dev"):
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.run("add", "-A")
        stamp = f"{when}T12:00:00+00:00"
        self.run("-c", f"user.name={author}", "-c", "user.email=dev@example.org", "commit", "-q",
                 "-m", message, env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        return self.run("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path / "framework")


@pytest.fixture
def catalog(alpha):
    framework = Framework.objects.create(study=alpha, name="toyrl", repository="example/toyrl")
    clip = Method.objects.create(study=alpha, name="Clip-higher", first_public="2025-03-18",
                                 source_arxiv_id="2599.00001")
    gspo = Method.objects.create(study=alpha, name="GSPO", first_public="2025-07")
    OptionName.objects.create(method=clip, framework=framework, name="clip_ratio_high")
    OptionName.objects.create(method=gspo, framework=framework, name="gspo")
    return framework, clip, gspo


def test_first_commit_adding_an_option_is_the_landing(repo, catalog):
    framework, clip, _ = catalog
    repo.commit("Initial trainer", "2025-01-10", {"trainer.py": "lr = 1e-6\n"})
    repo.commit("Mention it in docs", "2025-03-01", {"README.md": "clip_ratio_high soon\n"})
    sha = repo.commit("Add asymmetric clipping (#42)", "2025-04-02",
                      {"trainer.py": "lr = 1e-6\nclip_ratio_high = 0.28\n"})
    landings.scan_framework(framework, repo.path)
    landing = Landing.objects.get(method=clip)
    assert (landing.commit, landing.pull_request, landing.upper_bound) == (sha, 42, False)
    assert landing.committed_at == datetime(2025, 4, 2, 12, tzinfo=UTC)
    assert landing.author == "Dana Dev"


def test_a_longer_identifier_is_not_the_option(repo, catalog):
    framework, _, gspo = catalog
    repo.commit("Add gspo_like helper", "2025-08-01", {"loss.py": "def gspo_like(): pass\n"})
    landings.scan_framework(framework, repo.path)
    assert not Landing.objects.filter(method=gspo).exists()


def test_renaming_an_identifier_to_the_option_is_an_upper_bound(repo, catalog):
    framework, clip, _ = catalog
    repo.commit("Add clip_high", "2025-03-20", {"trainer.py": "clip_high = 0.28\n"})
    sha = repo.commit("Rename to clip_ratio_high", "2025-05-05",
                      {"trainer.py": "clip_ratio_high = 0.28\n"})
    landings.scan_framework(framework, repo.path)
    landing = Landing.objects.get(method=clip)
    assert landing.commit == sha and landing.upper_bound


def test_a_bulk_commit_is_an_upper_bound(repo, catalog):
    framework, clip, _ = catalog
    files = {f"pkg/module_{n}.py": f"x_{n} = {n}\n" for n in range(landings.BULK_FILES)}
    files["pkg/trainer.py"] = "clip_ratio_high = 0.2\n"
    repo.commit("Import the code base", "2025-06-01", files)
    landings.scan_framework(framework, repo.path)
    assert Landing.objects.get(method=clip).upper_bound


def test_a_merged_branch_lands_at_its_merge_on_main(repo, catalog):
    framework, _, gspo = catalog
    repo.commit("Start", "2025-07-01", {"loss.py": "pass\n"})
    repo.run("checkout", "-q", "-b", "feature")
    repo.commit("Sequence-level ratios", "2025-07-30", {"loss.py": "pass\ngspo = True\n"})
    repo.run("checkout", "-q", "main")
    stamp = "2025-08-10T12:00:00+00:00"
    repo.run("-c", "user.name=Maintainer", "-c", "user.email=m@example.org", "merge", "-q",
             "--no-ff", "-m", "Merge pull request #7 from someone/feature", "feature",
             env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    landings.scan_framework(framework, repo.path)
    landing = Landing.objects.get(method=gspo)
    assert landing.committed_at.date().isoformat() == "2025-08-10"
    assert landing.pull_request == 7


def test_rescans_read_only_new_commits_and_find_new_landings(repo, catalog):
    framework, clip, gspo = catalog
    repo.commit("Clip", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    first = landings.scan_framework(framework, repo.path)
    assert first["landings_found"] == 1
    tip = repo.commit("GSPO", "2025-09-01", {"b.py": "gspo = 1\n"})
    second = landings.scan_framework(framework, repo.path)
    assert second["landings_found"] == 1
    assert FrameworkScan.objects.get(framework=framework).last_commit == tip
    assert Landing.objects.get(method=gspo).commit == tip


def test_a_missing_repository_is_a_clear_error(tmp_path, catalog):
    framework, _, _ = catalog
    with pytest.raises(landings.GitError, match="nowhere"):
        landings.scan_framework(framework, tmp_path / "nowhere")


def test_papers_get_inclusion_and_days_to_first_landing(repo, catalog, alpha):
    framework, clip, _ = catalog
    document = alpha.papers[1].document  # 2599.00001, the method's source paper
    repo.commit("Clip", "2025-06-01", {"a.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(framework, repo.path)
    assert landings.link_documents(alpha) >= 1
    inclusion = landings.paper_inclusion(alpha)[document.pk]
    assert inclusion["included_in"] == ["toyrl"]
    assert inclusion["days_to_first_landing"] == (datetime(2025, 6, 1, 12, tzinfo=UTC)
                                                  - document.published).days


def test_a_thread_naming_an_option_proposes_the_method(alpha, catalog):
    framework, _, gspo = catalog
    from coding.labeling import queue

    thread = factories.thread(5, posts=["Please add `gspo` as an option.", "Sounds good."],
                              framework="toyrl")
    queue.add_item(alpha, thread, alpha.paper_codebook)
    landings.link_documents(alpha)
    assert MethodLink.objects.filter(method=gspo, document=thread, kind="proposes").exists()


def test_inclusion_fields_join_the_blinded_fields(alpha):
    landings.blind_inclusion(alpha)
    alpha.refresh_from_db()
    assert set(landings.INCLUSION_FIELDS) <= set(alpha.blinded_fields)


def test_catalog_and_framework_pages_show_landings_but_not_to_coders(repo, catalog, alpha, people,
                                                                     client_for):
    framework, clip, _ = catalog
    repo.commit("Clip (#3)", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(framework, repo.path)
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/catalog/").content.decode()
    assert "Clip-higher" in page and "toyrl 2025-04-01" in page
    assert "14" in page  # days from 2025-03-18 to 2025-04-01
    framework_page = olive.get(f"/studies/{alpha.slug}/frameworks/{framework.pk}/").content.decode()
    assert "#3" in framework_page
    cora = client_for(people["cora"])
    assert cora.get(f"/studies/{alpha.slug}/catalog/").status_code == 403
    assert cora.get(f"/studies/{alpha.slug}/frameworks/{framework.pk}/").status_code == 403


def test_owner_starts_a_scan_from_the_framework_page(repo, catalog, alpha, people, client_for,
                                                     settings, tmp_path,
                                                     django_capture_on_commit_callbacks):
    settings.IMPORT_DIR = tmp_path  # where an administrator cloned the framework
    framework, clip, _ = catalog
    repo.commit("Clip", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(people["olive"]).post(
            f"/studies/{alpha.slug}/frameworks/{framework.pk}/", {"repo": repo.path.name})
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    assert Landing.objects.filter(method=clip).exists()


def test_a_scan_from_the_web_reads_only_clones_in_the_import_folder(
        repo, catalog, alpha, people, client_for, settings, tmp_path):
    """An owner is not an administrator: git may not be pointed at any folder on the server."""
    settings.IMPORT_DIR = tmp_path / "imports"
    framework, _, _ = catalog
    repo.commit("Clip", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    olive = client_for(people["olive"])
    page = olive.post(f"/studies/{alpha.slug}/frameworks/{framework.pk}/",
                      {"repo": str(repo.path)})
    assert page.status_code == 200 and "outside the server" in page.content.decode()
    api = olive.post(f"/api/studies/{alpha.slug}/frameworks/{framework.pk}/",
                     {"repo": "../framework"}, content_type="application/json")
    assert api.status_code == 400 and "outside the server" in api.json()["repo"][0]


def test_ingest_framework_command_reports_landings(repo, catalog, alpha, capsys):
    from django.core.management import call_command

    framework, _, _ = catalog
    repo.commit("Clip", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    call_command("ingest_framework", alpha.slug, "toyrl", "--repo", str(repo.path))
    assert "Clip-higher" in capsys.readouterr().out


def test_the_catalog_api_lists_landings_and_refuses_coders(repo, catalog, alpha, people,
                                                          client_for):
    framework, _, _ = catalog
    repo.commit("Clip", "2025-04-01", {"a.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(framework, repo.path)
    rows = client_for(people["vera"]).get(f"/api/studies/{alpha.slug}/catalog/").json()["results"]
    clip = next(r for r in rows if r["method"] == "Clip-higher")
    assert clip["frameworks"] == ["toyrl"] and clip["days_to_first_landing"] == 14
    detail = client_for(people["vera"]).get(f"/api/studies/{alpha.slug}/frameworks/{framework.pk}/")
    assert detail.json()["landed"][0]["method"] == "Clip-higher"
    assert client_for(people["cora"]).get(f"/api/studies/{alpha.slug}/catalog/").status_code == 403


def test_exports_carry_the_inclusion_found_in_the_histories(repo, catalog, alpha, tmp_path):
    from coding.dataset import load
    from coding.export.bundle import build_bundle

    framework, _, _ = catalog
    repo.commit("Clip", "2025-06-01", {"a.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(framework, repo.path)
    landings.link_documents(alpha)
    build_bundle(alpha, tmp_path / "x.zip", shapes=["items"], fmt="csv")
    items = load(tmp_path / "x.zip")["items"].set_index("item_id")
    source = items.loc[alpha.papers[1].pk]
    assert source["frameworks_landed"] == "toyrl" and source["days_to_first_landing"] == 30
    assert items["frameworks_landed"].isna().sum() == len(items) - 1
