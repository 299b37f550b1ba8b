from __future__ import annotations

import pytest

from replicate.errors import UsageError
from replicate.parsing import Parser, parser
from replicate.registry import Registry, VersionedName


def test_versioned_name_round_trips():
    n = VersionedName.parse("umbrela-strict@1")
    assert (n.family, n.variant, n.version) == ("umbrela", "strict", 1)
    assert str(n) == "umbrela-strict@1"
    assert VersionedName.parse("ifbench@2").variant is None
    assert str(VersionedName.parse("final-answer-line@1")) == "final-answer-line@1"


def test_names_with_and_without_a_variant_sort_together():
    # a dataclass ordering compared variant None with a str and raised TypeError in names()
    names = ["umbrela-strict@1", "umbrela@2", "umbrela-checked@1", "umbrela@1", "ifbench@1"]
    assert [str(n) for n in sorted(map(VersionedName.parse, names))] == [
        "ifbench@1", "umbrela@1", "umbrela@2", "umbrela-checked@1", "umbrela-strict@1",
    ]
    reg = _reg()
    reg.register(Parser("toy@1", "a family's plain name beside its variants", lambda t: None))
    assert reg.names() == ["toy@1", "toy-first@1", "toy-first@2"]
    assert reg.names(family="toy") == ["toy@1", "toy-first@1", "toy-first@2"]


@pytest.mark.parametrize("bad", ["umbrela", "umbrela@0", "Umbrela-x@1", "x@1.5", "@1", "a b@1"])
def test_versioned_name_rejects(bad):
    with pytest.raises(ValueError, match="invalid plugin name"):
        VersionedName.parse(bad)


def _reg() -> Registry:
    # A group nobody installs: the registry starts empty, then we register.
    reg = Registry("replicate.tests.nothing-installed", "parser")

    @parser("toy-first@1", "first digit")
    def first(text: str) -> int | None:
        return next((int(c) for c in text if c.isdigit()), None)

    @parser("toy-first@2", "first digit 0-3")
    def first2(text: str) -> int | None:
        return next((int(c) for c in text if c in "0123"), None)

    reg.register(first)
    reg.register(first2)
    return reg


def test_registry_lookup_and_errors():
    reg = _reg()
    assert reg.names() == ["toy-first@1", "toy-first@2"]
    assert reg.get("toy-first@2")("9 then 2") == 2
    with pytest.raises(UsageError, match=r"name its version, one of toy-first@1, toy-first@2"):
        reg.get("toy-first")
    with pytest.raises(UsageError, match=r"did you mean toy-first@1"):
        reg.get("toy-frist@1")
    # every bad name is reported at once
    with pytest.raises(UsageError) as err:
        reg.get_many(["nope@1", "toy-first@1", "other@3"])
    assert "'nope@1'" in str(err.value) and "'other@3'" in str(err.value)


def test_registry_refuses_duplicates_and_bad_objects():
    reg = _reg()
    with pytest.raises(UsageError, match="registered twice"):
        reg.register(Parser("toy-first@1", "again", lambda t: None))

    class NotAPlugin:
        name = 3

    with pytest.raises(UsageError, match="is not a parser"):
        reg.register(NotAPlugin())  # type: ignore[arg-type]


def test_parse_many_marks_unparsed():
    reg = _reg()
    arr = reg.get("toy-first@2").parse_many(["a2", "none", None, "a2", "3"])
    assert arr.dtype.name == "int8"
    assert arr.tolist() == [2, -1, -1, 2, 3]

