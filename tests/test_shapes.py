"""Shape and budget parsing: what is accepted and what each bad input is told."""
import pytest

from depthwidth.core.budgets import parse_flops, parse_params, parse_tokens
from depthwidth.core.errors import InputError
from depthwidth.arch.catalog import resolve_shape
from depthwidth.theory.shapes import default_heads, params, parse_shape


@pytest.mark.parametrize("text, expected", [
    ("12x768", (12, 768, 12)), ("6x1086", (6, 1086, 17)), ("12X768X16", (12, 768, 16)), (" 24x1024x16 ", (24, 1024, 16)),
    ("1x2", (1, 2, 1)), ("10000x1000000000000", (10**4, 10**12, 15625000000)),
])
def test_parse_shape(text, expected):
    s = parse_shape(text)
    assert (s.depth, s.width, s.heads) == expected


def test_heads_override_and_default():
    assert parse_shape("12x768x12", heads=8).heads == 8
    assert default_heads(1086) == 17 and default_heads(32) == 1 and default_heads(2) == 1


@pytest.mark.parametrize("text", ["0x768", "12x0", "12x768x0", "12x768x768", "12x768x1000", "-1x768", "12.5x768",
                                  "12x", "x768", "12x768x12x3", "１２x768", "", "12 x 768", "9" * 400 + "x768"])
def test_bad_shapes_say_what_is_accepted(text):
    with pytest.raises(InputError) as err:
        parse_shape(text)
    assert str(err.value).startswith("bad shape ") and ("expected" in str(err.value) or "must" in str(err.value))


def test_resolve_shape_reads_model_names():
    assert str(resolve_shape("BERT-base")) == "12x768x12"
    with pytest.raises(InputError, match="bert-base"):
        resolve_shape("bert-bas")


def test_params_convention():
    assert params(12, 768) == 84934656


@pytest.mark.parametrize("text, value", [("1e9", 10**9), ("1_000_000_000", 10**9), ("350M", 350 * 10**6),
                                         ("1.3B", 13 * 10**8), ("1T", 10**12), ("2.5k", 2500), ("1e30", 10**30)])
def test_budgets(text, value):
    assert parse_params(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "1e400", "abc", "", "1e9e9", "1e", "99", "1,000"])
def test_bad_budgets(text):
    with pytest.raises(InputError) as err:
        parse_params(text)
    assert str(err.value).startswith("bad budget ") and repr(text) in str(err.value)


def test_flops_and_tokens():
    assert parse_tokens("2e10") == 10**9
    assert parse_flops("1.2e20") == 10**9


@pytest.mark.parametrize("value, expected", [(768, 768), (768.0, 768), (3, 3)])
def test_whole_accepts_integral_values(value, expected):
    from depthwidth.theory.shapes import whole

    assert whole(value, "width") == expected and type(whole(value, "width")) is int


@pytest.mark.parametrize("value", [768.5, True, "768", None, float("nan")])
def test_whole_refuses_the_rest_without_truncating(value):
    from depthwidth.core.errors import InputError
    from depthwidth.theory.shapes import whole

    with pytest.raises(InputError, match="expected a whole number"):
        whole(value, "width")


def test_whole_range():
    from depthwidth.core.errors import InputError
    from depthwidth.theory.shapes import whole

    assert whole(2, "width", lowest=2, highest=3) == 2
    with pytest.raises(InputError, match="from 2 to 3"):
        whole(4, "width", lowest=2, highest=3)
