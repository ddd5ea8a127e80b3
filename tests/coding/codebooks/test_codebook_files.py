"""Codebooks as files: hostile files first, then who may import, then round trips.

Every refusal must name where the problem is (a line, or a path such as
questions[2].options[0].value) and write nothing: no codebook, version, question, option or
audit entry."""

import copy
import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from coding.codebooks import files as codebook_files
from coding.codebooks.files import BadFile, dump, import_file, read
from coding.codebooks.spec import InvalidSpec
from coding.codebooks.versions import create_codebook, publish
from coding.models import AuditEntry, Codebook, CodebookVersion, Option, Question, Role
from coding.studies import presets
from tests import factories

NS = "urn:QDA-XML:codebook:1.0"
GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def counts():
    return [m.objects.count() for m in (Codebook, CodebookVersion, Question, Option, AuditEntry)]


def upload(client, study, name, content, **fields):
    data = {"file": SimpleUploadedFile(name, content), "target": "new", "applies_to": "paper",
            **fields}
    return client.post(reverse("codebook-import", args=[study.slug]), data)


def json_doc(**changes):
    doc = {"format": "workbench-codebook", "format_version": 1, **presets.PAPER_CODEBOOK}
    if "questions" in changes:  # the preset's translations name its own questions
        doc.pop("translations")
    doc.update(changes)
    return copy.deepcopy(doc)  # tests change it: never the preset itself


BILLION_LAUGHS_XML = b"""<?xml version="1.0"?>
<!DOCTYPE CodeBook [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes><Code guid="00000000-0000-0000-0000-000000000001" name="&d;" isCodable="true"/></Codes></CodeBook>
"""
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE CodeBook [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes><Code guid="00000000-0000-0000-0000-000000000001" name="&secret;" isCodable="true"/></Codes></CodeBook>
"""
EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE CodeBook SYSTEM "http://127.0.0.1:9/codebook.dtd">
<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes/></CodeBook>
"""
YAML_BOMB = "\n".join(
    [f"format: workbench-codebook", "format_version: 1", "name: Bomb", "applies_to: paper",
     'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
    + ["questions: *i"]).encode()
DUPLICATE_YAML = b"""format: workbench-codebook
format_version: 1
name: First
applies_to: paper
name: Second
questions: []
"""
DUPLICATE_JSON = b"""{"format": "workbench-codebook", "format_version": 1,
 "name": "Dup", "applies_to": "paper",
 "questions": [
  {"key": "a", "text": "A?", "kind": "yes_no", "key": "b"}
 ]}
"""

HOSTILE = [
    # (name, file, where the error must point, words the message must hold)
    ("xxe.qdc", XXE, "line 2", "DOCTYPE"),
    ("laughs.qdc", BILLION_LAUGHS_XML, "line 2", "DOCTYPE"),
    ("external-dtd.qdc", EXTERNAL_DTD, "line 2", "DOCTYPE"),
    ("laughs.yaml", YAML_BOMB, "line ", "aliases are expanded"),
    ("recursive.yaml", b"format: workbench-codebook\nquestions: &q [*q]\n", "line 2",
     "recursive alias"),
    ("huge.json", b"{" + b" " * 1_000_001 + b"}", "file", "at most 1,000,000"),
    ("v2.json", json.dumps(json_doc(format_version=2)).encode(), "format_version",
     "reads format_version 1"),
    ("other.json", json.dumps({"name": "x", "questions": []}).encode(), "format",
     "not a workbench codebook"),
    ("project.qdc", b'<?xml version="1.0"?>\n<Project xmlns="urn:QDA-XML:project:1.0" name="p"/>',
     "line 2", "root element is 'Project'"),
    ("wrong-namespace.qdc", b'<CodeBook xmlns="urn:example:other"><Codes/></CodeBook>',
     "line 1", "root is 'CodeBook'"),
    ("dup.yaml", DUPLICATE_YAML, "line 5", "duplicate key 'name' (first on line 3)"),
    ("dup.json", DUPLICATE_JSON, "line 4", "duplicate key 'key'"),
    ("latin1.json", b'{"format": "workbench-codebook",\n "name": "Caf\xe9"}', "line 2",
     "not UTF-8"),
    ("zip.json", b"PK\x03\x04\x00\x00\x00\x00", "line 1", "binary file"),
    ("image.yaml", b"\x89PNG\r\n\x1a\n\x00", "line 1", "not UTF-8"),
    ("tag.yaml", b"format: workbench-codebook\nx: !!python/object/apply:os.system ['true']\n",
     "line 2", "python/object"),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000, "file", ""),
    ("many-values.json", b'{"x": [' + b"1," * 60_000 + b"1]}", "file", "more than 50,000"),
    ("many-values.yaml", b"x:\n" + b"- 1\n" * 60_000, "line ", "more than 50,000"),
    ("broken.json", b'{"format": "workbench-codebook",\n  "name": }', "line 2", "column 11"),
    ("broken.qdc", b"<CodeBook xmlns='urn:QDA-XML:codebook:1.0'>\n<Codes>\n</CodeBook>",
     "line 3", "not well-formed"),
    ("empty.yaml", b"  \n", "file", "empty"),
    ("nan.json", b'{"format": "workbench-codebook", "x": NaN}', "file", "NaN"),
    ("unnamed.qdc", b'<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes>\n'
                    b'<Code guid="00000000-0000-0000-0000-000000000001" isCodable="true"/>'
                    b'</Codes></CodeBook>', "line 2", "name attribute"),
]


@pytest.mark.parametrize("name,content,where,words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_file_gets_a_located_error_and_writes_nothing(name, content, where, words,
                                                                 alpha, client_for, people):
    before = counts()
    response = upload(client_for(people["olive"]), alpha, name, content)
    assert response.status_code == 400
    problems = response.context["problems"]
    assert problems, "no problem listed"
    assert problems[0].path.startswith(where), problems
    assert words in problems[0].message, problems
    assert counts() == before
    assert b"root:" not in response.content  # nothing of /etc/passwd


def test_an_xml_bomb_is_refused_through_the_api_too(alpha, people):
    api = APIClient()
    api.force_authenticate(people["olive"])
    before = counts()
    response = api.post(reverse("api-codebook-import", args=[alpha.slug]),
                        {"file": SimpleUploadedFile("laughs.qdc", BILLION_LAUGHS_XML)},
                        format="multipart")
    assert response.status_code == 400
    assert "line 2" in response.json()
    assert counts() == before


def test_a_meaning_error_names_its_path_and_line(alpha, client_for, people):
    doc = json_doc()
    doc["questions"][2]["options"][0]["value"] = "not a value!"
    text = yaml.safe_dump(doc, sort_keys=False)
    before = counts()
    response = upload(client_for(people["olive"]), alpha, "bad.yaml", text.encode())
    problem = response.context["problems"][0]
    assert problem.path == "questions[2].options[0].value"
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "not a value!" in row)
    assert f"(line {line})" in problem.message
    assert counts() == before


def test_an_unquoted_yes_in_yaml_is_named_with_its_line_and_a_hint(alpha, people):
    text = yaml.safe_dump(json_doc(), sort_keys=False).replace("- rl_method", "- yes", 1)
    with pytest.raises(BadFile) as refused:
        read(text.encode(), filename="x.yaml")
    error = refused.value.errors[0]
    line = text.splitlines().index("    - yes") + 1
    assert error.path == "questions[1].show_if.in[0]"
    assert error.message == ("text expected, found true or false; in YAML, yes, no, on and off "
                             f"without quotes are true or false: write 'yes' (line {line})")


def test_a_structure_error_names_its_path(alpha, people):
    doc = json_doc()
    doc["questions"][1]["options"][0]["colour"] = "red"
    doc["questions"][0]["required"] = "yes"
    with pytest.raises(BadFile) as refused:
        read(json.dumps(doc).encode(), filename="x.json")
    paths = {e.path: e.message for e in refused.value.errors}
    assert paths["questions[1].options[0].colour"] == "not a field of the format"
    assert paths["questions[0].required"] == "true or false expected, found text"


def test_a_condition_on_a_later_question_is_refused_by_the_one_validator(alpha, people):
    doc = json_doc()
    doc["questions"][0]["show_if"] = {"question": "scope", "in": ["general"]}
    with pytest.raises(BadFile) as refused:
        import_file(alpha, people["olive"], json.dumps(doc).encode(), filename="x.json")
    assert refused.value.errors[0].path == "questions[0].show_if.question"


def test_a_qdc_code_with_an_invalid_value_names_its_line(alpha, people):
    qdc = (b'<?xml version="1.0"?>\n<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes>\n'
           b'<Code guid="00000000-0000-0000-0000-000000000001" name="Tone" isCodable="false">\n'
           b'<Code guid="00000000-0000-0000-0000-000000000002" name="Warm" isCodable="true">'
           b'<Description>' + b"x" * 20_001 + b'</Description></Code>\n'
           b'</Code></Codes></CodeBook>')
    with pytest.raises(BadFile) as refused:
        import_file(alpha, people["olive"], qdc, filename="tone.qdc")
    error = refused.value.errors[0]
    assert error.path == "questions[0].options[0].definition"
    assert "(line 4)" in error.message


# --- who may import ---------------------------------------------------------------------

@pytest.mark.parametrize("person,status", [("cora", 403), ("ada", 403), ("vera", 403),
                                           ("otto", 404)])
def test_only_owners_import(person, status, alpha, beta, client_for, people):
    content = json.dumps(json_doc()).encode()
    before = counts()
    assert upload(client_for(people[person]), alpha, "c.json", content).status_code == status
    api = APIClient()
    api.force_authenticate(people[person])
    response = api.post(reverse("api-codebook-import", args=[alpha.slug]),
                        {"document": json_doc()}, format="json")
    assert response.status_code == status
    assert counts() == before


def test_a_coder_downloads_every_version_but_an_outsider_finds_nothing(alpha, beta, client_for,
                                                                       people):
    codebook = alpha.paper_codebook
    url = reverse("codebook-file", args=[alpha.slug, codebook.pk, 1, "json"])
    response = client_for(people["cora"]).get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="small-paper-codebook-v1.json"'
    assert json.loads(response.content)["name"] == codebook.name
    assert client_for(people["otto"]).get(url).status_code == 404
    bad = reverse("codebook-file", args=[alpha.slug, codebook.pk, 1, "xls"])
    assert client_for(people["cora"]).get(bad).status_code == 404


def test_the_api_sends_each_format_and_refuses_another(alpha, people):
    api = APIClient()
    api.force_authenticate(people["cora"])
    url = reverse("api-codebook-file", args=[alpha.slug, alpha.paper_codebook.pk, 1])
    for fmt, media in codebook_files.MEDIA_TYPES.items():
        response = api.get(url, {"format": fmt})
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith(media)
        assert response.content == dump(alpha.paper_codebook.versions.get(), fmt)
    response = api.get(url, {"format": "xls"})
    assert response.status_code == 400
    assert "format" in response.json()


# --- round trips ------------------------------------------------------------------------

PRESETS = [presets.PAPER_CODEBOOK, presets.THREAD_CODEBOOK]


@pytest.fixture
def gamma(people):
    """A second study owned by olive, to import into."""
    study = factories.study("Gamma study", owner=people["olive"])
    factories.member(study, people["olive"], Role.OWNER)
    return study


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("preset", PRESETS, ids=["paper", "thread"])
def test_export_import_export_gives_the_same_bytes(fmt, preset, alpha, gamma, people):
    original = create_codebook(alpha, preset).versions.get()
    first = dump(original, fmt)
    result = import_file(gamma, people["olive"], first, filename=f"c.{fmt}")
    again = CodebookVersion.objects.get(codebook_id=result["codebook_id"], number=1)
    assert dump(again, fmt) == first
    assert dump(again, "json") == dump(original, "json")


def test_the_preset_file_keeps_conditions_exclusive_options_and_special_answers(alpha, people):
    version = create_codebook(alpha, presets.PAPER_CODEBOOK).versions.get()
    doc = json.loads(dump(version, "json"))
    questions = {q["key"]: q for q in doc["questions"]}
    assert questions["scope"]["show_if"] == {"question": "label", "in": ["rl_method"]}
    assert [o["value"] for o in questions["failure_addressed"]["options"] if o["exclusive"]] == ["none"]
    assert questions["largest_policy_b"]["options"][0]["value"] == "not_reported"
    assert questions["largest_policy_b"]["min_value"] == 0


def test_awkward_text_survives_yaml(alpha, gamma, people):
    spec = {"name": "Awkward: yes", "applies_to": "paper", "description": "  leading\n\ntrailing  \n",
            "questions": [{"key": "q", "kind": "single", "text": "no", "definition": "1.0",
                           "options": [{"value": "on", "label": "null", "definition": "a: b\n- c",
                                        "examples": "'quoted' \"both\"\ttab", "shortcut": "1"}]}]}
    original = create_codebook(alpha, spec).versions.get()
    result = import_file(gamma, people["olive"], dump(original, "yaml"), filename="a.yml")
    again = CodebookVersion.objects.get(codebook_id=result["codebook_id"])
    assert dump(again, "json") == dump(original, "json")


@pytest.mark.parametrize("preset", PRESETS, ids=["paper", "thread"])
def test_a_qdc_round_trip_keeps_codes_and_descriptions(preset, alpha, gamma, people):
    original = create_codebook(alpha, preset).versions.get()
    first = dump(original, "qdc")
    result = import_file(gamma, people["olive"], first, filename="c.qdc", name=preset["name"],
                         applies_to=preset["applies_to"])
    again = CodebookVersion.objects.get(codebook_id=result["codebook_id"])
    assert dump(again, "qdc") == first  # the same GUIDs, names and descriptions
    kept = ("key", "text", "kind", "definition")
    for before, after in zip(original.questions.all(), again.questions.all(), strict=True):
        assert [getattr(after, f) for f in kept] == [getattr(before, f) for f in kept]
        option_fields = ("value", "label", "definition", "examples", "counter_examples")
        assert ([[getattr(o, f) for f in option_fields] for o in after.options.all()]
                == [[getattr(o, f) for f in option_fields] for o in before.options.all()])


def test_the_qdc_export_has_the_standards_structure(alpha):
    version = create_codebook(alpha, presets.PAPER_CODEBOOK).versions.get()
    data = dump(version, "qdc")
    root = ET.fromstring(data)
    assert root.tag == f"{{{NS}}}CodeBook"
    assert [child.tag for child in root] == [f"{{{NS}}}Codes"]
    guids = []

    def check(code, depth):
        assert code.tag == f"{{{NS}}}Code"
        assert GUID.fullmatch(code.get("guid")) and code.get("name")
        assert code.get("isCodable") in ("true", "false")
        assert set(code.attrib) <= {"guid", "name", "isCodable", "color"}
        tags = [child.tag for child in code]
        assert tags == sorted(tags, key=lambda t: t != f"{{{NS}}}Description")  # Description first
        assert tags.count(f"{{{NS}}}Description") <= 1
        guids.append(code.get("guid"))
        for child in code.findall(f"{{{NS}}}Code"):
            check(child, depth + 1)

    codes = root.find(f"{{{NS}}}Codes").findall(f"{{{NS}}}Code")
    assert len(codes) == len(presets.PAPER_CODEBOOK["questions"])
    for code in codes:
        check(code, 0)
    assert len(guids) == len(set(guids))
    label = codes[0]
    assert label.get("name") == "What does the paper mainly contribute?"
    assert label.find(f"{{{NS}}}Description").text.startswith("Key: label\nKind: single\n\n")
    assert dump(version, "qdc") == data


def test_a_codebook_from_another_tool_becomes_questions(alpha, people):
    qdc = """<?xml version="1.0" encoding="utf-8"?>
<CodeBook xmlns="urn:QDA-XML:codebook:1.0" origin="Some QDA tool">
  <Codes>
    <Code guid="{11111111-1111-1111-1111-111111111111}" name="Emotion" isCodable="false" color="#ff0000">
      <Description>How the speaker feels.</Description>
      <Code guid="22222222-2222-2222-2222-222222222222" name="Joy" isCodable="true">
        <Description>Happiness shown.</Description>
      </Code>
      <Code guid="33333333-3333-3333-3333-333333333333" name="Negative" isCodable="false">
        <Code guid="44444444-4444-4444-4444-444444444444" name="Anger" isCodable="true"/>
        <Code guid="55555555-5555-5555-5555-555555555555" name="Fear" isCodable="true"/>
      </Code>
    </Code>
    <Code guid="66666666-6666-6666-6666-666666666666" name="Irony" isCodable="true">
      <Description>Says the opposite of what is meant.</Description>
    </Code>
    <Code guid="77777777-7777-7777-7777-777777777777" name="Café talk" isCodable="true"/>
  </Codes>
</CodeBook>""".encode()
    result = import_file(alpha, people["olive"], qdc, filename="emotions.qdc")
    assert result["new_codebook"] and result["codebook"] == "emotions"
    version = CodebookVersion.objects.get(codebook_id=result["codebook_id"])
    assert version.status == CodebookVersion.Status.DRAFT
    emotion, codes = version.questions.all()
    assert (emotion.key, emotion.kind, emotion.definition) == ("emotion", "multiple",
                                                               "How the speaker feels.")
    assert [(o.value, o.label) for o in emotion.options.all()] == [
        ("joy", "Joy"), ("negative_anger", "Negative / Anger"), ("negative_fear", "Negative / Fear")]
    assert emotion.options.get(value="joy").definition == "Happiness shown."
    assert (codes.key, codes.kind, codes.required) == ("codes", "multiple", False)
    assert [(o.value, o.definition) for o in codes.options.all()] == [
        ("irony", "Says the opposite of what is meant."), ("cafe_talk", "")]


# --- targets ----------------------------------------------------------------------------

def test_an_import_into_a_codebook_adds_a_draft_version_and_an_audit_entry(alpha, client_for,
                                                                           people):
    codebook = alpha.paper_codebook
    doc = json.loads(dump(codebook.versions.get(), "json"))
    doc["name"] = "A name in the file"
    doc["questions"][0]["text"] = "Main contribution, reworded?"
    response = upload(client_for(people["olive"]), alpha, "next.json", json.dumps(doc).encode(),
                      target=str(codebook.pk))
    assert response.status_code == 302
    assert response["Location"] == reverse("codebook-version", args=[alpha.slug, codebook.pk, 2])
    codebook.refresh_from_db()
    assert codebook.name == "Small paper codebook"  # kept: a rename is asked for by name
    v1, v2 = codebook.versions.order_by("number")
    assert v1.questions.get(key="label").text == "Main contribution?"
    assert (v2.status, v2.questions.get(key="label").text) == ("draft", "Main contribution, reworded?")
    entry = AuditEntry.objects.get(action="codebook.import")
    assert (entry.actor, entry.target) == (people["olive"], "Small paper codebook v2")
    assert entry.details == {"format": "json", "questions": 6, "new_codebook": False,
                             "replaced_draft": False}


def test_an_import_replaces_the_questions_of_a_newest_draft(alpha, people):
    codebook = alpha.paper_codebook
    data = dump(codebook.versions.get(), "yaml")
    first = import_file(alpha, people["olive"], data, filename="a.yaml", codebook=codebook)
    second = import_file(alpha, people["olive"], data, filename="a.yaml", codebook=codebook)
    assert (first["version"], first["replaced_draft"]) == (2, False)
    assert (second["version"], second["replaced_draft"]) == (2, True)
    assert codebook.versions.count() == 2


def test_a_file_for_threads_is_refused_by_a_paper_codebook(alpha, people):
    thread_file = json.dumps(json_doc(**presets.THREAD_CODEBOOK)).encode()
    before = counts()
    with pytest.raises(BadFile) as refused:
        import_file(alpha, people["olive"], thread_file, filename="t.json",
                    codebook=alpha.paper_codebook)
    assert refused.value.errors[0].path == "applies_to"
    assert counts() == before


def test_a_new_codebook_may_not_take_a_name_in_use(alpha, people):
    data = dump(alpha.paper_codebook.versions.get(), "json")
    before = counts()
    with pytest.raises(InvalidSpec) as refused:
        import_file(alpha, people["olive"], data, filename="same.json")
    assert refused.value.errors[0].path == "name"
    assert counts() == before
    result = import_file(alpha, people["olive"], data, filename="same.json", name="Copy")
    assert (result["codebook"], result["version"]) == ("Copy", 1)


def test_a_dry_run_says_what_it_would_write_and_writes_nothing(alpha, people):
    api = APIClient()
    api.force_authenticate(people["olive"])
    before = counts()
    response = api.post(reverse("api-codebook-import", args=[alpha.slug]),
                        {"document": json_doc(), "dry_run": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "dry_run": True, "codebook_id": None, "codebook": "Paper codebook", "version": 1,
        "status": "draft", "new_codebook": True, "replaced_draft": False, "questions": 8,
        "options": 29, "format": "json"}
    assert counts() == before


def test_the_api_imports_a_file_and_refuses_a_duplicate_key_in_a_body(alpha, people):
    api = APIClient()
    api.force_authenticate(people["olive"])
    url = reverse("api-codebook-import", args=[alpha.slug])
    qdc = dump(create_codebook(alpha, presets.THREAD_CODEBOOK).versions.get(), "qdc")
    response = api.post(url, {"file": SimpleUploadedFile("threads.qdc", qdc),
                              "applies_to": "thread", "name": "Threads again"},
                        format="multipart")
    assert response.status_code == 201, response.content
    assert Codebook.objects.get(pk=response.json()["codebook_id"]).applies_to == "thread"
    body = b'{"document": {"format": "workbench-codebook", "format": "x"}}'
    response = api.post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert "line 1" in response.json()["detail"] and "duplicate key" in response.json()["detail"]


def test_a_page_dry_run_shows_the_summary(alpha, client_for, people):
    response = upload(client_for(people["olive"]), alpha, "paper.json",
                      json.dumps(json_doc()).encode(), dry_run="on")
    assert response.status_code == 200
    assert b"The file is good." in response.content
    assert not Codebook.objects.filter(name="Paper codebook").exists()


# --- the command ------------------------------------------------------------------------

def test_the_command_exports_and_imports(alpha, tmp_path, capsys):
    path = tmp_path / "paper.yaml"
    call_command("codebook_file", "export", alpha.slug, str(alpha.paper_codebook.pk),
                 "--format", "yaml", "-o", str(path))
    assert path.read_bytes() == dump(alpha.paper_codebook.versions.get(), "yaml")
    call_command("codebook_file", "import", alpha.slug, str(path), "--codebook",
                 str(alpha.paper_codebook.pk), "--dry-run")
    assert "Would write Small paper codebook v2 (draft)" in capsys.readouterr().out
    assert alpha.paper_codebook.versions.count() == 1
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(DUPLICATE_YAML)
    with pytest.raises(CommandError, match="line 5: duplicate key 'name'"):
        call_command("codebook_file", "import", alpha.slug, str(bad))


def test_a_version_without_questions_has_no_qdc_but_has_json(alpha, client_for, people):
    codebook = Codebook.objects.create(study=alpha, name="Empty", applies_to="paper")
    version = CodebookVersion.objects.create(codebook=codebook, number=1)
    publish(version)
    client = client_for(people["olive"])
    assert client.get(reverse("codebook-file", args=[alpha.slug, codebook.pk, 1, "qdc"])
                      ).status_code == 400
    assert client.get(reverse("codebook-file", args=[alpha.slug, codebook.pk, 1, "json"])
                      ).status_code == 200


def test_the_schema_names_the_models_kinds_and_levels():
    question = codebook_files.SCHEMA["$defs"]["question"]["properties"]
    assert question["kind"]["enum"] == list(Question.Kind.values)
    assert question["level"]["enum"] == list(Question.Level.values)
    assert codebook_files.SCHEMA["properties"]["applies_to"]["enum"] == list(Codebook.AppliesTo.values)


def test_a_file_with_many_problems_lists_the_first_fifty_and_counts_the_rest(alpha, people):
    doc = json_doc(questions=[{"key": f"Bad key {i}", "text": "?", "kind": "yes_no"}
                              for i in range(80)])
    with pytest.raises(BadFile) as refused:
        import_file(alpha, people["olive"], json.dumps(doc).encode(), filename="x.json")
    errors = refused.value.errors
    assert len(errors) == 51 and errors[-1].message == "and 30 more problems"


def test_a_round_trip_through_the_api_gives_the_same_bytes(alpha, gamma, people):
    api = APIClient()
    api.force_authenticate(people["olive"])
    url = reverse("api-codebook-file", args=[alpha.slug, alpha.paper_codebook.pk, 1])
    first = api.get(url, {"format": "json"}).content
    response = api.post(reverse("api-codebook-import", args=[gamma.slug]),
                        {"file": SimpleUploadedFile("paper.json", first)}, format="multipart")
    assert response.status_code == 201, response.content
    again = reverse("api-codebook-file", args=[gamma.slug, response.json()["codebook_id"], 1])
    assert api.get(again, {"format": "json"}).content == first


def test_the_import_page_holds_no_code_the_policy_would_refuse(alpha, client_for, people):
    from tests.test_csp import inline_code

    client = client_for(people["olive"])
    page = client.get(reverse("codebook-import", args=[alpha.slug]))
    refused = upload(client, alpha, "dup.yaml", DUPLICATE_YAML)
    for response in (page, refused):
        assert "script-src" in response["Content-Security-Policy"]
        assert inline_code(response.content.decode()) == []
    assert b"duplicate key" in refused.content


def test_the_format_schema_is_served_and_every_export_meets_it(alpha, people):
    import jsonschema

    api = APIClient()
    api.force_authenticate(people["cora"])
    response = api.get(reverse("api-codebook-format"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/schema+json"
    schema = json.loads(response.content)
    assert schema == codebook_files.SCHEMA
    jsonschema.Draft202012Validator.check_schema(schema)
    for preset in PRESETS:
        version = create_codebook(alpha, preset).versions.get()
        jsonschema.validate(json.loads(dump(version, "json")), schema)
        jsonschema.validate(yaml.safe_load(dump(version, "yaml")), schema)
