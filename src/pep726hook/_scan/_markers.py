"""What a module's source says of pep726hook: whether it opts in, whether it declares names.

Plain substring tests on the decoded text, run before any parsing: the scan
reports such a module's fallbacks with the fallback's advice, not a migration.
"""

from __future__ import annotations


def opts_in(text: str) -> bool:
    """Whether a module's source calls ``pep726hook.enable(``.

    Such a module keeps what it defines where pep726hook cannot be imported
    (a ``ModuleType`` subclass, a PEP 562 ``__getattr__``) as its fallback:
    the scan reports those with the fallback's advice, not a migration.
    """
    return "pep726hook.enable(" in text


def declares(text: str) -> bool:
    """Whether a module's source declares names with pep726hook's ``lazy_attribute()`` and such.

    Such a module keeps its PEP 562 ``__getattr__`` only as the fallback
    where pep726hook cannot be imported (what ``pep726hook scan --diff``
    writes): the scan neither suggests the conversion again nor diffs it.
    """
    return "pep726hook" in text and ("lazy_attribute" in text or "removed_attribute" in text)
