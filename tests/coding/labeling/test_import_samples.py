"""The import page shows, for each file format, what a file of it looks like (issue 39,
finding 7): the sample the importer is tested on, shown only with its format."""

import html

import pytest

from ingest.samples import SAMPLES

pytestmark = pytest.mark.django_db


def test_the_import_page_shows_a_sample_per_file_format(client_for, alpha, people):
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/import/").content.decode()
    for fmt, text in SAMPLES.items():
        assert f'class="format-sample" data-formats="{fmt}"' in page
        assert html.escape(text.splitlines()[0]) in page
