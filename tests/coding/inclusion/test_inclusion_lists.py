"""Inclusion a team already knows (issue 40, finding 6): a CSV list of included papers,
imported with provenance as an inclusion source beside the tracker; the analysis says
which source it used and compares them; p below 0.001 is printed `< 0.001`, with shares
beside counts."""

import io
import json
from io import StringIO
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from coding.inclusion.analysis import analyse
from coding.inclusion.lists import InclusionListError, import_list
from coding.models import AuditEntry, Decision, Framework, InclusionList, ListedInclusion
from tests import factories
from tests.coding.inclusion.studies import GENERAL, GENERAL_ONLY, field


def csv_file(text):
    return io.BytesIO(text.encode())


def tracker_list(skip=(), extra=()):
    """The tracker's included papers of the `tracked` study as a list, less `skip`, plus
    `extra` (paper numbers 100 + n, as the fixture makes them)."""
    rows = ["paper,framework,date,link"]
    for n, (_, included) in enumerate(GENERAL):
        if (included and n not in skip) or n in extra:
            rows.append(f"2599.{100 + n:05d},TOYRL,2025-09-0{1 + n % 9},"
                        f"https://github.com/example/toyrl/pull/{n}")
    return "\n".join(rows) + "\n"


def test_a_list_is_a_source_the_analysis_names_and_compares_with_the_tracker(tracked, people):
    # The list leaves out paper 0 (included by the tracker) and adds paper 2 (not).
    done = import_list(tracked, csv_file(tracker_list(skip={0}, extra={2})), "table 3",
                       people["olive"], file_name="table3.csv")
    assert (done["rows"], done["papers"], done["frameworks"], done["replaced"]) == (
        7, 7, ["toyrl"], 0)  # written as the catalog's framework
    by_list = analyse(tracked, GENERAL_ONLY, "list:table 3")
    assert by_list["source_key"] == "list:table 3" and "table3.csv" in by_list["source"]
    assert by_list["sources"] == ["tracker", "list:table 3"]
    assert (by_list["included"], by_list["not_included"]) == (7, 8)
    # Paper 0 (released) left the included, paper 2 (released) joined them: same counts here.
    assert field(by_list, "code_released")["included"] == [2, 5]
    compared = by_list["comparisons"][0]
    assert compared["source"] == "tracker"
    assert (compared["both"], compared["used_only"], compared["other_only"],
            compared["neither"]) == (6, 1, 1, 7)
    assert compared["differing_papers"] == ["2599.00100", "2599.00102"]
    assert compared["kappa"] == pytest.approx(1 - 2 / 15 / (1 - (7 * 7 + 8 * 8) / 225))
    by_tracker = analyse(tracked, GENERAL_ONLY)
    assert by_tracker["source_key"] == "tracker"
    assert by_tracker["comparisons"][0]["source"] == "list:table 3"
    entry = AuditEntry.objects.get(action="inclusion_list.import")
    assert entry.details["sha256"] == done["sha256"] and entry.details["rows"] == 7
    assert entry.target == "inclusion list table 3"
    # Inclusion is blinded from coders, as a scan makes it.
    tracked.refresh_from_db()
    assert "included_in" in tracked.blinded_fields


def test_importing_under_the_same_name_replaces_the_list(tracked, people):
    import_list(tracked, csv_file(tracker_list()), "known", people["olive"])
    done = import_list(tracked, csv_file("paper,framework\n2599.00100,verl\n"), "known",
                       people["olive"])
    assert (done["rows"], done["replaced"]) == (1, 7)
    assert list(ListedInclusion.objects.values_list("framework", flat=True)) == ["verl"]


@pytest.mark.parametrize("text, where", [
    ("paper,date\n2599.00100,2025-01-01\n", (1, "framework", "the header lacks framework")),
    ("paper,framework,date\n2599.00100,toyrl,2025-13-01\n", (2, "date", "YYYY-MM-DD")),
    ("paper,framework\n2599.09999,toyrl\n", (2, "paper", "no paper 2599.09999")),
    ("paper,framework\n2599.00100,toyrl\n2599.00101,toyrl\n2599.00100,ToyRL\n",
     (4, "framework", "already on line 2")),
    ("paper,framework\n2599.00100,\n", (2, "framework", "empty")),
    ("paper,framework\n2599.00100,toyrl,extra\n", (2, "-", "more cells")),
    ("paper,framework\n", (2, "paper", "no rows")),
])
def test_a_bad_list_is_refused_by_line_and_column_and_nothing_is_stored(
        tracked, people, text, where):
    import_list(tracked, csv_file(tracker_list()), "kept", people["olive"])
    with pytest.raises(InclusionListError) as raised:
        import_list(tracked, csv_file(text), "kept", people["olive"])
    line, column, message = raised.value.errors[0]
    assert (line, column) == where[:2] and where[2] in message
    assert ListedInclusion.objects.filter(inclusion_list__name="kept").count() == 7


def test_a_file_that_is_not_utf8_names_its_line(tracked, people):
    raw = io.BytesIO(b"paper,framework\n2599.00100,caf\xe9\n")
    with pytest.raises(InclusionListError, match="line 2.*not UTF-8"):
        import_list(tracked, raw, "latin", people["olive"])
    assert not InclusionList.objects.exists()


@pytest.fixture
def listed_study(people):
    """No tracker: 20 papers, the 10 that released code included by the list alone."""
    study = factories.study("Known inclusion", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    book = factories.codebook(study, factories.SMALL_PAPER_CODEBOOK)
    rows = ["paper,framework,date,link"]
    for n in range(20):
        item = factories.paper_item(study, book, n)
        Decision.objects.create(item=item, question_key="code_released", revision=1,
                                value="yes" if n < 10 else "no",
                                method=Decision.Method.UNANIMOUS)
        if n < 10:
            rows.append(f"2599.{n:05d},trl,,v0.{n}.0")
    import_list(study, csv_file("\n".join(rows) + "\n"), "known", people["olive"])
    return study


def test_a_study_without_the_tracker_analyses_its_list_and_prints_small_p_as_papers_do(
        listed_study, people, client_for):
    client = client_for(people["olive"])  # the import blinded inclusion from viewers
    api = client.get(f"/api/studies/{listed_study.slug}/inclusion/").json()
    assert api["available"] and api["source_key"] == "list:known" and api["comparisons"] == []
    released = field(api, "code_released")
    assert released["p"] < 0.001  # exact in the API
    assert (released["included_share"], released["not_included_share"]) == ([1.0, 0.0],
                                                                            [0.0, 1.0])
    html = client.get(f"/studies/{listed_study.slug}/inclusion/").content.decode()
    assert "&lt; 0.001" in html and "10 <span class=\"muted\">(100%)</span>" in html
    out = StringIO()
    call_command("inclusion_report", listed_study.slug, stdout=out)
    report = out.getvalue()
    assert "p < 0.001" in report and "yes 10 (100%) / 0 (0%)" in report
    assert "Inclusion from the inclusion list 'known'" in report


def test_an_unknown_source_is_refused_by_name(listed_study, people, client_for):
    response = client_for(people["olive"]).get(
        f"/api/studies/{listed_study.slug}/inclusion/", {"source": "list:nope"})
    assert response.status_code == 400 and "list:known" in response.json()["source"][0]
    with pytest.raises(CommandError, match="no inclusion source"):
        call_command("inclusion_report", listed_study.slug, "--source", "tracker")


def test_owners_import_on_the_page_and_the_api_and_no_one_else_does(
        tracked, people, client_for):
    url = f"/studies/{tracked.slug}/inclusion/"
    page = client_for(people["olive"]).post(url, {
        "name": "from the page", "file": SimpleUploadedFile("t.csv", tracker_list().encode())})
    assert page.status_code == 302
    assert parse_qs(urlsplit(page["Location"]).query) == {"source": ["list:from the page"]}
    shown = client_for(people["olive"]).get(page["Location"]).content.decode()
    assert "from the page" in shown and "The other inclusion sources" in shown
    bad = client_for(people["olive"]).post(url, {
        "name": "bad", "file": SimpleUploadedFile("b.csv", b"paper,framework\nnope,toyrl\n")})
    assert bad.status_code == 400 and "no paper nope in this study" in bad.content.decode()
    api = client_for(people["olive"]).post(f"/api/studies/{tracked.slug}/inclusion/lists/", {
        "name": "from the api", "file": SimpleUploadedFile("a.csv", tracker_list().encode())})
    assert api.status_code == 201 and api.json()["rows"] == 7
    refused = client_for(people["olive"]).post(f"/api/studies/{tracked.slug}/inclusion/lists/", {
        "name": "x", "file": SimpleUploadedFile("a.csv", b"paper,framework\n2599.00100,\n")})
    assert refused.status_code == 400 and refused.json()["errors"][0] == {
        "line": 2, "column": "framework", "message": "empty: the framework's name"}
    tracked.adjudicators_see_blinded = True  # else the import hid inclusion from them
    tracked.save()
    listed = client_for(people["vera"]).get(f"/api/studies/{tracked.slug}/inclusion/lists/")
    assert [entry["name"] for entry in listed.json()["lists"]] == ["from the api", "from the page"]
    for who in ("vera", "ada"):  # a viewer and an adjudicator read but do not import
        client = client_for(people[who])
        assert client.post(url, {"name": "v", "file": SimpleUploadedFile(
            "t.csv", tracker_list().encode())}).status_code == 403
    coder = client_for(people["cora"])
    assert coder.get(f"/api/studies/{tracked.slug}/inclusion/lists/").status_code == 403
    assert coder.post(url, {"name": "c", "file": SimpleUploadedFile(
        "t.csv", tracker_list().encode())}).status_code == 403
    assert InclusionList.objects.count() == 2


def test_the_command_imports_a_list_and_names_bad_lines(tracked, people, tmp_path):
    good = tmp_path / "known.csv"
    good.write_text(tracker_list())
    out = StringIO()
    call_command("inclusion_list", tracked.slug, str(good), "--user", "olive", stdout=out)
    assert "Inclusion list known: 7 rows, 7 papers in toyrl." in out.getvalue()
    out = StringIO()
    call_command("inclusion_list", tracked.slug, stdout=out)
    assert out.getvalue().startswith("known: 7 rows from known.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("paper,framework,date\n2599.00100,toyrl,yesterday\n")
    with pytest.raises(CommandError, match="line 2, date: 'yesterday' is not a date"):
        call_command("inclusion_list", tracked.slug, str(bad))
    out = StringIO()
    call_command("inclusion_report", tracked.slug, "--source", "list:known", "--json", stdout=out)
    assert json.loads(out.getvalue())["source_key"] == "list:known"
    assert Framework.objects.get(study=tracked).name == "toyrl"


def test_a_list_past_the_row_limit_is_refused_whole(tracked, people, monkeypatch):
    from coding.inclusion import lists

    monkeypatch.setattr(lists, "MAX_ROWS", 3)
    with pytest.raises(InclusionListError, match="line 5.*more than 3 rows"):
        import_list(tracked, csv_file(tracker_list()), "big", people["olive"])
    assert not InclusionList.objects.exists()


def test_the_lists_and_a_list_analysis_cost_the_same_queries_at_any_list_size(
        tracked, people, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(people["olive"])

    def queries(url):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    def counted():
        return [queries(f"/api/studies/{tracked.slug}/inclusion/lists/"),
                queries(f"/studies/{tracked.slug}/inclusion/?source=list:known"),
                queries(f"/api/studies/{tracked.slug}/inclusion/?source=list:known")]

    import_list(tracked, csv_file(tracker_list(skip=range(5))), "known", people["olive"])
    small = counted()
    # The list twice as long: the same queries.
    import_list(tracked, csv_file(tracker_list(extra=range(15))), "known", people["olive"])
    assert counted() == small


def test_the_study_page_leads_to_the_inclusion_page_for_those_who_may_read_it(
        tracked, people, client_for):
    url = f"/studies/{tracked.slug}/inclusion/"
    assert url in client_for(people["olive"]).get(f"/studies/{tracked.slug}/").content.decode()
    assert url not in client_for(people["cora"]).get(f"/studies/{tracked.slug}/").content.decode()
