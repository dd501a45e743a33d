"""What ``pep726hook scan`` tells a reader about a workaround: its read cost and its PEP 726 form.

Only text is made here, from facts the analysis gathered about the class a
workaround installs (:class:`ClassFacts`).  The interpreter ranges in the read
costs are those of CPython's attribute-read specialisation (PEP 659):

* CPython 3.11-3.13 specialise a module attribute read only for an exact
  ``types.ModuleType``; an instance of a subclass takes the generic path;
* CPython 3.11-3.14 do not specialise reads of a module whose namespace holds
  ``__getattr__`` (PEP 562), whatever its class;
* a class with ``__getattribute__`` runs Python code for every read, on every
  interpreter.
"""

from __future__ import annotations

from typing import NamedTuple

SUBCLASS_READS = "CPython 3.11-3.13"
NAMESPACE_GETATTR_READS = "CPython 3.11-3.14"

_LIBRARY_AUTHORS_GUIDE = 'documentation, "For library authors"'
_MIGRATION_GUIDE = '"Migrating a deprecation helper"'
_FAST_GETATTR_GUIDE = 'documentation, "Fast reads of __getattr__ modules"'
_DECLARATIONS_GUIDE = 'documentation, "pep726hook scan", "Converting a static __getattr__"'


class ClassFacts(NamedTuple):
    """What a workaround class (with its local bases) defines."""

    name: str
    #: ``__setattr__``, ``__delattr__``, ``setter property X``, ``deleter property X``.
    overrides: tuple[str, ...]
    #: Properties that have a getter.
    getters: tuple[str, ...]
    getattribute: bool
    getattr: bool
    dict_property: bool
    #: A base is ``ModuleType``, ``type(sys)`` or such a class of the same module.
    module_type: bool
    #: The class, or the helper that installs it, is about deprecations.
    deprecation: bool

    @property
    def intercepts_stores(self) -> bool:
        return bool(self.overrides)


def getattr_read_cost(opted_in: bool = False) -> str:
    """The read cost of a module-level PEP 562 ``__getattr__``.

    *opted_in*: the module calls ``pep726hook.enable()``, which decides
    (per engine and version, and as its author chose) whether the function
    stays in the namespace; the cost is then stated for both outcomes.
    """
    unspecialised = (
        "reads of this module are not specialised while its namespace holds __getattr__,"
        f" on {NAMESPACE_GETATTR_READS}"
    )
    if not opted_in:
        return unspecialised
    return (
        "none where pep726hook.enable() takes __getattr__ out of the namespace (its native"
        " engine: by default on CPython 3.11, on 3.12-3.14 with enable(..., fast_getattr=True)"
        " or the application's fast-getattr switch); where it stays there (the class engine, by"
        f" default on 3.12-3.14, or without pep726hook), {unspecialised}"
    )


_FAST_GETATTR_SWITCH = (
    f"python -m pep726hook --fast-getattr, or PEP726HOOK_FAST_GETATTR=1 ({_FAST_GETATTR_GUIDE})"
)
_ENABLE_CHOICE = (
    "whether enable() keeps its reads specialised, and what that changes for other modules:"
    f" {_LIBRARY_AUTHORS_GUIDE}"
)


_ONLY_DEPRECATED = "this __getattr__ only serves deprecated names"
_APPLICATION_TOO = (
    "; an application can do the same for every module with a __getattr__, without editing"
    f" any: {_FAST_GETATTR_SWITCH}"
)


def getattr_advice(
    opted_in: bool,
    deprecation: bool,
    *,
    static: str | None = None,
    only_deprecated: bool = False,
) -> str:
    """What to do about a module-level PEP 562 ``__getattr__`` and the read cost it brings.

    *opted_in*: the module already calls ``pep726hook.enable()``;
    *deprecation*: the function mentions a deprecation (then it may only
    serve deprecated names, which ``pep726hook.deprecate_attribute()`` serves
    without it); *static*: what the function serves, when that is a static
    set of names that declarations can replace (``pep726hook scan --diff``
    writes them); *only_deprecated*: every value it returns comes right after
    a warning, so it serves deprecated names only.  The deprecation advice
    says nothing of read speed: what a deprecating module's reads cost is the
    deprecation documentation's to say.
    """
    if opted_in:
        return f"none: the module opts in with pep726hook.enable() ({_ENABLE_CHOICE})"
    if static is not None:
        return (
            f"this __getattr__ serves a static set of names ({static}): declare them with"
            " pep726hook.lazy_attribute() and pep726hook.removed_attribute() instead, keeping"
            " __getattr__ as the fallback without pep726hook, and the module's reads stay"
            f" specialised; pep726hook scan --diff FILE prints that change ({_DECLARATIONS_GUIDE})"
        )
    if only_deprecated:
        return (
            f"{_ONLY_DEPRECATED} (it warns before every value it"
            " returns): declare each with pep726hook.deprecate_attribute(__name__, name, message,"
            " factory=...) (or assign it with pep726hook.deprecated()), which warns the same way"
            " and takes __getattr__ out of the module's reads"
            f" (documentation, {_MIGRATION_GUIDE})"
        )
    advice = (
        "to keep its reads specialised, opt the module in with"
        " pep726hook.enable(__name__, fast_getattr=True) in the module itself"
        f" ({_ENABLE_CHOICE}){_APPLICATION_TOO}"
    )
    if not deprecation:
        return advice
    return (
        f"{advice}; where this __getattr__ serves deprecated names,"
        " pep726hook.deprecate_attribute(__name__, name, message) warns on reads, imports, stores"
        " and deletions through the module while the module's own code keeps the names"
        f" (documentation, {_MIGRATION_GUIDE})"
    )


def user_advice(kind: str, author_advice: str) -> str:
    """The suggestion of a *kind* finding in an installed distribution, for its user first.

    Whoever scans an environment mostly uses the distributions in it rather
    than writes them: what the finding means for them, and what they can do
    without editing anything, comes first; *author_advice* (the migration the
    distribution's authors could make) follows, without what the user part
    already said.
    """
    if kind == "module_getattr" and author_advice.startswith(_ONLY_DEPRECATED):
        yours = (
            "nothing to change unless your code reads names through this module: each such read"
            " warns, as the names are deprecated; read them where the warning says"
        )
    elif kind == "module_getattr":
        yours = (
            "nothing to change; to keep this module's reads specialised in your program, without"
            f" editing it: {_FAST_GETATTR_SWITCH}"
        )
        # The switch is said already: the authors' part keeps what is theirs.
        author_advice = author_advice.replace(_APPLICATION_TOO, "")
    else:
        yours = "nothing to change: the code is the distribution's own, and works as before"
    return f"for you, as a user of the distribution: {yours}. For its authors: {author_advice}"


#: The suggestion of a finding in the standard library that has one elsewhere.
STDLIB_NOTE = (
    "informational only, not a suggestion to edit the standard library: this is how CPython"
    " itself is written, and the read cost is what a program that uses it pays"
)


def stdlib_advice(kind: str) -> str:
    """The suggestion of a *kind* finding in the standard library, which nobody should edit.

    A PEP 562 ``__getattr__`` there is one thing a program can still act
    on, from outside: the fast-getattr switch.
    """
    if kind != "module_getattr":
        return STDLIB_NOTE
    return (
        "informational only, not a suggestion to edit the standard library; a program can keep"
        f" this module's reads specialised without editing it: {_FAST_GETATTR_SWITCH}"
    )


def fallback_advice(
    what: str, cost: str, how: str = "opts in with pep726hook.enable()"
) -> tuple[str, str]:
    """The suggestion and read cost of *what*, which a module that opts in keeps as its fallback.

    A module that calls ``pep726hook.enable()`` and defines a ``ModuleType``
    subclass, or a PEP 562 ``__getattr__`` where pep726hook cannot be
    imported, has already migrated: *cost* is paid only without pep726hook.
    """
    return (
        f"none: the module {how} and keeps {what} as its fallback without pep726hook",
        f"only where pep726hook cannot be imported: {cost}",
    )


def read_cost(facts: ClassFacts) -> str:
    """What reads of a module cost while *facts*' class (or object) stands in for it."""
    if facts.getattribute:
        return (
            f"every read of this module goes through Python code ({facts.name}.__getattribute__),"
            " on every interpreter"
        )
    if facts.dict_property or not facts.module_type:
        cost = (
            f"the module is replaced by a {facts.name} object, not a module: its reads are"
            " ordinary object attribute reads, never the specialised module read"
        )
        if facts.getattr:
            cost += (
                f", and names it does not hold go through Python code ({facts.name}.__getattr__),"
                " on every interpreter"
            )
        return cost
    cost = f"reads take the subclass path, not the specialised module read, on {SUBCLASS_READS}"
    if facts.getattr:
        cost += (
            f"; names missing from the namespace go through Python code ({facts.name}.__getattr__)"
        )
    return cost


def _hooks(facts: ClassFacts) -> list[str]:
    hooks = []
    if facts.getattribute and not facts.overrides:
        # A wrapper that only intercepts reads still catches stores: they land on it,
        # not in the module.
        hooks.append('"def __setattr__(name, value): ..."')
    if any(o == "__setattr__" or o.startswith("setter ") for o in facts.overrides):
        hooks.append('"def __setattr__(name, value): ..."')
    if any(o == "__delattr__" or o.startswith("deleter ") for o in facts.overrides):
        hooks.append('"def __delattr__(name): ..."')
    return hooks


def suggestion(facts: ClassFacts, helper: str | None = None) -> str:
    """The PEP 726 form of the workaround that installs *facts*' class.

    *helper* is the function that installs it on a module it is given, when
    that is how it is installed.
    """
    if facts.dict_property:
        return (
            f"none needed for pep726hook: PEP 726 hooks run for module objects only, and a"
            f" {facts.name} keeps its namespace in the dictionary its __dict__ property returns;"
            " to bring the namespace under hooks, give it to a real module"
            " (module = types.ModuleType(name); module.__dict__.update(namespace)) and opt that"
            " module in with pep726hook.enable(module)"
        )
    if facts.deprecation:
        return _deprecation_suggestion(facts, helper)
    hooks = " and ".join(_hooks(facts) or ['"def __setattr__(name, value): ..."'])
    if helper:
        start = (
            f"have {helper} put the hooks {hooks} into the namespace of the module it is given"
            " (PEP 726 looks them up in the module's __dict__ at every store) and opt that module"
            " in with pep726hook.enable(module)"
        )
    else:
        start = f"define module-level {hooks} and opt in with pep726hook.enable(__name__)"
    fallback = (
        f"keeping class {facts.name} only as the fallback where pep726hook cannot be imported"
        f" ({_LIBRARY_AUTHORS_GUIDE})"
    )
    if facts.getattribute or facts.getattr:
        reads = (
            '; the reads it computes become a PEP 562 "def __getattr__(name): ..." that only names'
            " missing from the namespace reach (the module's reads are then not specialised, on"
            f" {NAMESPACE_GETATTR_READS}: {read_cost(facts)} today)"
        )
    elif facts.getters:
        names = ", ".join(facts.getters)
        reads = (
            f"; for the getter properties ({names}), store their values in the module namespace"
            ' and update them from the hook, or add a PEP 562 "def __getattr__(name): ..."'
            f" (which stops reads of the module being specialised, on {NAMESPACE_GETATTR_READS})"
        )
    else:
        # Setter-only properties and plain overrides: nothing to do for reads,
        # and a namespace __getattr__ would only make every read slower.
        reads = (
            "; no PEP 562 __getattr__ is needed (it has no getter to replace, and one would stop"
            f" reads of the module being specialised on {NAMESPACE_GETATTR_READS}): with the hooks,"
            " reads are plain module reads"
        )
    return f"{start}, {fallback}{reads}"


def _deprecation_suggestion(facts: ClassFacts, helper: str | None) -> str:
    # A class that exists to deprecate names: PEP 726's form is no hook at
    # all but pep726hook.deprecate_attribute(), which keeps the names in the
    # namespace (the module's own code reads them) and keeps sys.modules.
    call = "pep726hook.deprecate_attribute(module, name, message)"
    if helper:
        start = f"have {helper} call {call} for each name on the module it is given"
    else:
        start = f"call {call.replace('module,', '__name__,')} for each deprecated name"
    return (
        f"{start} (warn= routes the warning through the library's own function), keeping class"
        f" {facts.name} only as the fallback where pep726hook cannot be imported (documentation,"
        f" {_MIGRATION_GUIDE}): the module stays in sys.modules and its own code keeps the names"
    )
