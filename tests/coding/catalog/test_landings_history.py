"""Landings that hold on real-shaped histories (issue 18): renamed options, names in
comments only, dashed CLI flags, bulk syncs, committers west of UTC late in the evening,
and blobless clones with absent blobs. Every repository is built here with git itself."""

import shutil
import subprocess
from datetime import date

import pytest
from django.core.management import call_command

from coding.catalog import edit as catalog_edit
from coding.catalog import git as landings_git
from coding.catalog import landings
from coding.catalog import names as landings_names
from coding.models import Framework, FrameworkScan, Landing, Method, MethodLink, OptionName
from coding.models.catalog import OptionHit
from tests import factories
from tests.coding.catalog.test_landings import Repo


class History(Repo):
    def at(self, message, stamp, files, authored=None, remove=()):
        """Commit with full timestamps: `stamp` is the committer's, with its offset."""
        for name in remove:
            (self.path / name).unlink()
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.run("add", "-A")
        self.run("-c", "user.name=Dana Dev", "-c", "user.email=dev@example.org", "commit", "-q",
                 "-m", message, env={"GIT_AUTHOR_DATE": authored or stamp,
                                     "GIT_COMMITTER_DATE": stamp})
        return self.run("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path):
    return History(tmp_path / "framework")


def method(study, framework, name, *options, first_public="2025-03-01"):
    made = Method.objects.create(study=study, name=name, first_public=first_public)
    for option in options:
        OptionName.objects.create(method=made, framework=framework, name=option)
    return made


def hit(framework, name):
    return OptionHit.objects.get(option__framework=framework, option__name=name)


# --- renames -------------------------------------------------------------------------

def test_a_renamed_flag_lands_under_its_first_name_and_both_names_keep_their_dates(
        repo, toyrl, alpha, people):
    tis = method(alpha, toyrl, "TIS", "use_tis")
    first = repo.at("Off-policy correction (#11)", "2025-08-04T10:00:00+00:00",
                    {"train.sh": "python train.py --enable-off-policy-correction\n"})
    renamed = repo.at("Rename the flag (#19)", "2025-09-15T10:00:00+00:00",
                      {"train.sh": "python train.py --use-tis\n"})
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=tis).commit == renamed  # only the new name is known

    # The owner adds the predecessor name: the next scan finds the earlier landing.
    catalog_edit.add_option_name(tis, toyrl, "enable_off_policy_correction", people["olive"])
    landings.scan_framework(toyrl, repo.path)
    landing = Landing.objects.get(method=tis)
    assert (landing.commit, landing.option_name, landing.pull_request) == (
        first, "enable_off_policy_correction", 11)
    assert landing.landed_on == date(2025, 8, 4) and not landing.upper_bound
    new = hit(toyrl, "use_tis")
    assert (new.commit, new.committed_on, new.variant) == (renamed, date(2025, 9, 15), "--use-tis")
    assert new.renamed and "--enable-off-policy-correction" in new.rename_reason


def test_every_name_is_scanned_even_when_the_method_has_landed(repo, toyrl, alpha):
    clip = method(alpha, toyrl, "Clip-higher", "clip_high", "clip_ratio_high")
    repo.at("Clip", "2025-04-01T12:00:00+00:00", {"loss.py": "clip_high = 0.28\n"})
    later = repo.at("Ratio form", "2025-05-01T12:00:00+00:00",
                    {"loss.py": "clip_high = 0.28\nclip_ratio_high = clip_high\n"})
    landings.scan_framework(toyrl, repo.path)
    assert hit(toyrl, "clip_ratio_high").commit == later
    assert not hit(toyrl, "clip_ratio_high").renamed  # clip_high is still there
    assert Landing.objects.get(method=clip).option_name == "clip_high"


def test_a_list_gaining_an_element_is_not_a_rename(repo, toyrl, alpha):
    method(alpha, toyrl, "Dr. GRPO", "dr_grpo")
    repo.at("Modes", "2025-03-01T12:00:00+00:00",
            {"core.py": 'MODES = ["token_mean",\n         "group_norm"]\n'})
    sha = repo.at("Add dr_grpo mode", "2025-04-01T12:00:00+00:00",
                  {"core.py": 'MODES = ["token_mean",\n         "group_norm", "dr_grpo"]\n'})
    landings.scan_framework(toyrl, repo.path)
    found = hit(toyrl, "dr_grpo")
    assert found.commit == sha and not found.renamed and not found.upper_bound
    assert found.line == '"group_norm", "dr_grpo"]'


def test_line_pairs_are_renames_only_when_one_identifier_token_is_replaced():
    assert landings_names.replaced_token(
        'p.add_argument("--enable-off-policy-correction", action="store_true")',
        'p.add_argument("--use-tis", action="store_true")') == (
        "--enable-off-policy-correction", "--use-tis")
    assert landings_names.replaced_token('"group_norm"]', '"group_norm", "dr_grpo"]') is None
    assert landings_names.replaced_token("clip = 0.2", "clip = 0.28") is None  # a value


# --- what counts -----------------------------------------------------------------------

def test_comments_and_docstrings_are_mentions_not_landings(repo, toyrl, alpha):
    cispo = method(alpha, toyrl, "CISPO", "cispo", first_public="2025-06-16")
    repo.at("Recipe notes", "2025-07-01T12:00:00+00:00", {
        "recipe/run.py": '"""Later: cispo."""\n# cispo\nlr = 1e-6  # try cispo\n',
        "recipe/cfg.yaml": "lr: 1.0e-6  # cispo\n",
        "recipe/run.sh": "# cispo soon\npython run.py\n",
        "README.md": "cispo\n"})
    landings.scan_framework(toyrl, repo.path)
    assert not Landing.objects.filter(method=cispo).exists()
    scan = FrameworkScan.objects.get(framework=toyrl)
    assert scan.mentions["cispo"]["committed_on"] == "2025-07-01"
    assert any("cispo appears in a" in w and "no landing" in w
               for w in landings.scan_warnings(scan))

    real = repo.at("CISPO loss (#88)", "2025-08-17T12:00:00+00:00", {
        "recipe/run.py": '"""Later: cispo."""\n# cispo\nlr = 1e-6  # try cispo\n'
                         'if loss_mode == "cispo":\n    pass\n'})
    landings.scan_framework(toyrl, repo.path)
    landing = Landing.objects.get(method=cispo)
    assert landing.commit == real and landing.landed_on == date(2025, 8, 17)
    assert landing.hit.line == 'if loss_mode == "cispo":' and landing.hit.kind == "code"
    assert landing.hit.mention["committed_on"] == "2025-07-01"
    assert FrameworkScan.objects.get(framework=toyrl).mentions == {}


def test_files_are_read_by_kind():
    names = landings_names.Names(["cispo", "algorithm.filter_groups", "use_tis"])
    py = landings_names.hits("a.py", 'def f():\n    """cispo here."""\n    return "cispo"  # cispo\n', names)
    assert {(h.line, h.kind) for h in py} == {(2, "docstring"), (3, "code"), (3, "comment")}
    yaml = landings_names.hits("c.yaml", "algorithm:\n  filter_groups: true  # cispo\n"
                               "other:\n  filter_groups: 1\n", names)
    assert {(h.line, h.name, h.kind) for h in yaml} == {
        (2, "algorithm.filter_groups", "config"), (2, "cispo", "comment")}
    toml = landings_names.hits("p.toml", 'use_tis = true # cispo\n', names)
    assert {(h.name, h.kind) for h in toml} == {("cispo", "comment"), ("use_tis", "config")}
    sh = landings_names.hits("r.sh", 'run --use-tis "#x" # --use-tis\n', names)
    assert {(h.text, h.kind) for h in sh} == {("--use-tis", "code"), ("--use-tis", "comment")}
    broken = landings_names.hits("b.py", 'x = "cispo\n', names)  # tokenize fails: by line
    assert [h.kind for h in broken] == ["code"]


def test_a_dashed_cli_flag_is_the_catalog_name(repo, toyrl, alpha):
    dr = method(alpha, toyrl, "Dr. GRPO", "disable_grpo_std_normalization")
    sha = repo.at("Flag", "2025-04-10T12:00:00+00:00", {
        "scripts/run.sh": "python -m slime.train \\\n  --disable-grpo-std-normalization\n"})
    landings.scan_framework(toyrl, repo.path)
    landing = Landing.objects.get(method=dr)
    assert landing.commit == sha and landing.hit.variant == "--disable-grpo-std-normalization"
    assert "--disable-grpo-std-normalization" in landings_names.forms(
        "disable_grpo_std_normalization")


def test_a_longer_flag_is_another_name():
    names = landings_names.Names(["use_tis"])
    assert not names.matches("--use-tis-v2 --reuse-tis use_tis_extra")
    assert [t for _, t, _ in names.matches("--use-tis x.use_tis")] == ["--use-tis", "use_tis"]


def test_lock_files_vendored_code_and_data_are_left_out_unless_configured(repo, toyrl, alpha):
    gspo = method(alpha, toyrl, "GSPO", "gspo")
    repo.at("Deps", "2025-07-01T12:00:00+00:00", {
        "uv.lock": 'name = "gspo"\n', "third_party/x/loss.py": "gspo = 1\n",
        "data/rows.csv": "gspo,1\n"})
    own = repo.at("GSPO", "2025-08-01T12:00:00+00:00", {"loss.py": "gspo = True\n"})
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=gspo).commit == own
    assert FrameworkScan.objects.get(framework=toyrl).excluded_paths == 3


def test_a_frameworks_own_exclusions_replace_the_defaults(repo, toyrl, alpha, capsys):
    gspo = method(alpha, toyrl, "GSPO", "gspo")
    early = repo.at("Vendored", "2025-07-01T12:00:00+00:00",
                    {"third_party/x/loss.py": "gspo = 1\n", "examples/a.py": "gspo = 2\n"})
    call_command("ingest_framework", alpha.slug, "toyrl", "--repo", str(repo.path),
                 "--exclude", "examples/*")
    toyrl.refresh_from_db()
    assert toyrl.scan_exclude == ["examples/*"]
    landing = Landing.objects.get(method=gspo)
    assert landing.commit == early and landing.hit.path == "third_party/x/loss.py"


# --- upper bounds and dates ---------------------------------------------------------------

def test_a_bulk_sync_authored_weeks_before_it_was_committed(repo, toyrl, alpha, capsys):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high", first_public="2025-03-18")
    files = {f"pkg/m{n}.py": f"x{n} = {n}\n" for n in range(landings.BULK_FILES)}
    files["pkg/loss.py"] = "clip_ratio_high = 0.28\n"
    repo.at("Sync from internal", "2025-06-10T09:00:00+08:00", files,
            authored="2025-05-01T09:00:00+08:00")
    landings.scan_framework(toyrl, repo.path)
    landing = Landing.objects.get(method=clip)
    assert landing.upper_bound and landing.hit.bulk and landing.hit.batch_sync
    assert landing.hit.authored_at.date() == date(2025, 5, 1)
    assert landing.landed_on == date(2025, 6, 10)
    call_command("ingest_framework", alpha.slug, "toyrl", "--repo", str(repo.path))
    out = capsys.readouterr().out
    assert "batch sync, authored 2025-05-01" in out and "bulk commit, 41 files" in out


def test_a_late_evening_commit_west_of_utc_lands_on_the_committers_date(
        repo, toyrl, alpha, people, client_for):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high", first_public="2025-03-18")
    repo.at("Clip", "2025-04-01T23:30:00-07:00", {"loss.py": "clip_ratio_high = 0.28\n"})
    landings.scan_framework(toyrl, repo.path)
    landing = Landing.objects.get(method=clip)
    assert landing.landed_on == date(2025, 4, 1)
    assert landing.committed_at.isoformat() == "2025-04-02T06:30:00+00:00"
    assert (landing.hit.committer_offset, landing.hit.committer_zone) == (-420, "UTC−07:00")
    row = next(r for r in landings.catalog(alpha) if r["method"] == clip)
    assert row["days_to_first"] == 14
    api = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/frameworks/{toyrl.pk}/")
    landed = api.json()["landed"][0]
    assert (landed["landed_on"], landed["days"], landed["days_utc"]) == ("2025-04-01", 14, 15)
    page = client_for(people["olive"]).get(
        f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "2025-04-01" in page and "UTC−07:00" in page and "(15 by UTC date)" in page


# --- absent objects --------------------------------------------------------------------------

def blobless_clone(source, target):
    source.run("config", "uploadpack.allowFilter", "true")
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", f"file://{source.path}",
                    str(target)], check=True, capture_output=True)
    # The clone cannot reach its remote any more (as offline, or a removed mirror).
    shutil.rmtree(source.path)
    return target


def test_a_blobless_clone_with_missing_blobs_is_scanned_and_what_it_lacks_reported(
        repo, toyrl, alpha, tmp_path, people, client_for, capsys):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    gspo = method(alpha, toyrl, "GSPO", "gspo")
    repo.at("Data loader", "2025-03-01T12:00:00+00:00", {"data_loader.py": "rows = 1\n"})
    sha = repo.at("Clip", "2025-04-01T12:00:00+00:00", {"loss.py": "clip_ratio_high = 0.28\n"})
    repo.at("GSPO in the loader", "2025-05-01T12:00:00+00:00",
            {"data_loader.py": "rows = 1\ngspo = True\n"})
    repo.at("Loader again", "2025-06-01T12:00:00+00:00",
            {"data_loader.py": "rows = 2\ngspo = True\n"})
    clone = blobless_clone(repo, tmp_path / "clone")
    assert landings_git.is_partial_clone(clone)

    summary = landings.scan_framework(toyrl, clone)
    assert Landing.objects.get(method=clip).commit == sha  # loss.py is checked out
    # Only the loader's last version is held: gspo's first appearance cannot be seen, and
    # its later sight is not taken for a landing in a commit that only changed rows.
    assert not Landing.objects.filter(method=gspo).exists()
    scan = FrameworkScan.objects.get(framework=toyrl)
    assert scan.partial_clone and scan.missing_blobs >= 2
    assert dict(map(tuple, scan.missing_paths))["data_loader.py"] >= 2
    assert summary["missing_blobs"] == scan.missing_blobs

    page = client_for(people["olive"]).get(
        f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "The clone is partial" in page and "data_loader.py" in page
    call_command("ingest_framework", alpha.slug, "toyrl", "--repo", str(clone))
    assert "could not be read" in capsys.readouterr().out


def test_a_missing_blob_in_an_ordinary_clone_does_not_stop_the_scan(repo, toyrl, alpha):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    repo.at("Big", "2025-03-01T12:00:00+00:00", {"weights_notes.py": "x = 1\n"})
    sha = repo.at("Clip", "2025-04-01T12:00:00+00:00", {"loss.py": "clip_ratio_high = 1\n"})
    blob = repo.run("rev-parse", "HEAD:weights_notes.py").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as a lost object
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=clip).commit == sha
    assert FrameworkScan.objects.get(framework=toyrl).missing_blobs == 1


def test_a_scan_reads_every_blob_through_one_cat_file_process(repo, toyrl, alpha, monkeypatch):
    for n in range(6):
        method(alpha, toyrl, f"M{n}", f"name_{n}")
    for n in range(6):
        repo.at(f"Add {n}", f"2025-04-0{n + 1}T12:00:00+00:00",
                {f"m{n}.py": f"name_{n} = {n}\n", "common.py": f"v = {n}\n"})
    started = []
    real = subprocess.Popen

    def counting(args, *rest, **kwargs):
        started.append(args)
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(landings_git.subprocess, "Popen", counting)
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.filter(framework=toyrl).count() == 6
    # One process reads the history, one reads the hits' commits again to judge them.
    assert sum("--batch" in a for a in started) == 2


# --- threads -----------------------------------------------------------------------------------

def test_threads_are_linked_by_method_name_and_by_the_landings_pull_request(
        repo, toyrl, alpha):
    from coding.labeling import queue

    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    grpo = method(alpha, toyrl, "GRPO")
    dr = method(alpha, toyrl, "Dr. GRPO", "dr_grpo")
    tis = method(alpha, toyrl, "Truncated importance sampling (TIS)", "use_tis")
    titled = factories.thread(1, posts=["Would help long runs."], framework="toyrl")
    titled.title = "Add Clip-higher"
    titled.save()
    dr_thread = factories.thread(2, posts=["As in the paper."], framework="toyrl")
    dr_thread.title = "Support Dr. GRPO"
    dr_thread.save()
    merged = factories.thread(3, posts=["Implements the correction."], framework="toyrl")
    merged.metadata |= {"repository": "example/toyrl", "number": 57}
    merged.save()
    for thread in (titled, dr_thread, merged):
        queue.add_item(alpha, thread, alpha.paper_codebook)
    repo.at("Correction (#57)", "2025-08-04T10:00:00+00:00", {"t.py": "use_tis = True\n"})
    landings.scan_framework(toyrl, repo.path)
    landings.link_documents(alpha)
    linked = set(MethodLink.objects.filter(kind="proposes").values_list("document", "method"))
    assert (titled.pk, clip.pk) in linked
    assert (dr_thread.pk, dr.pk) in linked and (dr_thread.pk, grpo.pk) not in linked
    assert (merged.pk, tis.pk) in linked
    assert landings.link_documents(alpha) == 0  # nothing twice


# --- pages stay flat ---------------------------------------------------------------------------

def landed_catalog(study, framework, count):
    """`count` methods, each with two option names hit and a landing from the earlier."""
    from datetime import UTC, datetime, timedelta

    from coding.catalog.landings import _rebuild_landings

    for n in range(count):
        made = method(study, framework, f"Method {n}", f"old_{n}", f"new_{n}")
        for k, option in enumerate(made.option_names.order_by("pk")):
            when = datetime(2025, 4, 1, 12, tzinfo=UTC) + timedelta(days=n + 30 * k)
            OptionHit.objects.create(
                option=option, commit=f"{n:02d}{k}" * 10, authored_at=when, author_offset=-420,
                committed_at=when, committer_offset=-420, committed_on=when.date(),
                path="loss.py", line_number=3, line=f"{option.name} = 1", kind="code",
                variant=option.name, files_changed=2, renamed=bool(k),
                rename_reason="replaces x" if k else "",
                mention={"commit": "ab" * 20, "committed_on": "2025-03-01", "path": "a.py",
                         "line_number": 1, "line": "# x", "kind": "comment"})
    _rebuild_landings(framework)


@pytest.mark.parametrize("url", ["/studies/{s}/catalog/", "/studies/{s}/frameworks/{f}/",
                                 "/api/studies/{s}/catalog/", "/api/studies/{s}/frameworks/{f}/"])
def test_catalog_and_framework_pages_take_the_same_queries_for_3_and_12_methods(
        alpha, people, client_for, url):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from coding.models import Role

    gamma = factories.study("Gamma study", owner=people["olive"])
    factories.member(gamma, people["olive"], Role.OWNER)
    counts = []
    client = client_for(people["olive"])
    for study, size in ((alpha, 3), (gamma, 12)):
        framework = Framework.objects.create(study=study, name="toyrl", repository="example/toyrl")
        landed_catalog(study, framework, size)
        FrameworkScan.objects.create(framework=framework, last_commit="c" * 40,
                                     missing_blobs=3, missing_paths=[["a.py", 3]])
        target = url.format(s=study.slug, f=framework.pk)
        assert client.get(target).status_code == 200  # warm
        with CaptureQueriesContext(connection) as queries:
            response = client.get(target)
        assert response.status_code == 200
        counts.append(len(queries))
        body = response.content.decode()
        assert f"Method {size - 1}" in body and "old_0" in body
    assert counts[0] == counts[1]


@pytest.mark.worker
def test_a_blobless_clone_is_scanned_on_the_worker_from_the_api(
        transactional_db, celery_worker, tmp_path, settings, client_for):
    """The job the API starts runs on the real worker: progress, the landing, and the
    warnings about what the partial clone lacks, read back over the API."""
    from coding.models import Role
    from tests.conftest import wait_for_job
    from workbench.models import Job

    olive = factories.user("olive")
    study = factories.study("Worker study", owner=olive)
    factories.member(study, olive, Role.OWNER)
    framework = Framework.objects.create(study=study, name="toyrl", repository="example/toyrl")
    clip = method(study, framework, "Clip-higher", "clip_ratio_high")
    source = History(tmp_path / "source")
    source.at("Loader", "2025-03-01T12:00:00+00:00", {"loader.py": "rows = 1\n"})
    sha = source.at("Clip (#9)", "2025-04-01T23:30:00-07:00", {"loss.py": "clip_ratio_high = 1\n"})
    source.at("Loader again", "2025-05-01T12:00:00+00:00", {"loader.py": "rows = 2\n"})
    settings.IMPORT_DIR = tmp_path / "imports"
    blobless_clone(source, settings.IMPORT_DIR / "toyrl")
    client = client_for(olive)
    started = client.post(f"/api/studies/{study.slug}/frameworks/{framework.pk}/",
                          {"repo": "toyrl"}, content_type="application/json")
    assert started.status_code == 202
    job = wait_for_job(Job.objects.get(pk=started.json()["id"]))
    assert job.status == Job.Status.DONE, job.error
    assert job.done == job.total and job.result["counts"]["missing_blobs"] >= 1
    landing = Landing.objects.get(method=clip)
    assert (landing.commit, landing.landed_on) == (sha, date(2025, 4, 1))
    detail = client.get(f"/api/studies/{study.slug}/frameworks/{framework.pk}/").json()
    assert detail["scan"]["partial_clone"]
    assert dict(map(tuple, detail["scan"]["missing_paths"])) == {"loader.py": 1}  # the scan stops once every name is found
    assert detail["option_names"][0]["hit"]["committer_offset"] == -420


def test_a_scan_of_another_branch_forgets_what_the_old_branch_held(repo, toyrl, alpha):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    repo.at("Start", "2025-03-01T12:00:00+00:00", {"a.py": "x = 1\n"})
    repo.run("checkout", "-q", "-b", "experimental")
    repo.at("Try clipping", "2025-04-01T12:00:00+00:00", {"a.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(toyrl, repo.path, "experimental")
    assert Landing.objects.get(method=clip).landed_on == date(2025, 4, 1)
    repo.run("checkout", "-q", "main")
    sha = repo.at("Clipping", "2025-06-01T12:00:00+00:00", {"a.py": "clip_ratio_high = 2\n"})
    landings.scan_framework(toyrl, repo.path, "main")
    assert Landing.objects.get(method=clip).commit == sha


def test_a_dotted_catalog_name_is_found_as_attribute_access_and_as_a_nested_key():
    names = landings_names.Names(["algorithm.filter_groups"])
    py = landings_names.hits("t.py", "if config.algorithm.filter_groups:\n    pass\n"
                             "filter_groups = 1  # not under algorithm\n", names)
    assert [(h.line, h.text) for h in py] == [(1, "algorithm.filter_groups")]
    nested = landings_names.hits("c.yaml", "algorithm:\n  filter_groups:\n    enable: true\n",
                                 names)
    assert [(h.line, h.kind) for h in nested] == [(2, "config")]


# --- flags judged the same on every scan (issue 40, finding 5) ------------------------------

def _flags(framework):
    return {(h.option.method.name, h.option.name, h.commit, h.renamed, h.rename_reason,
             h.upper_bound)
            for h in OptionHit.objects.filter(option__framework=framework)
            .select_related("option__method")}, {
        (landing.method.name, landing.commit, landing.option_name, landing.upper_bound)
        for landing in Landing.objects.filter(framework=framework).select_related("method")}


def test_a_fresh_and_an_incremental_scan_give_the_same_landings_and_flags(
        repo, toyrl, alpha, people):
    repo.at("Cap", "2025-03-01T12:00:00+00:00", {"rollout.py": "tis_imp_ratio_cap = 2.0\n"})
    repo.at("Rollout IS (#40)", "2025-05-01T12:00:00+00:00",
            {"rollout.py": "rollout_is = True\nrollout_is_level = 'token'\n"})
    repo.at("Unrelated", "2025-06-01T12:00:00+00:00", {"other.py": "x = 1\n"})
    # Incremental: the method has one name, then the owner adds its older sibling.
    tis = method(alpha, toyrl, "TIS", "rollout_is")
    landings.scan_framework(toyrl, repo.path)
    assert not hit(toyrl, "rollout_is").renamed  # nothing in the catalog was removed yet
    catalog_edit.add_option_name(tis, toyrl, "tis_imp_ratio_cap", people["olive"])
    landings.scan_framework(toyrl, repo.path)
    # Fresh: another framework of the same history with both names from the start.
    fresh = Framework.objects.create(study=alpha, name="fresh", repository="example/fresh")
    twin = Method.objects.create(study=alpha, name="TIS twin", first_public="2025-08")
    for name in ("rollout_is", "tis_imp_ratio_cap"):
        OptionName.objects.create(method=twin, framework=fresh, name=name)
    landings.scan_framework(fresh, repo.path)

    incremental, fresh_flags = _flags(toyrl), _flags(fresh)
    rename = hit(toyrl, "rollout_is")
    assert rename.renamed and rename.rename_reason == "the same commit removes tis_imp_ratio_cap"
    assert {row[1:] for row in incremental[0]} == {row[1:] for row in fresh_flags[0]}
    assert {row[1:] for row in incremental[1]} == {row[1:] for row in fresh_flags[1]}


def test_a_name_split_into_siblings_is_not_a_rename(repo, toyrl, alpha):
    method(alpha, toyrl, "Decoupled clip", "ratio_eps_max")
    repo.at("Clip", "2025-03-01T12:00:00+00:00", {"cfg.yaml": "loss:\n  ratio_eps: 0.2\n"})
    sha = repo.at("Separate bounds (#8)", "2025-04-01T12:00:00+00:00",
                  {"cfg.yaml": "loss:\n  ratio_eps_min: 0.2\n  ratio_eps_max: 0.2\n"})
    landings.scan_framework(toyrl, repo.path)
    found = hit(toyrl, "ratio_eps_max")
    assert found.commit == sha and not found.renamed and not found.upper_bound
    # One name giving way to one other is still a rename.
    method(alpha, toyrl, "Renamed", "eps_upper")
    repo.at("Rename (#9)", "2025-05-01T12:00:00+00:00",
            {"cfg.yaml": "loss:\n  ratio_eps_min: 0.2\n  eps_upper: 0.2\n"})
    landings.scan_framework(toyrl, repo.path)
    assert hit(toyrl, "eps_upper").rename_reason == "replaces ratio_eps_max"
