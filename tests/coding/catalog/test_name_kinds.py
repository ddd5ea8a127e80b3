"""The catalog's three kinds of name (issue 40, findings 1 and 2): a method switched on by
a value (`importance_sampling: seq`), a name inside a longer identifier
(`--enable_vllm_is_correction`), and the whole-identifier option name as before. Every
history is built here with git itself."""

import pytest
from django.core.exceptions import ValidationError

from coding.catalog import edit as catalog_edit
from coding.catalog import landings
from coding.catalog import names as landings_names
from coding.models import Landing
from tests.coding.catalog.test_landings_history import History, hit, method


@pytest.fixture
def repo(tmp_path):
    return History(tmp_path / "framework")


def test_a_method_named_by_a_value_lands_where_the_key_first_takes_that_value(
        repo, toyrl, alpha, people, client_for):
    gspo = method(alpha, toyrl, "GSPO", "importance_sampling=seq")
    repo.at("Token-level IS", "2025-06-01T12:00:00+00:00", {
        "configs/ppo.yaml": "pipeline:\n  importance_sampling: token\n",
        "roll/loss.py": 'def ratio(cfg):\n    if cfg.importance_sampling == "token":\n'
                        '        return 1\n'})
    repo.at("Talk about it", "2025-06-10T12:00:00+00:00", {
        "roll/notes.py": "# importance_sampling: seq one day\nx = 1\n"})
    landed = repo.at("Sequence-level IS (#77)", "2025-07-20T12:00:00+00:00", {
        "configs/gspo.yaml": "pipeline:\n  importance_sampling: seq\n"})
    landings.scan_framework(toyrl, repo.path)

    landing = Landing.objects.get(method=gspo)
    assert (landing.commit, landing.pull_request) == (landed, 77)
    found = hit(toyrl, "importance_sampling=seq")
    assert (found.variant, found.kind, found.path, found.line) == (
        "importance_sampling: seq", "config", "configs/gspo.yaml", "importance_sampling: seq")
    assert not found.renamed  # the key existed with another value: a new value is no rename

    page = client_for(people["olive"]).get(
        f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "option with a value" in page and "importance_sampling: seq" in page


def test_a_dotted_value_name_needs_its_parent_key(repo, toyrl, alpha):
    dr = method(alpha, toyrl, "Dr. GRPO", "adv_norm.std_level=none")
    repo.at("Another std_level", "2025-04-01T12:00:00+00:00", {
        "cfg/reward.yaml": "reward:\n  std_level: none\n",
        "cfg/base.yaml": "adv_norm:\n  std_level: batch\n  mean_level: batch\n"})
    landed = repo.at("No std normalisation", "2025-05-02T12:00:00+00:00", {
        "cfg/dr.yaml": "adv_norm:\n  mean_level: batch\n  std_level: none\n"})
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=dr).commit == landed
    assert hit(toyrl, "adv_norm.std_level=none").line_number == 3


def test_a_part_of_an_identifier_is_found_inside_a_longer_flag_and_an_option_name_is_not(
        repo, toyrl, alpha, people, client_for):
    part = method(alpha, toyrl, "IS correction", "*is_correction")
    whole = method(alpha, toyrl, "IS correction, whole name", "is_correction")
    tis = method(alpha, toyrl, "TIS", "tis")
    repo.at("Losses", "2025-03-01T12:00:00+00:00", {
        "loss.py": "negative_tis_loss = 0\nthis_correction = 1\nis_correction_v2 = 2\n"})
    landed = repo.at("vLLM IS correction (#12)", "2025-04-01T12:00:00+00:00", {
        "train.sh": "python train.py --enable_vllm_is_correction\n"})
    landings.scan_framework(toyrl, repo.path)

    assert Landing.objects.get(method=part).commit == landed
    found = hit(toyrl, "*is_correction")
    assert found.variant == "--enable_vllm_is_correction"
    assert not Landing.objects.filter(method__in=[whole, tis]).exists()
    page = client_for(people["olive"]).get(
        f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/").content.decode()
    assert "part of an identifier" in page


def test_each_kind_is_read_in_every_file_format():
    names = landings_names.Names(["importance_sampling=seq", "*vllm_is", "use_tis"])

    def found(path, text):
        return sorted((h.line, h.text, h.name, h.kind)
                      for h in landings_names.hits(path, text, names))

    assert found("a.py", 'run(importance_sampling="seq")  # importance_sampling=seq\n'
                         'run(importance_sampling="token")\nmode = "seq"\n') == [
        (1, 'importance_sampling="seq"', "importance_sampling=seq", "code"),
        (1, "importance_sampling=seq", "importance_sampling=seq", "comment")]
    assert found("c.json", '{"importance_sampling": "seq", "x": "vllm_is_on"}') == [
        (1, 'importance_sampling": "seq"', "importance_sampling=seq", "config")]
    assert found("c.toml", 'importance_sampling = "seq"\nuse_vllm_is = true\n') == [
        (1, 'importance_sampling = "seq"', "importance_sampling=seq", "config"),
        (2, "use_vllm_is", "*vllm_is", "config")]
    assert found("r.sh", "train --importance-sampling seq --use-tis\n"
                         "train --importance_sampling=sequence\n") == [
        (1, "--importance-sampling seq", "importance_sampling=seq", "code"),
        (1, "--use-tis", "use_tis", "code")]
    # A value that only starts like the one named is another value.
    assert found("c.yaml", "importance_sampling: seq_v2\n") == []


@pytest.mark.parametrize("written, stored", [
    ("importance_sampling = \"seq\"", "importance_sampling=seq"),
    ("adv_norm.std_level=none", "adv_norm.std_level=none"),
    ("*is_correction", "*is_correction"),
    ("--use-tis", "--use-tis"),
])
def test_a_name_of_each_kind_is_stored_in_one_spelling(written, stored):
    assert catalog_edit.check_option_name(written) == stored


@pytest.mark.parametrize("written, says", [
    ("importance_sampling=", "key=value"),
    ("a=b=c", "key=value"),
    ("*algorithm.is_correction", "no dots"),
    ("is correction", "letters, digits"),
    ("is*correction", "letters, digits"),
])
def test_a_malformed_name_is_refused_with_how_to_write_it(written, says):
    with pytest.raises(ValueError, match=says):
        catalog_edit.check_option_name(written)


def test_the_same_value_name_written_twice_is_one_name(toyrl, alpha, people):
    gspo = method(alpha, toyrl, "GSPO")
    catalog_edit.add_option_name(gspo, toyrl, "importance_sampling=seq", people["olive"])
    with pytest.raises(ValidationError, match="already has"):
        catalog_edit.add_option_name(gspo, toyrl, "importance_sampling = 'seq'", people["olive"])
