"""Deprecated module attributes: everything about them lives in this package.

One responsibility per module, each using only those above it in this list
(and the engines, the composition and the shared state, which never import
this package):

* :mod:`._entries`: the ``deprecated()`` markers, the entries
  (:class:`~._entries.Deprecation`) and each module's table of them.
* :mod:`._warning`: the warning a read, store or deletion issues, and the
  line it names.
* :mod:`._classes`: the deprecating classes, ``DeprecatingModule`` and
  ``PendingMarkersModule``, composed with a module's own class by the class
  engine: what serves deprecated names through a module's class.
* :mod:`._moved`: under the native engine, the window while the module's
  import runs and the move of its deprecated names into its private
  builtins once it has ended, and the store callback of the C extension.
* :mod:`._deprecating`: :func:`~._deprecating.deprecate`, the step every
  route ends in, the conversion of markers, and what it registers with the
  engines, the hook-aware classes and ``enable()`` as it loads (their only
  way back into this package).
* :mod:`._api`: ``pep726hook.deprecated()`` and
  ``pep726hook.deprecate_attribute()``, and their argument checks.
* :mod:`._declarations`: ``pep726hook.lazy_attribute()`` and
  ``pep726hook.removed_attribute()`` (lazy and removed names, entries of
  the same tables), and their argument checks.
* :mod:`._declared_getattr`: ``pep726hook.declared_getattr()``, the
  ``__getattr__`` that serves a module's declared names and leaves its
  namespace when its import ends (lazy_loader's idiom binds one).

Nothing here is imported before the first use of the deprecation API:
``import pep726hook`` and ``enable()`` of a library without deprecations
never load it.
"""
