"""The inclusion page reads in its reader's language (issue 39, finding 6): its
explanations are kept in English in the analysis (the API's, the command's and the
export's words) and put in Chinese on the page; no internal module is named."""

import pytest

from coding.accounts.languages import remember_language
from coding.inclusion.analysis import NOT_AVAILABLE

pytestmark = pytest.mark.django_db


def test_the_inclusion_page_explains_in_chinese_and_the_api_keeps_english(client_for, alpha,
                                                                          people):
    remember_language(people["olive"], "zh-hans")
    client = client_for(people["olive"])
    page = client.get(f"/studies/{alpha.slug}/inclusion/").content.decode()
    assert "本研究没有任何论文是被追踪方法的来源" in page
    assert "No paper of this study" not in page and "coding.catalog" not in page
    assert "方法追踪器" in page
    api = client.get(f"/api/studies/{alpha.slug}/inclusion/").json()
    assert api["reason"] == NOT_AVAILABLE and "coding.catalog" not in api["source"]
