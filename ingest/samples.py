"""One short record of each file format, invented, as the import page shows it: what a
file the importer reads looks like. tests/ingest/test_samples.py imports each one, so a
sample is always a file the importer takes."""

from django.utils.translation import gettext_lazy

SNAPSHOT = """\
{"id": "2599.01234", "submitter": "Ann Example", "authors": "Ann Example and Bo Sample", \
"title": "An Invented Clipping Rule for Policy Updates", "comments": "12 pages", \
"journal-ref": null, "doi": null, "report-no": null, "categories": "cs.LG cs.AI", \
"license": null, "abstract": "  We invent a clipping rule and test it on toy tasks.\\n", \
"versions": [{"version": "v1", "created": "Mon, 3 Mar 2025 10:00:00 GMT"}], \
"update_date": "2025-03-04", "authors_parsed": [["Example", "Ann", ""], ["Sample", "Bo", ""]]}"""

ATOM = """\
<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <entry>
    <id>http://arxiv.org/abs/2599.01234v1</id>
    <title>An Invented Clipping Rule for Policy Updates</title>
    <published>2025-03-03T10:00:00Z</published>
    <updated>2025-03-03T10:00:00Z</updated>
    <summary>We invent a clipping rule and test it on toy tasks.</summary>
    <author><name>Ann Example</name></author>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <arxiv:primary_category term="cs.LG"/>
  </entry>
</feed>"""

OAI = """\
<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
  <responseDate>2025-03-05T00:00:00Z</responseDate>
  <request verb="ListRecords" metadataPrefix="arXiv">http://export.arxiv.org/oai2</request>
  <ListRecords>
    <record>
      <header><identifier>oai:arXiv.org:2599.01234</identifier>
        <datestamp>2025-03-04</datestamp><setSpec>cs</setSpec></header>
      <metadata>
        <arXiv xmlns="http://arxiv.org/OAI/arXiv/">
          <id>2599.01234</id><created>2025-03-03</created>
          <authors><author><keyname>Example</keyname><forenames>Ann</forenames></author></authors>
          <title>An Invented Clipping Rule for Policy Updates</title>
          <categories>cs.LG cs.AI</categories>
          <abstract>We invent a clipping rule and test it on toy tasks.</abstract>
        </arXiv>
      </metadata>
    </record>
  </ListRecords>
</OAI-PMH>"""

GITHUB = """\
{"repository": "example-lab/toy-rl", "issue": {"id": 70007, "number": 7, "title": "Add the invented \
clipping rule", "state": "open", "user": {"login": "ann-example", "type": "User"}, \
"author_association": "NONE", "created_at": "2025-03-10T09:00:00Z", \
"updated_at": "2025-03-11T12:00:00Z", "closed_at": null, "labels": [], \
"html_url": "https://github.com/example-lab/toy-rl/issues/7", "body": "Could the \
trainer offer it?"}, "pull": null, "comments": [{"id": 1, "user": {"login": "bo-sample", \
"type": "User"}, "author_association": "MEMBER", "created_at": "2025-03-11T12:00:00Z", \
"body": "Sounds useful."}], "reviews": [], "review_comments": [], "timeline": []}"""

CSV = """\
id,title,authors,abstract,date,link
paper-001,An Invented Clipping Rule,"Ann Example; Bo Sample",We invent a rule.,2025-03-03,https://example.org/paper-001"""

JSONL = """\
{"id": "paper-001", "title": "An Invented Clipping Rule", "authors": "Ann Example; Bo Sample", \
"date": "2025-03-03"}"""

# Each file format's sample, and what the page says under it.
RIS = """\
TY  - JOUR
TI  - An Invented Clipping Rule for Policy Updates
AB  - We invent a clipping rule and test it on toy tasks.
AU  - Example, Ann
AU  - Sample, Bo
PY  - 2025
DO  - 10.9999/invented.1234
ER  - """

ASREVIEW_CSV = """\
title,abstract,authors,year,doi,label_included
An Invented Clipping Rule for Policy Updates,We invent a clipping rule.,Ann Example; Bo \
Sample,2025,10.9999/invented.1234,1"""

SAMPLES = {"arxiv_snapshot_file": SNAPSHOT, "arxiv_atom_file": ATOM, "arxiv_oai_file": OAI,
           "github_file": GITHUB, "csv_file": CSV, "jsonl_file": JSONL, "ris_file": RIS,
           "asreview_csv_file": ASREVIEW_CSV}
NOTES = {
    "arxiv_snapshot_file": gettext_lazy("One JSON object per line, as in arXiv's metadata "
                                        "snapshot; a .gz of the file is read as it is."),
    "arxiv_atom_file": gettext_lazy("A response of the arXiv API saved as it came."),
    "arxiv_oai_file": gettext_lazy("A ListRecords or GetRecord response saved as it came "
                                   "(metadata format arXiv or arXivRaw)."),
    "github_file": gettext_lazy("A thread per line, or a JSON list of them; GitHub's own REST "
                                "answers and `gh api` output are read too."),
    "csv_file": gettext_lazy("Any columns: map them below (key = id, title = title, and so "
                             "on)."),
    "jsonl_file": gettext_lazy("One object per line, any fields: map them below (key = id, "
                               "title = title, and so on)."),
    "ris_file": gettext_lazy("Entries from TY to ER, as Zotero, EndNote or Mendeley export "
                             "them; a record's DOI, else its title and year, is its key."),
    "asreview_csv_file": gettext_lazy("Columns title and abstract, optionally doi, authors "
                                      "(separated by ;), year, keywords; a label_included "
                                      "column is not stored with the records: import it as "
                                      "prior labels (manage.py screening --prior-labels)."),
}
