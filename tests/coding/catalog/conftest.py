import pytest

from coding.models import Framework


@pytest.fixture
def toyrl(alpha):
    """A framework of the alpha study whose history the tests build."""
    return Framework.objects.create(study=alpha, name="toyrl", repository="example/toyrl")
