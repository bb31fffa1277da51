"""Background-state recipes: presets, the inline form, bad input, and the hash that names a built state."""

from __future__ import annotations

import pytest

from balgen.chain.background_state import check_free_disk, estimated_disk_bytes
from balgen.model import state_recipe
from balgen.model.state_recipe import PRESETS, SlotDistribution, StateRecipe, parse_recipe
from balgen.plumbing.errors import BadInput


def test_inline_recipe_reads_counts_with_suffixes_and_defaults_a_tenth_contracts() -> None:
    recipe = parse_recipe("accounts=1.5M,slots=20M,seed=7")
    assert (recipe.accounts, recipe.contracts, recipe.slots, recipe.seed) == (1_500_000, 150_000, 20_000_000, 7)
    assert recipe.distribution is SlotDistribution.ZIPF
    assert parse_recipe("accounts=100k").contracts == 0  # no slots: plain accounts only
    uniform = parse_recipe("accounts=1000,contracts=10,slots=100,distribution=uniform,code_min=1,code_max=2")
    assert (uniform.distribution, uniform.code_min, uniform.code_max) == (SlotDistribution.UNIFORM, 1, 2)


@pytest.mark.parametrize("preset", PRESETS.values(), ids=lambda preset: preset.name)
def test_every_preset_says_what_it_imitates_and_reads_back_from_its_inline_form(preset: state_recipe.Preset) -> None:
    assert parse_recipe(preset.name) == preset.recipe
    assert parse_recipe(preset.recipe.inline()) == preset.recipe
    assert parse_recipe(preset.recipe.inline()).hash == preset.recipe.hash
    assert len(preset.imitates) > 40


def test_the_issue_asks_for_a_preset_of_ten_million_accounts_and_a_hundred_million_slots() -> None:
    assert any(p.recipe.accounts >= 10_000_000 and p.recipe.slots >= 100_000_000 for p in PRESETS.values())
    assert any(p.recipe.accounts >= 1_000_000 for p in PRESETS.values())


def test_the_hash_changes_with_every_field_and_with_the_generation_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    base = StateRecipe(accounts=1000, contracts=10, slots=100)
    variants = [
        base.model_copy(update={field: value})
        for field, value in {
            "seed": 1, "accounts": 1001, "contracts": 11, "slots": 101, "distribution": SlotDistribution.UNIFORM,
            "zipf_exponent": 1.1, "code_min": 257, "code_max": 8193, "workload_slots": 1,
        }.items()
    ]  # fmt: skip
    hashes = {base.hash, *(variant.hash for variant in variants)}
    assert len(hashes) == 1 + len(variants)
    monkeypatch.setattr(state_recipe, "GENERATION", state_recipe.GENERATION + 1)
    assert base.hash not in hashes


def test_the_hash_of_a_recipe_is_what_caches_and_fixtures_already_name_it_by() -> None:
    # A built state is found by this hash, and fixtures carry it: it must not move unless
    # the generation rules do (then GENERATION is raised, and every hash moves on purpose).
    # The presets' workload slots are not part of what is built: their builds keep their names.
    small = PRESETS["small"].recipe
    assert small.workload_slots > 0 and small.built_part().hash == "c2d77df446308e06"
    assert small.hash != small.built_part().hash  # the fixtures over it say it has workload slots
    # A recipe without the key has the hash and inline form it had before the key existed.
    plain = parse_recipe("accounts=2000,slots=4000")
    assert plain.hash == plain.built_part().hash == "f4333c92028993f0"
    assert "workload" not in plain.inline()


def test_workload_slots_are_read_inline_under_either_spelling_and_bounded() -> None:
    assert parse_recipe("accounts=2000,slots=4000,workload-slots=256").workload_slots == 256
    assert parse_recipe("accounts=2000,slots=4000,workload_slots=1k").workload_slots == 1000
    with pytest.raises(BadInput, match="workload_slots"):
        parse_recipe("accounts=2000,workload_slots=2M")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("accounts=1x", "accounts=1x: not a number"),
        ("accounts=1.5", "accounts=1.5: not a whole number"),
        ("slots=10", "accounts=N is required"),
        ("accounts=10,contracts=20", "contracts (20) more than accounts (10)"),
        ("accounts=10,contracts=0,slots=5", "slots need contracts"),
        ("accounts=10,bogus=1", "'bogus=1': expected KEY=VALUE"),
        ("accounts=10,accounts=20", "accounts given twice"),
        ("accounts=10,slots=5,distribution=pareto", "distribution"),
        ("accounts=10,slots=5,code_min=9000,code_max=100", "code sizes 9000-100"),
        ("mainnet", "no such preset"),
    ],
)
def test_a_bad_recipe_is_one_line_naming_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(BadInput) as raised:
        parse_recipe(text)
    message = str(raised.value)
    assert says in message and "\n" not in message


def test_a_recipe_too_large_for_the_disk_is_refused_naming_the_space_it_needs(tmp_path) -> None:
    huge = parse_recipe("accounts=4000M,slots=1000G")
    with pytest.raises(BadInput) as raised:
        check_free_disk(huge, tmp_path / "cache" / "states", "huge")
    message = str(raised.value)
    assert f"needs about {estimated_disk_bytes(huge) / 1e9:.1f} GB" in message and str(tmp_path) in message
    assert not (tmp_path / "cache").exists()
    check_free_disk(parse_recipe("accounts=1000"), tmp_path, "tiny")  # fits: no error
