import pytest

from tests.coding.inclusion.studies import make_tracked


@pytest.fixture
def tracked(people):
    """A study whose tracker includes 7 of its 15 general RL-method papers."""
    return make_tracked(people)
