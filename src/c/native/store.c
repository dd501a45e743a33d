/* The store slot: hooked_setattro() and what it needs to be exact and cheap.
 * Every module store and deletion goes through here while the engine is
 * installed, so the common case (a non-dunder str name stored on an exact
 * ModuleType without hooks) has a hot path of its own. */
#include "native.h"

PyObject *setattr_key = NULL;
PyObject *delattr_key = NULL;

/* ---- the hook dispatch ---- */

static PyObject *
call_hook(PyObject *hook, PyObject *name, PyObject *value)
{
#if HAS_PUBLIC_VECTORCALL
    PyObject *args[2] = {name, value};
    return PyObject_Vectorcall(hook, args, value == NULL ? 1 : 2, NULL);
#else
    /* 3.8 only has the provisional _PyObject_Vectorcall. */
    if (value == NULL) {
        return PyObject_CallFunctionObjArgs(hook, name, NULL);
    }
    return PyObject_CallFunctionObjArgs(hook, name, value, NULL);
#endif
}

/* ---- when a store on an exact module is a plain dict store ----
 *
 * The generic store first looks the name up on the type for a data
 * descriptor.  ModuleType and object define none under other than dunder
 * names, but their dicts can be changed from outside (ctypes, the
 * forbiddenfruit recipe), which then calls PyType_Modified() as CPython's own
 * method cache needs.  So the answer is cached against ModuleType's version
 * tag, which that invalidates, and computed again when the tag changes.
 * Only the main interpreter computes it (interpreters with their own GIL must
 * not write these); until it has, other interpreters take the generic
 * store. */
static unsigned int fast_store_tag = 0;
static int fast_store_ok = 0;

/* 1 if *type*'s dict has a data descriptor under a name the fast path takes
 * (anything but a str starting with "__"), 0 if not, -1 on error. */
static int
has_plain_named_data_descriptor(PyTypeObject *type)
{
    PyObject *dict = type_dict(type);
    if (dict == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int found = 0;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (!found && PyDict_Next(dict, &pos, &key, &value)) {
        int dunder = PyUnicode_Check(key) && PyUnicode_GET_LENGTH(key) >= 2 &&
                     PyUnicode_READ_CHAR(key, 0) == '_' && PyUnicode_READ_CHAR(key, 1) == '_';
        found = !dunder && Py_TYPE(value)->tp_descr_set != NULL;
    }
    Py_DECREF(dict);
    return found;
}

/* Whether ModuleType's version tag is valid. */
static inline int
module_type_tag_is_valid(void)
{
#if VERSION_TAG_FLAG_IS_SET
    return (PyModule_Type.tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
           PyModule_Type.tp_version_tag != 0;
#else
    return PyModule_Type.tp_version_tag != 0;
#endif
}

static int plain_store_is_dict_store_slow(void);

static inline int
plain_store_is_dict_store(void)
{
    /* The hot path: no interpreter check, it would cost a quarter of a
     * store (see docs/native-engine.md for what sub-interpreters miss). */
    if (PyModule_Type.tp_version_tag == fast_store_tag && module_type_tag_is_valid()) {
        return fast_store_ok;
    }
    return plain_store_is_dict_store_slow();
}

static int
plain_store_is_dict_store_slow(void)
{
    if (!is_main_interpreter()) {
        return 0;
    }
    /* A type attribute lookup gives ModuleType a valid tag again. */
    PyObject *probe = PyObject_GetAttr((PyObject *)&PyModule_Type, setattr_key);
    if (probe == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(probe);
    if (!module_type_tag_is_valid()) {
        /* No tag to cache against (CPython ran out of tags): ask every time. */
        return 0;
    }
    unsigned int tag = PyModule_Type.tp_version_tag;
    int found = has_plain_named_data_descriptor(&PyModule_Type);
    if (found == 0) {
        found = has_plain_named_data_descriptor(&PyBaseObject_Type);
    }
    if (found < 0) {
        PyErr_Clear();
        return 0;
    }
    fast_store_ok = !found;
    fast_store_tag = tag;
    return fast_store_ok;
}

/* Whether calling *hook* enters the interpreter's recursion check itself:
 * a Python function (or a method of one) runs in a new frame, which does. */
static int
hook_counts_its_own_level(PyObject *hook)
{
    if (PyMethod_Check(hook)) {
        hook = PyMethod_GET_FUNCTION(hook);
    }
    return PyFunction_Check(hook);
}

/* Whether this store is LazyLoader ending a lazy load: PyPy 3.11 and CPython
 * 3.12.3-3.12.x end it with a plain `self.__class__ = types.ModuleType` in
 * importlib.util._LazyModule.__getattribute__ (3.13+ use object.__setattr__,
 * gh-117182).  That is import-system bookkeeping, which no hook may see;
 * the module's class is still _LazyModule while it happens.  Matched by
 * name: test_importlib makes fresh copies of importlib.util. */
static int
is_lazy_load_ending(PyObject *self, PyObject *name)
{
    PyTypeObject *type = Py_TYPE(self);
    if (type == &PyModule_Type || strcmp(type->tp_name, "_LazyModule") != 0 ||
        !PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "__class__") != 0) {
        return 0;
    }
    PyObject *owner = type->tp_dict == NULL ? NULL : PyDict_GetItemString(type->tp_dict, "__module__");
    return owner != NULL && PyUnicode_Check(owner) &&
           PyUnicode_CompareWithASCIIString(owner, "importlib.util") == 0;
}

/* Calls the *hook* found in a module's namespace for a store (*value*) or a
 * deletion (NULL) of *name*; its result is ignored. */
static int
call_module_hook(PyObject *hook, PyObject *name, PyObject *value)
{
    /* The hook may delete itself or clear the namespace while it runs; hold
     * our own reference for the duration of the call. */
    Py_INCREF(hook);
    /* A hook that stores on its own module recurses through here; the C
     * stack must end in RecursionError, not a crash.  A Python function
     * counts its own frame, as the reference implementation relied on;
     * counting it again here made stores at the recursion limit fail one
     * level early.  Anything else (a functools.partial of setattr
     * recurses in C alone) is counted. */
    int counted = !hook_counts_its_own_level(hook);
    if (counted && Py_EnterRecursiveCall(" in a module __setattr__/__delattr__ hook")) {
        Py_DECREF(hook);
        return -1;
    }
    PyObject *result = call_hook(hook, name, value);
    if (counted) {
        Py_LeaveRecursiveCall();
    }
    Py_DECREF(hook);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* The reference implementation's module_setattro: the hook is looked up in the
 * module's own namespace only (no type lookup, no __getattr__); a key present
 * with any value, None included, is called; its result is ignored.  Every
 * case; hooked_setattro() below takes the common one first. */
static int
hooked_setattro_general(PyObject *self, PyObject *name, PyObject *value)
{
    PyObject *dict = PyModule_Check(self) ? PyModule_GetDict(self) : NULL;
    if (dict != NULL && PyDict_Check(dict)) {
#if HOOKLESS_CACHE || KEYS_VERSION_CACHE
        if (known_hookless(dict)) {
            goto no_hook;
        }
#endif
        PyObject *key = value == NULL ? delattr_key : setattr_key;
        PyObject *hook = PyDict_GetItemWithError(dict, key);
        if (hook != NULL) {
            /* Held: is_lazy_load_ending() looks into the class's dict, where
             * a non-str key's __eq__ may run and drop the namespace's
             * reference. */
            Py_INCREF(hook);
            int dispatched =
                hooks_dispatched(self) && !(value != NULL && is_lazy_load_ending(self, name));
            int result = dispatched ? call_module_hook(hook, name, value) : 0;
            Py_DECREF(hook);
            if (dispatched) {
                return result;
            }
        }
        else if (PyErr_Occurred()) {
            return -1;
        }
#if HOOKLESS_CACHE || KEYS_VERSION_CACHE
        else {
            remember_hookless(dict);
        }
    no_hook:
#endif
        if (value != NULL && Py_TYPE(self) == &PyModule_Type && PyUnicode_Check(name) &&
            !is_dunder_name(name) && plain_store_is_dict_store()) {
            /* Fast path for the common store, which decides the cost of the
             * patch on every module: the generic store would first look the
             * name up on the type for a data descriptor, and the only ones
             * ModuleType and object have (__class__, __dict__,
             * __annotations__) are dunder names, and anything added to
             * their dicts from outside is caught by
             * plain_store_is_dict_store().  So for an exact ModuleType and
             * any other name it is exactly a dict store. */
            return PyDict_SetItem(dict, name, value);
        }
    }
    else if (PyErr_Occurred()) {
        return -1;
    }
    return PyObject_GenericSetAttr(self, name, value);
}

/* The store of a non-dunder str name on an exact
 * ModuleType, which decides the cost of the patch on every module, in as few
 * instructions as it can be done exactly; everything else, and
 * every module with a hook, goes to hooked_setattro_general().  The namespace
 * is read through tp_dictoffset, public and fixed for ModuleType (md_dict;
 * NULL for a module made by ModuleType.__new__ alone on 3.8, which the general
 * path handles). */
static inline int
store_core(PyObject *self, PyObject *name, PyObject *value)
{
    if (Py_TYPE(self) != &PyModule_Type || value == NULL || !PyUnicode_CheckExact(name)) {
        return hooked_setattro_general(self, name, value);
    }
    PyObject *dict = *(PyObject **)((char *)self + PyModule_Type.tp_dictoffset);
    if (dict == NULL || !PyDict_CheckExact(dict)) {
        return hooked_setattro_general(self, name, value);
    }
#if HOOKLESS_CACHE
    if (!known_hookless(dict)) {
        return hooked_setattro_general(self, name, value);
    }
#else
#  if KEYS_VERSION_CACHE
    if (known_hookless(dict)) {
        goto no_hook;
    }
#  endif
    /* The hash of the interned key, computed when it was interned; no
     * PyDict_GetItemWithError() wrapper around the same lookup. */
    Py_hash_t hash = ((PyASCIIObject *)setattr_key)->hash;
    if (hash == -1) {
        return hooked_setattro_general(self, name, value);
    }
    PyObject *hook = _PyDict_GetItem_KnownHash(dict, setattr_key, hash);
    if (hook != NULL) {
        /* An exact ModuleType is never the _LazyModule of is_lazy_load_ending(). */
        if (hooks_dispatched(self)) {
            return call_module_hook(hook, name, value);
        }
    }
    else if (PyErr_Occurred()) {
        return -1;
    }
#  if KEYS_VERSION_CACHE
    else if (keys_version(dict) != 0) {
        /* Inline: a namespace whose keys have no version (no specialised
         * code reads it) pays no call. */
        remember_hookless(dict);
    }
no_hook:
#  endif
#endif
    if (!is_dunder_name(name) && plain_store_is_dict_store()) {
        /* See hooked_setattro_general(): exactly a dict store here. */
        return PyDict_SetItem(dict, name, value);
    }
    return PyObject_GenericSetAttr(self, name, value);
}

/* ---- deprecated() markers stored through a module ----
 *
 * The type of pep726hook.deprecated()'s markers and the Python function to
 * call around a store of one, both the main interpreter's (set_marker_hook()),
 * or NULL.  A marker stored through an enabled module becomes a deprecation
 * of its name; the function decides (it is called with (module, name,
 * False) before the store, which it may refuse by raising, and (module,
 * name, True) after it).  Checked by type, so that a store of anything else
 * costs the slot one comparison. */
static PyObject *marker_type = NULL;
static PyObject *marker_callback = NULL;

int
set_marker_hook(PyObject *type, PyObject *callback)
{
    if (!is_main_interpreter()) {
        /* A sub-interpreter's own copy of the package: its markers are of
         * another type, which the slot does not look for. */
        return 0;
    }
    Py_XINCREF(type);
    Py_XINCREF(callback);
    PyObject *old_type = marker_type, *old_callback = marker_callback;
    marker_type = type;
    marker_callback = callback;
    Py_XDECREF(old_type);
    Py_XDECREF(old_callback);
    return 0;
}

int
visit_marker_hook(visitproc visit, void *arg)
{
    Py_VISIT(marker_type);
    Py_VISIT(marker_callback);
    return 0;
}

int
is_marker(PyObject *value)
{
    return marker_type != NULL && (PyObject *)Py_TYPE(value) == marker_type;
}

void
forget_marker_hook(int release)
{
    if (release) {
        (void)set_marker_hook(NULL, NULL);
    }
    else {
        /* They belonged to the finished runtime. */
        marker_type = NULL;
        marker_callback = NULL;
    }
}

static int
call_marker_hook(PyObject *callback, PyObject *module, PyObject *name, PyObject *stored)
{
    PyObject *result = PyObject_CallFunctionObjArgs(callback, module, name, stored, NULL);
    Py_XDECREF(result);
    return result == NULL ? -1 : 0;
}

static Py_NO_INLINE int
store_marker(PyObject *self, PyObject *name, PyObject *value)
{
    PyObject *callback = marker_callback;
    if (callback == NULL || !is_main_interpreter()) {
        return store_core(self, name, value);
    }
    /* Held: the call may replace it. */
    Py_INCREF(callback);
    int result = -1;
    if (call_marker_hook(callback, self, name, Py_False) == 0 &&
        store_core(self, name, value) == 0) {
        result = call_marker_hook(callback, self, name, Py_True);
    }
    Py_DECREF(callback);
    return result;
}

/* A store: a marker's goes through store_marker(). */
static inline int
store_value(PyObject *self, PyObject *name, PyObject *value)
{
    if (value != NULL && (PyObject *)Py_TYPE(value) == marker_type) {
        return store_marker(self, name, value);
    }
    return store_core(self, name, value);
}

#if RELOCATE_GETATTR
/* Whether *name* is '__class__' (the cheap checks first). */
static int
is_class_name(PyObject *name)
{
    return PyUnicode_Check(name) && is_dunder_name(name) &&
           PyUnicode_CompareWithASCIIString(name, "__class__") == 0;
}

/* A store while some module's __getattr__ is relocated: a store of
 * '__getattr__' puts it back into the namespace first.  Out of line, so that
 * the slot saves no register for it. */
static Py_NO_INLINE int
setattro_while_relocating(PyObject *self, PyObject *name, PyObject *value)
{
    if (is_getattr_name(name) && return_relocated_getattr(self) < 0) {
        return -1;
    }
    if (value != NULL && is_class_name(name) && weak_table_find(&opt_ins, self) != NULL) {
        /* `module.__class__ = Own`.  Whatever class the store leaves (the
         * module's own __setattr__ hook may refuse it, or choose another),
         * its reads must reach the held __getattr__.  What can fail (both
         * steps allocate) comes before the store, so that a failure leaves
         * the module's class as it was, and a store that succeeded is
         * reported as one.  Own, if created since the read slot was
         * wrapped, gets the wrapper, as every older ModuleType subclass
         * has: for modules without a held function it reads as the
         * original, so a store that fails afterwards leaves nothing
         * wrong.  The function goes back into the namespace, where every
         * read slot finds it (a class with a read slot of its own reads
         * through the original, which looks only there); on a class that
         * reads through the wrapper, the next read that reaches the slot
         * moves it out again. */
        if (PyType_Check(value) && give_wrapper_to((PyTypeObject *)value) < 0) {
            return -1;
        }
        if (return_relocated_getattr(self) < 0) {
            return -1;
        }
    }
    return store_value(self, name, value);
}
#endif

/* The slot.  While no module has deprecated names out of its namespace,
 * that costs the common store a load and a branch. */
int
hooked_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    if (deprecating_modules.count != 0) {
        return store_while_deprecating(self, name, value);
    }
    return store_through_hooks(self, name, value);
}

/* The store without deprecations.  While no module has (3.11-3.14) a
 * relocated __getattr__, that costs the common store a load and a branch; a
 * marker's type, another. */
int
store_through_hooks(PyObject *self, PyObject *name, PyObject *value)
{
#if RELOCATE_GETATTR
    if (relocating_count != 0) {
        return setattro_while_relocating(self, name, value);
    }
#endif
    return store_value(self, name, value);
}

static int
check_name(PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    return 0;
}

/* ModuleType.__setattr__(self, name, value) as a plain method descriptor, for
 * the entries of sub-interpreters (the type below is a static type of this
 * extension, used by the main interpreter only).  The method descriptor has
 * already checked that self is a module. */
static PyObject *
module_setattr_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "expected 2 arguments, got %zd", nargs);
        return NULL;
    }
    if (check_name(args[0]) < 0 || hooked_setattro(self, args[0], args[1]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ModuleType.__delattr__(self, name). */
static PyObject *
module_delattr_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "expected 1 argument, got %zd", nargs);
        return NULL;
    }
    if (check_name(args[0]) < 0 || hooked_setattro(self, args[0], NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef setattr_def = {
    "__setattr__", (PyCFunction)(void (*)(void))module_setattr_method, METH_FASTCALL,
    /* The text signature keeps inspect.signature(ModuleType.__setattr__)
     * working, as it does for the slot wrapper this replaces (CPython's
     * test_inspect test_types_module_has_signatures). */
    "__setattr__($self, name, value, /)\n--\n\n"
    "Implement setattr(self, name, value), calling the module's own __setattr__ "
    "hook when its namespace defines one (PEP 726)."};

PyMethodDef delattr_def = {
    "__delattr__", (PyCFunction)(void (*)(void))module_delattr_method, METH_FASTCALL,
    "__delattr__($self, name, /)\n--\n\n"
    "Implement delattr(self, name), calling the module's own __delattr__ "
    "hook when its namespace defines one (PEP 726)."};

