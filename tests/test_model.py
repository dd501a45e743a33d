"""An executable model of PEP 726, checked against real modules under every engine.

The model is a dictionary plus two optional hooks looked up in it, exactly as
the PEP and its reference implementation (CPython PR #108261) specify: a store
or deletion calls ``namespace["__setattr__"](name, value)`` /
``namespace["__delattr__"](name)`` when the key is present (whatever its value:
``None`` or a non-callable is "present" and calling it fails), and does the
generic store or deletion otherwise.

Hypothesis drives random sequences of operations (stores and deletions by
syntax and by ``setattr``/``delattr``, hooks added, replaced and removed
through ``__dict__``, hooks that raise, stores to ``__class__`` and
``__spec__``, direct namespace writes) against the model and a real module
imported under each engine, and requires the same observable results after
every step: the exception (type and message), the namespace, the hook calls
made, and the module's class.

Hooks are built twice from one description, once over the real module's
namespace and once over the model's, so the model can call its own hooks and
get the very errors (wrong signature, not callable) Python gives.
"""

from __future__ import annotations

import importlib
import itertools
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

import pytest
from _venv import WriteModule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pep726hook

ModuleType = types.ModuleType

EXAMPLES_PER_ENGINE = 200


class Sub(ModuleType):
    """A user module class, made before any engine was installed."""


SPEC_SENTINEL = object()  # stands for a new ``__spec__``, as importlib.reload stores one
NAMES = ("x", "y", "__spec__", "__class__", "__setattr__", "__delattr__")
PLAIN_VALUES: tuple[Any, ...] = (0, 1, 2, None, "text", SPEC_SENTINEL)
CLASS_VALUES: tuple[Any, ...] = (Sub, ModuleType, int, 42)
HOOK_KINDS = ("store", "record", "raise_attribute", "raise_value", "wrong_signature")
NON_FUNCTION_HOOKS: tuple[Any, ...] = (None, "not callable")

Log = List[Tuple[Any, ...]]
Outcome = Optional[Tuple[type, str]]


def make_hook(which: str, kind: str, namespace: dict[str, Any], log: Log) -> Any:
    """A hook of *kind* acting on *namespace*, recording its calls in *log*."""
    if which == "__setattr__":

        def hook(name: str, value: Any) -> None:
            log.append(("__setattr__", name, value))
            if kind == "store":
                namespace[name] = value
            elif kind == "raise_attribute":
                raise AttributeError(f"{name!r} is read-only")
            elif kind == "raise_value":
                raise ValueError(f"bad value for {name!r}")

        def wrong(name: str) -> None:  # one parameter short
            log.append(("wrong", name))

    else:

        def hook(name: str) -> None:  # type: ignore[misc]
            log.append(("__delattr__", name))
            if kind == "store":
                del namespace[name]
            elif kind == "raise_attribute":
                raise AttributeError(f"{name!r} cannot be deleted")
            elif kind == "raise_value":
                raise ValueError(f"will not delete {name!r}")

        def wrong(name: str, extra: Any) -> None:  # type: ignore[misc]  # one too many
            log.append(("wrong", name, extra))

    chosen = wrong if kind == "wrong_signature" else hook
    chosen.model_spec = (which, kind)  # type: ignore[attr-defined]
    return chosen


def tag(value: Any) -> Any:
    """What is compared: hooks by their description, other objects by identity."""
    if isinstance(value, types.FunctionType):
        return ("hook", getattr(value, "model_spec", value.__qualname__))
    if value is None or type(value) in (str, int):
        return ("value", value)
    return ("object", id(value), type(value).__name__)


def outcome_of(action: Callable[[], object]) -> Outcome:
    try:
        action()
    except Exception as error:  # every exception is an observable result
        return (type(error), str(error))
    return None


@dataclass
class Model:
    """PEP 726 on a plain dictionary: the specification the engines are held to."""

    module_name: str
    namespace: dict[str, Any]
    cls: type = ModuleType
    log: Log = field(default_factory=list)

    def store(self, name: str, value: Any) -> None:
        if "__setattr__" in self.namespace:
            self.namespace["__setattr__"](name, value)
        elif name == "__class__":
            # Generic __class__ assignment: let a plain module say what it allows.
            self._probe().__class__ = value
            self.cls = value
        else:
            self.namespace[name] = value

    def delete(self, name: str) -> None:
        if "__delattr__" in self.namespace:
            self.namespace["__delattr__"](name)
        elif name != "__class__" and name in self.namespace:
            del self.namespace[name]
        else:
            # Generic deletion of something absent: a plain module's error.
            probe = self._probe()
            probe.__dict__.pop(name, None)
            delattr(probe, name)

    def _probe(self) -> ModuleType:
        """A module without hooks, of the model's class: its errors are the generic ones."""
        probe = ModuleType(self.module_name)
        object.__setattr__(probe, "__class__", self.cls)
        return probe


# --- operations: each applies itself to the model and to the real module ----------------


@dataclass(frozen=True)
class Store:
    name: str
    value: Any
    syntax: bool

    def real(self, module: ModuleType, log: Log) -> None:
        if self.syntax:
            exec(f"module.{self.name} = value", {"module": module, "value": self.value})
        else:
            setattr(module, self.name, self.value)

    def model(self, model: Model) -> None:
        model.store(self.name, self.value)


@dataclass(frozen=True)
class Delete:
    name: str
    syntax: bool

    def real(self, module: ModuleType, log: Log) -> None:
        if self.syntax:
            exec(f"del module.{self.name}", {"module": module})
        else:
            delattr(module, self.name)

    def model(self, model: Model) -> None:
        model.delete(self.name)


@dataclass(frozen=True)
class SetHook:
    """``mod.__dict__[which] = hook``: bypasses every hook, as the PEP says."""

    which: str
    kind: Any  # a HOOK_KINDS name, or a non-function value to put there

    def _hook(self, namespace: dict[str, Any], log: Log) -> Any:
        if self.kind in HOOK_KINDS:
            return make_hook(self.which, self.kind, namespace, log)
        return self.kind

    def real(self, module: ModuleType, log: Log) -> None:
        namespace = module.__dict__
        namespace[self.which] = self._hook(namespace, log)

    def model(self, model: Model) -> None:
        model.namespace[self.which] = self._hook(model.namespace, model.log)


@dataclass(frozen=True)
class RemoveHook:
    which: str

    def real(self, module: ModuleType, log: Log) -> None:
        module.__dict__.pop(self.which, None)

    def model(self, model: Model) -> None:
        model.namespace.pop(self.which, None)


@dataclass(frozen=True)
class DirectWrite:
    """``mod.__dict__[name] = value``: never seen by a hook."""

    name: str
    value: Any

    def real(self, module: ModuleType, log: Log) -> None:
        module.__dict__[self.name] = self.value

    def model(self, model: Model) -> None:
        model.namespace[self.name] = self.value


Operation = Any  # Store | Delete | SetHook | RemoveHook | DirectWrite

_names = st.sampled_from(NAMES)
_syntax = st.booleans()
operations = st.one_of(
    st.builds(
        Store, st.sampled_from(("x", "y", "__spec__")), st.sampled_from(PLAIN_VALUES), _syntax
    ),
    st.builds(Store, st.just("__class__"), st.sampled_from(CLASS_VALUES), _syntax),
    st.builds(Store, st.sampled_from(("__setattr__", "__delattr__")), st.just(None), _syntax),
    st.builds(Delete, _names, _syntax),
    st.builds(
        SetHook,
        st.sampled_from(("__setattr__", "__delattr__")),
        st.sampled_from(HOOK_KINDS + NON_FUNCTION_HOOKS),
    ),
    st.builds(RemoveHook, st.sampled_from(("__setattr__", "__delattr__"))),
    st.builds(DirectWrite, st.sampled_from(("x", "y")), st.sampled_from(PLAIN_VALUES)),
)

# --- the module under test ----------------------------------------------------------------

# Hooks written in the module's source: they behave as make_hook(..., "store", ...).
SOURCE_HOOKS = {
    "__setattr__": """
def __setattr__(name, value):
    _log.append(("__setattr__", name, value))
    globals()[name] = value
""",
    "__delattr__": """
def __delattr__(name):
    _log.append(("__delattr__", name))
    del globals()[name]
""",
}

# How the module gets its hooks at first:
#   "both"/"setattr-only": defined in its source, imported while installed;
#   "upgraded": defined in no source, the module passed to pep726hook.upgrade();
#   "no-upgrade": defined in no source and not upgraded (native engine only:
#   there every module object honours hooks, as with the reference implementation).
STARTS = ("both", "setattr-only", "upgraded", "no-upgrade")
_counter = itertools.count()


def import_target(write_module: WriteModule, start: str) -> ModuleType:
    name = f"model_target_{next(_counter)}"
    source = "_log = []\nx = 0\n"
    if start in ("both", "setattr-only"):
        source += SOURCE_HOOKS["__setattr__"]
    if start == "both":
        source += SOURCE_HOOKS["__delattr__"]
    write_module(name, source)
    module = importlib.import_module(name)
    for which in ("__setattr__", "__delattr__"):
        hook = module.__dict__.get(which)
        if hook is not None:
            hook.model_spec = (which, "store")
    if start == "upgraded":
        pep726hook.upgrade(module)
    return module


TRACKED = (*NAMES, "__name__")


def observe(namespace: dict[str, Any]) -> dict[str, Any]:
    return {name: tag(namespace[name]) for name in TRACKED if name in namespace}


def check(
    module: ModuleType, model: Model, real_outcome: Outcome, model_outcome: Outcome, step: str
) -> None:
    assert real_outcome == model_outcome, step
    assert observe(module.__dict__) == observe(model.namespace), step
    real_log = [tuple(tag(v) for v in call) for call in module.__dict__["_log"]]
    model_log = [tuple(tag(v) for v in call) for call in model.log]
    assert real_log == model_log, step
    assert isinstance(module, Sub) == issubclass(model.cls, Sub), step
    assert isinstance(module, ModuleType), step


def run_against_model(module: ModuleType, ops: list[Operation]) -> None:
    namespace = module.__dict__
    model = Model(module.__name__, {k: namespace[k] for k in TRACKED if k in namespace})
    # The model's copies of the source-defined hooks act on the model's namespace.
    for which in ("__setattr__", "__delattr__"):
        if which in namespace:
            model.namespace[which] = make_hook(which, "store", model.namespace, model.log)
    real_log: Log = namespace["_log"]
    steps = []
    for op in ops:
        steps.append(repr(op))
        real_outcome = outcome_of(lambda op=op: op.real(module, real_log))
        model_outcome = outcome_of(lambda op=op: op.model(model))
        check(module, model, real_outcome, model_outcome, "\n".join(steps))


def starts_for(engine: str) -> list[str]:
    return list(STARTS) if engine == "native" else [s for s in STARTS if s != "no-upgrade"]


@settings(
    max_examples=EXAMPLES_PER_ENGINE,
    deadline=None,
    derandomize=True,
    database=None,
    # The engine fixture installs pep726hook once for the whole test on
    # purpose; every example imports a module of its own under a new name and
    # removes it from sys.modules, so nothing carries over between examples.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), ops=st.lists(operations, max_size=30))
def test_real_module_behaves_like_the_pep_726_model(
    engine: str, write_module: WriteModule, data: st.DataObject, ops: list[Operation]
) -> None:
    start = data.draw(st.sampled_from(starts_for(engine)), label="start")
    module = import_target(write_module, start)
    try:
        run_against_model(module, ops)
    finally:
        sys.modules.pop(module.__name__, None)


# --- a few fixed sequences, so that the model's key rules are pinned down by name --------


@pytest.mark.parametrize("start", ["both", "upgraded"])
def test_hook_sees_store_to_spec_and_class(
    engine: str, write_module: WriteModule, start: str
) -> None:
    module = import_target(write_module, start)
    run_against_model(
        module,
        [
            SetHook("__setattr__", "record"),
            Store("__spec__", SPEC_SENTINEL, syntax=True),
            Store("__class__", Sub, syntax=False),
        ],
    )
    assert module.__dict__["_log"] == [
        ("__setattr__", "__spec__", SPEC_SENTINEL),
        ("__setattr__", "__class__", Sub),
    ]
    assert not isinstance(module, Sub)


@pytest.mark.parametrize("start", ["both", "upgraded"])
def test_hook_set_to_none_makes_stores_fail_with_type_error(
    engine: str, write_module: WriteModule, start: str
) -> None:
    module = import_target(write_module, start)
    run_against_model(module, [SetHook("__setattr__", None), Store("x", 1, syntax=True)])
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        module.y = 1


@pytest.mark.parametrize("start", ["both", "upgraded"])
def test_removing_hooks_restores_generic_store_and_delete(
    engine: str, write_module: WriteModule, start: str
) -> None:
    module = import_target(write_module, start)
    ops = [SetHook("__setattr__", "raise_value"), SetHook("__delattr__", "raise_attribute")]
    ops += [RemoveHook("__setattr__"), RemoveHook("__delattr__"), Store("y", 2, syntax=True)]
    ops += [Delete("x", syntax=False), Delete("x", syntax=True)]
    run_against_model(module, ops)
    assert module.__dict__.get("y") == 2
    assert "x" not in module.__dict__


@pytest.mark.parametrize("start", ["both", "upgraded"])
def test_class_store_without_hook_keeps_hooks_working(
    engine: str, write_module: WriteModule, start: str
) -> None:
    module = import_target(write_module, start)
    ops = [RemoveHook("__setattr__"), Store("__class__", Sub, syntax=True)]
    ops += [SetHook("__setattr__", "record"), Store("x", 5, syntax=False)]
    run_against_model(module, ops)
    assert isinstance(module, Sub)
    assert module.__dict__["_log"][-1] == ("__setattr__", "x", 5)
