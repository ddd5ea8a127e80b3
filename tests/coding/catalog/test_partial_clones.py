"""Blobless clones and submodules (issue 40, findings 3 and 4): a partial clone whose
remote can be reached gets the file versions the scan needs fetched, in batches, and finds
every landing a full clone finds; one whose remote cannot be reached says so, and no page
calls a name it could not look for "not found"; a submodule is never a missing blob."""

import subprocess


from coding.catalog import git as landings_git
from coding.catalog import landings
from coding.models import FrameworkScan, Landing
from tests.coding.catalog.test_landings_history import History, blobless_clone, method


def history(tmp_path):
    """Old versions of loader.py hold the landings; the clone checks out only the last."""
    source = History(tmp_path / "source")
    source.run("config", "uploadpack.allowFilter", "true")
    source.at("Loader", "2025-03-01T12:00:00+00:00", {"loader.py": "rows = 1\n"})
    first = source.at("GSPO (#5)", "2025-04-01T12:00:00+00:00",
                      {"loader.py": "rows = 1\ngspo = True\n"})
    second = source.at("Clip (#6)", "2025-05-01T12:00:00+00:00",
                       {"loader.py": "rows = 1\nclip_ratio_high = 0.28\n"})
    source.at("Loader again", "2025-06-01T12:00:00+00:00", {"loader.py": "rows = 2\n"})
    return source, first, second


def clone_keeping_remote(source, target):
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--filter=blob:none",
                    f"file://{source.path}", str(target)], check=True, capture_output=True)
    return target


def test_a_blobless_clone_with_its_remote_fetches_what_the_scan_needs(
        tmp_path, toyrl, alpha, people, client_for, monkeypatch):
    gspo = method(alpha, toyrl, "GSPO", "gspo")
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    source, first, second = history(tmp_path)
    clone = clone_keeping_remote(source, tmp_path / "clone")
    assert landings_git.promisor_remote(clone) == "origin"
    monkeypatch.setattr(landings_git, "FETCH_BATCH", 2)  # several batches
    messages = []

    summary = landings.scan_framework(toyrl, clone, report=lambda *a: messages.append(a[2]))
    assert Landing.objects.get(method=gspo).commit == first
    assert Landing.objects.get(method=clip).commit == second
    scan = FrameworkScan.objects.get(framework=toyrl)
    assert scan.partial_clone and scan.complete and scan.missing_blobs == 0
    assert scan.fetched_blobs == summary["fetched_blobs"] >= 3 and scan.fetch_error == ""
    assert any("absent file versions fetched from origin" in m for m in messages)
    page = client_for(people["olive"]).get(
        f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "file versions the scan needed were fetched from its remote" in page


def test_a_blobless_clone_that_cannot_reach_its_remote_says_names_are_not_known(
        tmp_path, toyrl, alpha, people, client_for):
    gspo = method(alpha, toyrl, "GSPO", "gspo")
    source, _, _ = history(tmp_path)
    clone = blobless_clone(source, tmp_path / "clone")  # the remote is removed
    messages = []

    landings.scan_framework(toyrl, clone, report=lambda *a: messages.append(a[2]))
    assert not Landing.objects.filter(method=gspo).exists()
    scan = FrameworkScan.objects.get(framework=toyrl)
    assert not scan.complete and scan.fetched_blobs == 0 and "git fetch from origin" in \
        scan.fetch_error
    assert any("names not found are not known" in m for m in messages)
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "what it lacks could not be fetched" in page
    assert "not known: the clone lacks file versions" in page and ">not found<" not in page
    catalog = olive.get(f"/studies/{alpha.slug}/catalog/").content.decode()
    assert "not known in toyrl" in catalog and "none of 1 tracked" not in catalog
    api = olive.get(f"/api/studies/{alpha.slug}/catalog/").json()
    row = next(r for r in api["results"] if r["method"] == "GSPO")
    assert row["not_known_in"] == ["toyrl"]
    detail = olive.get(f"/api/studies/{alpha.slug}/frameworks/{toyrl.pk}/").json()
    assert detail["scan"]["complete"] is False and detail["scan"]["fetch_error"]


def test_a_submodule_is_not_a_missing_blob(tmp_path, toyrl, alpha):
    clip = method(alpha, toyrl, "Clip-higher", "clip_ratio_high")
    repo = History(tmp_path / "framework")
    repo.at("Start", "2025-03-01T12:00:00+00:00", {"a.py": "x = 1\n"})
    for n, when in enumerate(["2025-03-02", "2025-03-03"]):
        # A submodule `recipe` pinned at a commit of another repository, then moved on.
        repo.run("update-index", "--add", "--cacheinfo", f"160000,{str(n + 1) * 40},recipe")
        repo.run("-c", "user.name=Dana Dev", "-c", "user.email=dev@example.org", "commit", "-q",
                 "-m", f"Bump recipe {n}", env={"GIT_AUTHOR_DATE": f"{when}T12:00:00+00:00",
                                                "GIT_COMMITTER_DATE": f"{when}T12:00:00+00:00"})
    sha = repo.at("Clip", "2025-04-01T12:00:00+00:00", {"loss.py": "clip_ratio_high = 1\n"})
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=clip).commit == sha
    scan = FrameworkScan.objects.get(framework=toyrl)
    assert (scan.missing_blobs, scan.missing_paths, scan.complete) == (0, [], True)
