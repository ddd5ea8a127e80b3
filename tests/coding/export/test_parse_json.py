"""The export reads JSON columns with orjson (coding.export.rows.parse_json): every value
reads as json reads it, integers over 64 bits included, which orjson refuses."""

import json

from hypothesis import given
from hypothesis import strategies as st

from coding.export.rows import parse_json

values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)


@given(values)
def test_parse_json_reads_what_json_reads(value):
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        parsed = parse_json(text)
        assert parsed == json.loads(text)
        assert json.dumps(parsed) == json.dumps(json.loads(text))  # types too (1 vs 1.0)


def test_no_value_is_none():
    assert parse_json(None) is None
