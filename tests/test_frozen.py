"""``@frozen`` behaves as ``@dataclass(frozen=True)``: each case is checked against a twin class made
by the standard library's own decorator (the reference), not against expected values of our own."""
import copy
import dataclasses
import pickle
from dataclasses import FrozenInstanceError, field

import pytest

from depthwidth.core.frozen import frozen, frozen_class


def twins(body: dict, annotations: dict, post_init=None):
    """The same class body decorated by ``frozen`` and by ``dataclass(frozen=True)``."""
    def make(decorate):
        namespace = {"__annotations__": dict(annotations), **body}
        if post_init:
            namespace["__post_init__"] = post_init
        return decorate(type("Record", (), namespace))
    return make(frozen), make(dataclasses.dataclass(frozen=True))


FIELDS = {"depth": int, "width": int, "heads": "int | None", "tags": tuple, "notes": list}
BODY = {"heads": None, "tags": (), "notes": field(default_factory=list)}
OURS, REFERENCE = twins(BODY, FIELDS)

CALLS = [((12, 768), {}), ((12,), {"width": 768, "heads": 12}), ((), {"depth": 2, "width": 64, "notes": [1]}),
         ((1, 2, 3, ("a",), [4]), {})]


@pytest.mark.parametrize("args,kwargs", CALLS)
def test_values_defaults_and_factories_as_the_standard_library_sets_them(args, kwargs):
    ours, reference = OURS(*args, **kwargs), REFERENCE(*args, **kwargs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(reference)
    assert dataclasses.asdict(ours) == dataclasses.asdict(reference)
    assert repr(ours) == repr(reference)


def test_a_default_factory_gives_each_instance_its_own_value():
    a, b = OURS(1, 2), OURS(1, 2)
    assert a.notes == [] and a.notes is not b.notes


@pytest.mark.parametrize("args,kwargs", [((1, 2, 3, (), [], 6), {}), ((1,), {"depth": 1, "width": 2}),
                                         ((1, 2), {"height": 3}), ((), {"width": 2}), ((), {}),
                                         ((), {"heads": 1})])
def test_bad_calls_raise_type_error_as_the_standard_library_does(args, kwargs):
    with pytest.raises(TypeError) as reference:
        REFERENCE(*args, **kwargs)
    with pytest.raises(TypeError) as ours:
        OURS(*args, **kwargs)
    assert str(ours.value) == str(reference.value)  # word for word


def test_three_missing_arguments_are_listed_as_the_standard_library_lists_them():
    ours, reference = twins({}, {"a": int, "b": int, "c": int})
    with pytest.raises(TypeError) as expected:
        reference()
    with pytest.raises(TypeError) as got:
        ours()
    assert str(got.value) == str(expected.value)


def test_equality_and_hash_follow_the_fields_and_the_class():
    assert OURS(1, 2) == OURS(1, 2) and OURS(1, 2) != OURS(1, 3)
    assert hash(OURS(1, 2, 3, ("x",), None)) == hash(REFERENCE(1, 2, 3, ("x",), None)) == hash((1, 2, 3, ("x",), None))
    assert OURS(1, 2) != REFERENCE(1, 2)  # another class is never equal, as dataclasses decide
    assert len({OURS(1, 2, 3, (), None), OURS(1, 2, 3, (), None)}) == 1


def test_fields_left_out_of_compare_hash_and_repr():
    spec = {"a": int, "b": dict, "c": int}
    body = {"b": field(hash=False, default=None), "c": field(compare=False, repr=False, default=0)}
    ours, reference = twins(body, spec)
    assert hash(ours(1, {"k": 1})) == hash(reference(1, {"k": 1}))  # the dict is not hashed
    assert ours(1, None, 5) == ours(1, None, 6) and reference(1, None, 5) == reference(1, None, 6)
    assert repr(ours(1, None, 5)) == repr(reference(1, None, 5)) == "Record(a=1, b=None)"


@pytest.mark.parametrize("action", [lambda r: setattr(r, "depth", 3), lambda r: delattr(r, "depth"),
                                    lambda r: setattr(r, "other", 1)])
def test_assigning_or_deleting_raises_frozen_instance_error(action):
    for cls in (OURS, REFERENCE):
        with pytest.raises(FrozenInstanceError):
            action(cls(1, 2))


def test_post_init_runs_after_the_fields_are_set():
    def post_init(self):
        object.__setattr__(self, "area", self.depth * self.width)
    ours, reference = twins({}, {"depth": int, "width": int}, post_init)
    assert ours(3, 4).area == reference(3, 4).area == 12


@frozen
class Pickled:  # pickle finds a class by its module and name
    depth: int
    notes: tuple = ()


def test_replace_copy_and_pickle():
    record = OURS(1, 2, 3, ("t",), [5])
    assert dataclasses.replace(record, width=9) == OURS(1, 9, 3, ("t",), [5])
    assert copy.copy(record) == record and copy.deepcopy(record) == record
    assert pickle.loads(pickle.dumps(Pickled(3, ("a",)))) == Pickled(3, ("a",))
    assert dataclasses.is_dataclass(record) and [f.name for f in dataclasses.fields(OURS)] == list(FIELDS)


def test_subclasses_by_frozen_by_the_standard_library_and_by_make_dataclass():
    @frozen
    class Base:
        depth: int
        width: int

    @frozen
    class Child(Base):
        heads: int = 1

    @dataclasses.dataclass(frozen=True)
    class StandardChild(Base):
        heads: int = 1

    Made = dataclasses.make_dataclass("Made", [("heads", int, 1)], bases=(Base,), frozen=True)
    for cls in (Child, StandardChild, Made, frozen_class("Built", [("heads", int, field(default=1))], bases=(Base,))):
        record = cls(2, 64)
        assert (record.depth, record.width, record.heads) == (2, 64, 1)
        assert [f.name for f in dataclasses.fields(cls)] == ["depth", "width", "heads"]
        with pytest.raises(FrozenInstanceError):
            record.depth = 3
    assert Child(2, 64) != Base(2, 64)  # the class is part of equality


def test_a_method_the_class_defines_is_kept():
    @frozen
    class Named:
        name: str

        def __repr__(self):
            return f"<{self.name}>"

    assert repr(Named("x")) == "<x>"


def test_frozen_class_sets_the_module():
    cls = frozen_class("Row", [("a", int)], module="somewhere")
    assert cls.__module__ == "somewhere" and cls(1).a == 1


def test_the_class_shows_the_parameters_of_a_frozen_dataclass():
    # what dataclasses (and a subclass made by it) read from a base: init, repr, eq and frozen all set
    assert repr(OURS.__dataclass_params__) == repr(REFERENCE.__dataclass_params__)


def test_the_package_defines_its_records_with_frozen():
    """A record class made by @dataclass(frozen=True) compiles six methods at every start again
    (docs/performance.md, "Cold start"): the package's records are @frozen."""
    import pathlib
    import re

    standard = re.compile(r"dataclass\(.*frozen=True")  # @dataclass(frozen=True), make_dataclass(..., frozen=True)
    package = pathlib.Path(__file__).resolve().parents[1] / "depthwidth"
    offenders = [f"{path.relative_to(package)}:{number}" for path in package.rglob("*.py") if path.name != "frozen.py"
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if standard.search(line)]
    assert offenders == []
    assert standard.search("@dataclass(frozen=True)") and standard.search('make_dataclass("Row", fields, frozen=True)')


def _record_body() -> tuple[dict, dict]:
    """A fresh class body (dataclasses names and types the Field objects it is given) and its annotations."""
    body = {"heads": None, "tags": (), "notes": field(default_factory=list),
            "flag": field(default=True, repr=False, hash=False, metadata={"unit": "s"}), "hidden": field(default=0, init=False)}
    return body, {**FIELDS, "flag": bool, "hidden": int}


def test_fields_and_class_attributes_are_the_standard_librarys():
    """What dataclasses, pydantic and ``match`` read of a record: every Field's name, type, default,
    factory and flags, ``__match_args__`` and the class attributes left behind (a default stays, a
    ``field()`` without one is removed), as ``dataclass(frozen=True)`` leaves them."""
    ours = twins(*_record_body())[0]
    reference = twins(*_record_body())[1]
    attributes = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata", "kw_only",
                  "_field_type")
    assert len(dataclasses.fields(ours)) == len(dataclasses.fields(reference)) == 7
    for got, expected in zip(dataclasses.fields(ours), dataclasses.fields(reference)):
        assert [getattr(got, a) for a in attributes] == [getattr(expected, a) for a in attributes]
    assert ours.__match_args__ == reference.__match_args__ == ("depth", "width", "heads", "tags", "notes", "flag")
    for name in (*FIELDS, "flag", "hidden"):
        assert getattr(ours, name, "absent") == getattr(reference, name, "absent"), name


def test_a_class_without_a_docstring_gets_the_standard_librarys():
    def bare(decorate):
        return decorate(type("Bare", (), {"__annotations__": {"a": int}, "__doc__": None}))
    assert bare(frozen).__doc__ == bare(dataclasses.dataclass(init=False, repr=False, eq=False)).__doc__


@pytest.mark.parametrize("body,annotations", [({"a": field(default=1)}, {}), ({"a": []}, {"a": list})])
def test_a_field_without_annotation_or_a_mutable_default_is_refused_as_the_standard_library_does(body, annotations):
    for decorate in (frozen, dataclasses.dataclass(frozen=True)):
        with pytest.raises((TypeError, ValueError)) as raised:
            decorate(type("Bad", (), {"__annotations__": dict(annotations), **body}))
        if decorate is frozen:
            ours = raised
        else:
            reference = raised
    assert (type(ours.value), str(ours.value)) == (type(reference.value), str(reference.value))


def test_class_variables_and_a_non_frozen_base_as_the_standard_library_reads_them():
    """A ClassVar is no field; a @frozen class cannot inherit from a
    dataclass that is not frozen."""
    from typing import ClassVar

    ours, reference = twins({"limit": 3}, {"depth": int, "limit": ClassVar[int]})
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(reference)] == ["depth"]
    assert ours(2).limit == reference(2).limit == 3
    # as a string, a ClassVar is one only if the class's module imports the name (here it does not): dataclasses decides
    ours, reference = twins({"limit": 3}, {"depth": int, "limit": "ClassVar[int]"})
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(reference)]

    @dataclasses.dataclass
    class Loose:
        depth: int

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        frozen(type("Child", (Loose,), {"__annotations__": {"width": int}}))
