"""Both languages stay complete (issue 20): every word a person reads in a template is
marked for translation, every marked string has its Simplified Chinese translation and the
committed .mo is compiled from the committed .po; the owner's pages and the invitation mail
read in Chinese."""

import re
import shutil
from contextlib import chdir
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.template.base import Lexer, TokenType
from django.test import override_settings

from coding.languages import remember_language

ROOT = Path(settings.BASE_DIR)
CATALOG = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
TEMPLATE_DIRS = [ROOT / "workbench" / "templates", ROOT / "coding" / "templates"]

# Visible words that are the same in every language.
SAME_IN_EVERY_LANGUAGE = {
    "API",  # the menu's link to the API documentation: a name, as in the Chinese UI
    "JSON", "YAML", "REFI-QDA",  # file formats of a codebook's downloads
    "ORCID", "ORCID iD",  # an author's identifier, as ORCID names it in every language
    "Swagger",  # drf-spectacular's page title
    "v",  # a version's prefix, as in "v3"
}
# Templates other helpers are still marking this session (issue 20); each is checked as
# soon as it leaves this list, and the list may only shrink.
NOT_YET_MARKED = {f"coding/templates/coding/{name}.html" for name in [
]}

# Attributes whose value a person reads (or hears, from a screen reader).
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}
# Elements whose text is not prose: identifiers, code, scripts.
NOT_PROSE = {"code", "kbd", "samp", "script", "style"}
HOLE = "\x00"  # where a template tag or variable stood
LETTER = re.compile(r"[^\W\d_]")
QUOTED_DEFAULT = re.compile(r"\|default(?:_if_none)?:\"([^\"]*)\"")


def templates():
    for folder in TEMPLATE_DIRS:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".html", ".txt"):
                yield path


def html_without_translations(source):
    """The template's text with translate blocks, comments and every tag or variable taken
    out (a HOLE instead), so that only literal text is left; plus the literal words given
    to `default` filters, which are shown as they are."""
    parts, literals, skip_until = [], [], None
    for token in Lexer(source).tokenize():
        content = token.contents.split()[0] if token.token_type == TokenType.BLOCK else ""
        if skip_until:
            if content == skip_until:
                skip_until = None
            continue
        if token.token_type == TokenType.TEXT:
            parts.append(token.contents)
            continue
        if content in ("blocktranslate", "blocktrans", "comment"):
            skip_until = "end" + content
        if token.token_type == TokenType.VAR:
            literals += QUOTED_DEFAULT.findall(token.contents)
        parts.append(HOLE)
    return "".join(parts), literals


class VisibleText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.inside = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "hr", "img", "input", "link", "meta", "source", "wbr"):
            self.inside.append(tag)
        self.found += [value for name, value in attrs if name in READ_ATTRIBUTES and value]
        if tag == "input" and dict(attrs).get("type") in ("submit", "button"):
            self.found.append(dict(attrs).get("value") or "")

    def handle_endtag(self, tag):
        if tag in self.inside:
            while self.inside.pop() != tag:
                pass

    def handle_data(self, data):
        if not NOT_PROSE & set(self.inside):
            self.found.append(data)


def unmarked_words(source):
    html, literals = html_without_translations(source)
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    texts = [" ".join(text.replace(HOLE, " ").split()) for text in parser.found + literals]
    return [text for text in texts
            if LETTER.search(text) and text.strip(" ().,:;·—–/#") not in SAME_IN_EVERY_LANGUAGE]


def test_the_scan_finds_unmarked_text_and_accepts_marked_text():
    assert unmarked_words('<p>Save <b>{{ n }}</b> items</p>') == ["Save", "items"]
    assert unmarked_words('<button aria-label="Remove {{ u }}">{% translate "x" %}</button>') \
        == ["Remove"]
    assert unmarked_words('{{ who|default:"a command" }}') == ["a command"]
    assert unmarked_words('{% load i18n %}<p>{% translate "Save" %} {{ n }} · 3</p>'
                          '{% blocktranslate %}Saved {{ n }}{% endblocktranslate %}'
                          '{% comment %}A note{% endcomment %}<code>wide</code>') == []


def name(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", [p for p in templates() if name(p) not in NOT_YET_MARKED],
                         ids=name)
def test_every_visible_template_string_is_marked_for_translation(path):
    found = unmarked_words(path.read_text(encoding="utf-8"))
    assert found == [], f"{name(path)}: text outside {{% translate %}} / {{% blocktranslate %}}"


def test_the_list_of_templates_not_yet_marked_only_names_unmarked_ones():
    """A template leaves NOT_YET_MARKED once it is marked, so that it is checked."""
    marked = [n for n in NOT_YET_MARKED if not unmarked_words((ROOT / n).read_text())]
    assert marked == [], "marked now: take them off NOT_YET_MARKED"


def in_chinese(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return client


@pytest.mark.parametrize("path, words", [
    ("/", "您的研究"), ("/studies/new/", "创建研究"), ("/studies/{slug}/", "管理成员和邀请"),
    ("/studies/{slug}/settings/", "保存设置"), ("/studies/{slug}/members/", "生成邀请链接"),
    ("/studies/{slug}/import/", "筛选流程"), ("/studies/{slug}/export/", "备份研究"),
    ("/jobs/", "您的任务"), ("/account/tokens/", "创建令牌"),
])
def test_the_owners_pages_read_in_chinese(alpha, people, client_for, path, words):
    people["olive"].is_staff = True  # may create studies
    people["olive"].save()
    page = in_chinese(client_for(people["olive"])).get(path.format(slug=alpha.slug))
    html = page.content.decode()
    assert page.status_code == 200 and words in html
    assert "Your studies" not in html and "Cancel" not in html


def test_a_page_in_chinese_names_roles_in_chinese(alpha, people, client_for):
    html = in_chinese(client_for(people["olive"])).get(f"/studies/{alpha.slug}/members/")
    html = html.content.decode()
    assert "裁定人" in html and "移除 cora 的编码员角色" in html
    assert ">Adjudicator<" not in html


@pytest.mark.parametrize("language, subject, words", [
    ("en", "Invitation to Alpha study", "as coder on the coding workbench"),
    ("zh-hans", "加入 Alpha study 的邀请", "您受邀以编码员身份参加"),
])
def test_an_invitation_is_mailed_in_the_language_of_whoever_makes_it(
        alpha, people, client_for, settings, language, subject, words):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    olive = client_for(people["olive"])
    olive.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    made = olive.post(f"/studies/{alpha.slug}/invites/",
                      {"role": "coder", "days": 3, "email": "nadia@example.org"})
    assert made.status_code == 201
    (sent,) = mail.outbox
    assert sent.subject == subject and words in sent.body
    assert "/invite/" in sent.body and "&quot;" not in sent.body  # plain text, not escaped


def test_an_invitation_to_an_account_is_mailed_in_the_language_it_chose(alpha, people,
                                                                       client_for, settings):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    otto = people["otto"]
    otto.email = "otto@example.org"
    otto.save()
    remember_language(otto, "zh-hans")
    olive = client_for(people["olive"])  # reading in English
    olive.post(f"/studies/{alpha.slug}/invites/",
               {"role": "viewer", "days": 3, "email": "Otto@example.org"})
    (sent,) = mail.outbox
    assert sent.subject == "加入 Alpha study 的邀请" and "查看者" in sent.body


# --- the catalog ---------------------------------------------------------------------

NOT_SCANNED = {"locale", ".venv", "var", "tests", "benchmarks", ".git"}


@pytest.fixture(scope="module")
def catalog_from_the_code(tmp_path_factory):
    """makemessages (as `make messages` runs it) over the project's sources, into a copy of
    the committed catalog in a temporary folder: every string the code marks today, with
    the committed translations merged in (a new or changed string comes out untranslated
    or fuzzy). The sources are linked into that folder so the committed catalog is never
    written."""
    folder = tmp_path_factory.mktemp("messages")
    shutil.copytree(ROOT / "locale", folder / "locale")
    for path in ROOT.iterdir():
        if path.name not in NOT_SCANNED:
            (folder / path.name).symlink_to(path)
    with override_settings(LOCALE_PATHS=[folder / "locale"]), chdir(folder):
        call_command("makemessages", locale=["zh_Hans"], no_location=True, symlinks=True,
                     verbosity=0, ignore_patterns=["node_modules"])
    return polib.pofile(str(folder / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"))


def test_every_marked_string_has_a_chinese_translation(catalog_from_the_code):
    missing = [entry.msgid for entry in catalog_from_the_code
               if not entry.obsolete and not entry.translated()]
    assert missing == [], "marked but not translated in locale/zh_Hans: run `make messages`"


def test_the_compiled_catalog_is_the_committed_one():
    """django.mo holds exactly the translations of django.po (compilemessages was run
    after the last change; a .mo older than its .po differs from it)."""
    def pairs(catalog):
        return {(entry.msgctxt, entry.msgid): entry.msgstr or entry.msgstr_plural.get(0)
                for entry in catalog if entry.msgid and not entry.obsolete
                and (entry.msgstr or any(entry.msgstr_plural.values()))
                and "fuzzy" not in entry.flags}

    assert pairs(polib.mofile(str(CATALOG / "django.mo"))) == \
        pairs(polib.pofile(str(CATALOG / "django.po")))
