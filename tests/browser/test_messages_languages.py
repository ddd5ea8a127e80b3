"""A message the code writes (not a template) reads in the reader's language in Chromium:
a codebook file with a mistake, uploaded with Chinese chosen, is refused with the Chinese
sentence beside the place it names; a full-page screenshot is kept
(a11y-messages-codebook-import-<language>.png) and axe finds nothing serious."""

import pytest
import yaml

from coding.demo.study import DEMO_SLUG
from coding.studies import presets

from .test_accessibility import LANGUAGES, demo, open_as, serious_violations  # noqa: F401

pytestmark = pytest.mark.browser

EXPECTED = {
    "en": "a value is letters, digits, _ . - (at most 100), starting with a letter or digit",
    "zh-hans": "取值由字母、数字和 _ . - 组成，以字母或数字开头（最多 100 个字符）",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_codebook_file_error_reads_in_the_readers_language(demo, open_as,  # noqa: F811
                                                            live_server, tmp_path, language):
    doc = {"format": "workbench-codebook", "format_version": 1,
           **{k: v for k, v in presets.PAPER_CODEBOOK.items() if k != "translations"}}
    doc["questions"] = [dict(q) for q in doc["questions"]]
    doc["questions"][2]["options"] = [{**doc["questions"][2]["options"][0],
                                       "value": "not a value!"},
                                      *doc["questions"][2]["options"][1:]]
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "not a value!" in row)
    bad = tmp_path / "paper-codebook.yaml"
    bad.write_text(text, encoding="utf-8")

    page = open_as("owner", language)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/codebooks/import/")
    page.locator("input[type=file][name=file]").set_input_files(str(bad))
    page.locator("select[name=target]").select_option("new")
    page.locator("input[name=name]").fill("Paper codebook, imported")
    page.locator("form.import-form button.primary").click()
    problem = page.locator("ul.problems li").first
    problem.wait_for()
    words = problem.inner_text()
    assert "questions[2].options[0].value" in words
    assert EXPECTED[language] in words
    assert (f"（第 {line} 行）" if language == "zh-hans" else f"(line {line})") in words
    assert serious_violations(page, f"messages-codebook-import-{language}") == []
