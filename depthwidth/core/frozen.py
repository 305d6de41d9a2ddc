"""``@frozen``: a frozen dataclass whose methods are shared by every record class, not compiled per class.

``@dataclass(frozen=True)`` writes six methods per class as source text and compiles each with
``exec`` (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``):
about 0.7 ms a class, 27 ms of the 40 record classes a ``plan`` loads, a fifth of its start; and
even without them it reads every string annotation three times with a regular expression (is it
ClassVar, InitVar, KW_ONLY?), ~0.2 ms a class. Here the class is still a dataclass
(``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass`` and pydantic work on it): its
``Field`` records are made by ``dataclasses.field`` and named as ``dataclasses`` names them
(``_fields``; an annotation that is not a plain field is left to ``dataclasses`` itself). It gets
none of those methods generated, but the same six behaviours written once below, read from a
per-class table of its fields:

- ``__init__``: positional or keyword values in field order, defaults and ``default_factory``,
  then ``__post_init__`` if the class has one; the TypeErrors of a generated ``__init__``, word for word.
- ``__eq__``: the fields with ``compare=True`` as a tuple, only against the same class.
- ``__hash__``: the hash of the fields with ``hash=True`` (or, unset, ``compare=True``).
- ``__repr__``: ``Name(field=value, ...)`` over the fields with ``repr=True``.
- ``__setattr__`` and ``__delattr__`` raise ``dataclasses.FrozenInstanceError``.

A method the class body defines itself is kept, as ``dataclass`` keeps it. A subclass may be
``@frozen``, ``@dataclass(frozen=True)`` or ``make_dataclass(..., frozen=True)``: every ``@frozen``
class shows the ``__dataclass_params__`` of a frozen dataclass. That and a Field's ``_field_type``
are the two dataclasses internals written here; tests/test_frozen.py checks every field, flag and
class attribute against a twin made by the standard library. ``frozen_class``
builds one from a field list, as ``dataclasses.make_dataclass`` does. Lives in the lowest package so
that every layer may use it.
"""
import abc
import copy
import dataclasses
import sys
from operator import attrgetter
from types import MemberDescriptorType

__all__ = ["frozen", "frozen_class"]

_MISSING = dataclasses.MISSING
_UNSET = object()  # a field's value before __init__ sets it


class _Table:
    """What the shared methods read, once per class: field names in order, the values a new record
    starts from (defaults, else ``_UNSET``), the fields left unset (a factory or no default), factories."""

    __slots__ = ("names", "index", "template", "unset", "factories", "compare", "hashed", "shown", "post_init")

    def __init__(self, cls):
        fields = dataclasses.fields(cls)
        self.names = tuple(f.name for f in fields if f.init)
        self.index = {name: at for at, name in enumerate(self.names)}
        self.template = {f.name: _UNSET if f.default is _MISSING else f.default for f in fields if f.init}
        self.unset = tuple(name for name, value in self.template.items() if value is _UNSET)
        self.factories = {f.name: f.default_factory for f in fields if f.init and f.default_factory is not _MISSING}
        self.compare = _getter([f.name for f in fields if f.compare])
        self.hashed = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
        self.shown = tuple(f.name for f in fields if f.repr)
        self.post_init = hasattr(cls, "__post_init__")


def _init(self, *args, **kwargs):
    cls = type(self)
    table = cls.__dict__.get("_frozen_table") or _table(cls)
    given = len(args)
    if given > len(table.names):
        _too_many(cls, table, given)
    values = self.__dict__
    values.update(table.template)  # every field in order: its default, or _UNSET
    values.update(zip(table.names, args))
    if kwargs:
        if given or not table.index.keys() >= kwargs.keys():  # maybe an unknown name or a value given twice
            _check_keywords(cls, table, given, kwargs, values)
        values.update(kwargs)
    for name in table.unset:  # the fields with a factory or without a default: given, else made or missing
        if values[name] is _UNSET:
            factory = table.factories.get(name)
            if factory is None:
                _missing(cls, table, values)
            values[name] = factory()
    if table.post_init:
        self.__post_init__()


def _too_many(cls, table: _Table, given: int):
    names = table.names
    least = len(table.unset) - len(table.factories)
    takes = f"from {least + 1} to {len(names) + 1}" if least < len(names) else f"{len(names) + 1}"
    raise TypeError(f"{cls.__qualname__}.__init__() takes {takes} positional arguments but {given + 1} were given")


def _check_keywords(cls, table: _Table, given: int, kwargs: dict, values: dict):
    for name in kwargs:
        at = table.index.get(name)
        if at is None:
            values.clear()
            raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {name!r}")
        if at < given:
            values.clear()
            raise TypeError(f"{cls.__qualname__}.__init__() got multiple values for argument {name!r}")


def _missing(cls, table: _Table, values: dict):
    missing = [name for name in table.unset if values[name] is _UNSET and name not in table.factories]
    values.clear()
    quoted = [repr(name) for name in missing]
    listed = " and ".join(quoted) if len(quoted) < 3 else ", ".join(quoted[:-1]) + ", and " + quoted[-1]
    raise TypeError(f"{cls.__qualname__}.__init__() missing {len(missing)} required positional argument"
                    f"{'s' if len(missing) > 1 else ''}: {listed}")


def _table(cls) -> _Table:
    """The class's own table (a subclass has its own fields), built on its first use."""
    table = cls.__dict__.get("_frozen_table")
    if table is None:
        table = _Table(cls)
        type.__setattr__(cls, "_frozen_table", table)
    return table


def _getter(names: list):
    """The named fields of a record as a tuple (``attrgetter`` returns a bare value for one name)."""
    if len(names) > 1:
        return attrgetter(*names)
    return (lambda record: (getattr(record, names[0]),)) if names else (lambda record: ())


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = _table(type(self)).compare
    return values(self) == values(other)


def _hash(self):
    cls = type(self)
    return hash((cls.__dict__.get("_frozen_table") or _table(cls)).hashed(self))


def _repr(self):
    names = _table(type(self)).shown
    return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in names)})"


def _setattr(self, name, value):
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self, name):
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


_METHODS = {"__init__": _init, "__eq__": _eq, "__hash__": _hash, "__repr__": _repr,
            "__setattr__": _setattr, "__delattr__": _delattr}


if sys.version_info >= (3, 13):  # copy.replace(record, **changes), as dataclasses gives it from 3.13 on
    _METHODS["__replace__"] = lambda self, /, **changes: dataclasses.replace(self, **changes)


_PARAMETERS = []  # the one __dataclass_params__ every @frozen class shows: init, repr, eq and frozen set


def _parameters():
    """The dataclass parameters every ``@frozen`` class shows: a plain dataclass's, with init, repr, eq
    and frozen set."""
    if not _PARAMETERS:
        plain = dataclasses.dataclass(type("Parameters", (), {"__doc__": "Parameters()"}), init=False, repr=False, eq=False)
        params = copy.copy(plain.__dataclass_params__)
        for name in ("init", "repr", "eq", "frozen"):
            setattr(params, name, True)
        _PARAMETERS.append(params)
    return _PARAMETERS[0]


def _inherits(bases) -> bool:
    return any(hasattr(base, "__dataclass_fields__") for base in bases)


def _finish(cls):
    for name, method in _METHODS.items():
        if name not in cls.__dict__ or (name == "__hash__" and cls.__dict__[name] is None):
            type.__setattr__(cls, name, method)
    # dataclasses reads a base's parameters: a @dataclass(frozen=True) or @frozen subclass must see a frozen base
    type.__setattr__(cls, "__dataclass_params__", _parameters())
    return cls


def frozen(cls):
    """The class as a frozen dataclass with shared methods (this module's docstring)."""
    fields = _fields(cls)
    if fields is None:  # a ClassVar, InitVar or KW_ONLY annotation, or lazy annotations: dataclasses' own reading
        # a subclass of a frozen dataclass must be processed as frozen (dataclasses refuses otherwise): it
        # gets dataclasses' own __setattr__ and __delattr__, the same behaviour compiled
        return _finish(dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=_inherits(cls.__mro__[1:])))
    type.__setattr__(cls, "__dataclass_fields__", fields)
    if "__match_args__" not in cls.__dict__:
        type.__setattr__(cls, "__match_args__", tuple(f.name for f in fields.values() if f.init and not f.kw_only))
    if not cls.__doc__:  # dataclasses' docstring for a class without one: its name and signature
        from inspect import signature

        try:
            text = str(signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            text = ""
        type.__setattr__(cls, "__doc__", cls.__name__ + text)
    abc.update_abstractmethods(cls)
    return _finish(cls)


_SPECIAL = ("ClassVar", "InitVar", "KW_ONLY")  # annotations that are not plain fields: left to dataclasses


def _fields(cls) -> dict | None:
    """``cls``' dataclass fields, its bases' first, as ``dataclasses.dataclass`` finds them (Python
    3.10-3.13: defaults from class attributes or ``field()``, checked as 3.11 checks them); None when an
    annotation may not be a plain field (it names one of ``_SPECIAL``) or the annotations are not yet
    evaluated (Python 3.14): then dataclasses reads them. ``dataclasses`` spends ~0.2 ms a class on this,
    mostly matching every string annotation against ClassVar, InitVar and KW_ONLY with a regular
    expression; here one substring test of them all."""
    own = cls.__dict__.get("__annotations__")
    if own is None and "__annotate__" in cls.__dict__:
        return None
    own = own or {}
    spelled = " ".join(map(str, own.values()))  # "typing.ClassVar[int]", "<class 'dataclasses.KW_ONLY'>", or as written
    if any(word in spelled for word in _SPECIAL):  # one test of the lot (a false alarm only costs dataclasses' reading)
        return None
    fields, frozen_base, dataclass_base = {}, False, False
    for base in cls.__mro__[-1:0:-1]:
        base_fields = base.__dict__.get("__dataclass_fields__")
        if base_fields is not None:
            dataclass_base = True
            fields.update(base_fields)
            frozen_base = frozen_base or base.__dataclass_params__.frozen
    if dataclass_base and not frozen_base:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    for name, kind in own.items():
        fields[name] = _field(cls, name, kind)
    if dataclasses.Field in set(map(type, cls.__dict__.values())):  # a field() left is one without an annotation
        name = next(name for name, value in cls.__dict__.items() if isinstance(value, dataclasses.Field))
        raise TypeError(f"{name!r} is a field but has no type annotation")
    return fields


def _field(cls, name: str, kind) -> dataclasses.Field:
    """One plain field: its ``field()`` or its default (the class attribute), named and typed; the
    class attribute set to the default, or removed when there is none (as dataclasses leaves them)."""
    default = getattr(cls, name, _MISSING)
    if isinstance(default, dataclasses.Field):
        made = default
        if made.default is _MISSING:
            type.__delattr__(cls, name)
        else:
            type.__setattr__(cls, name, made.default)
    else:
        if isinstance(default, MemberDescriptorType):  # a slot, not a default
            default = _MISSING
        made = dataclasses.field(default=default)
    made.name, made.type, made._field_type = name, kind, dataclasses._FIELD  # the one private name read here
    if made.kw_only is _MISSING:
        made.kw_only = False
    if made.default is not _MISSING and made.default.__class__.__hash__ is None:
        raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: use default_factory")
    return made


def frozen_class(name: str, fields: list, bases: tuple = (), module: str | None = None, doc: str | None = None):
    """``dataclasses.make_dataclass(name, fields, bases=bases, frozen=True)`` as a ``@frozen`` class, its
    docstring ``doc``, else ``name()``: dataclasses would write ``name`` and the class's signature, which
    for a class with no base is ``object``'s, parsed from text by ``inspect`` (it compiles ``tokenize``'s
    patterns: ~12 ms, the first time in a process); a JSON Schema skips both as no description."""
    namespace = {"__doc__": f"{name}()" if doc is None else doc}
    cls = dataclasses.make_dataclass(name, fields, bases=bases, namespace=namespace, init=False, repr=False, eq=False,
                                     frozen=_inherits(bases))
    if module is not None:
        cls.__module__ = module
    return _finish(cls)
