/* lazy_attribute(), removed_attribute() and deprecate_attribute() as their
 * callers call them.
 *
 * A package declares its lazy and removed names one call each (numpy about
 * 70, in its __init__).  Checking each call's arguments as the full path
 * checks them and searching for a lazy name's submodule, in Python, cost
 * more than the declaration itself: about 10,000 instructions a call on
 * CPython 3.12, 110,000 more for the search, which stats five files.  So
 * the package's two functions hand their arguments straight to
 * lazy_alone() and removed_alone() here, which check them, search the
 * submodule, make the entry and call declare_alone() (declared_alone.c).
 * They answer False, having changed nothing, for whatever they do not take
 * as the full path would: bad arguments included, whose errors are the full
 * path's to raise.
 *
 * The submodule search reads the listing of the package's directories that
 * the import system's own path-entry finder keeps (FileFinder._path_cache,
 * filled by the package's earlier imports), and asks the import system
 * (_frozen_importlib._find_spec) only where that listing does not show the
 * name: a finder of another kind, a listing older than a new file. */
#include "native.h"

#ifndef MS_WINDOWS
#include <unistd.h>
#endif

/* Interned once, in the main interpreter (the only one served here). */
static PyObject *name_key, *path_key, *spec_key, *file_finder_key, *listing_key, *loaders_key,
    *finder_path_key, *search_key, *external_key, *bootstrap_key;

static int
intern_keys(void)
{
    if (search_key != NULL) {
        return 0;
    }
    const char *texts[] = {"__name__",    "__path__", "__spec__", "FileFinder",
                           "_path_cache", "_loaders", "path",     "_frozen_importlib_external",
                           "_frozen_importlib", "_find_spec"};
    PyObject **keys[] = {&name_key,     &path_key,     &spec_key,        &file_finder_key,
                         &listing_key,  &loaders_key,  &finder_path_key, &external_key,
                         &bootstrap_key, &search_key};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        if (*keys[i] == NULL && (*keys[i] = PyUnicode_InternFromString(texts[i])) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* A name the full path accepts: an exact str, no dunder. */
static int
is_declarable(PyObject *name)
{
    if (!PyUnicode_CheckExact(name)) {
        return 0;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(name);
    return !(length > 4 && PyUnicode_READ_CHAR(name, 0) == '_' &&
             PyUnicode_READ_CHAR(name, 1) == '_' && PyUnicode_READ_CHAR(name, length - 1) == '_' &&
             PyUnicode_READ_CHAR(name, length - 2) == '_');
}

/* sys.modules[name] (borrowed), as sys.modules.get() reads it; NULL, with an
 * error or without.  Not PyImport_GetModule(), which waits for the import
 * lock of a module being imported: for the module declaring its own names
 * in its body, some 33,000 instructions a call on CPython 3.12. */
static PyObject *
imported(PyObject *name)
{
    PyObject *modules = PyImport_GetModuleDict();
    return PyDict_Check(modules) ? PyDict_GetItemWithError(modules, name) : NULL;
}

/* The module a caller names (a module or a name in sys.modules), as a new
 * reference; NULL without an error where it is none the extension takes. */
static PyObject *
target_module(PyObject *module)
{
    if (PyUnicode_CheckExact(module)) {
        module = imported(module);
    }
    return module != NULL && PyModule_Check(module) ? Py_NewRef(module) : NULL;
}

/* Whether the directory *name* is in the finder's directory, with one
 * access(): a trailing separator resolves only to a directory.  A directory
 * is a package or a namespace package's portion, which the finder finds. */
static int
is_directory(PyObject *finder, PyObject *name)
{
#ifdef MS_WINDOWS
    (void)finder;
    (void)name;
    return 0; /* the search decides */
#else
    PyObject *where = PyObject_GetAttr(finder, finder_path_key);
    if (where == NULL || !PyUnicode_Check(where)) {
        Py_XDECREF(where);
        PyErr_Clear();
        return 0;
    }
    PyObject *joined = PyUnicode_FromFormat("%U/%U/", where, name);
    Py_DECREF(where);
    PyObject *encoded = joined == NULL ? NULL : PyUnicode_EncodeFSDefault(joined);
    Py_XDECREF(joined);
    if (encoded == NULL) {
        PyErr_Clear();
        return 0;
    }
    const char *text = PyBytes_AS_STRING(encoded);
    int found = (Py_ssize_t)strlen(text) == PyBytes_GET_SIZE(encoded) && access(text, F_OK) == 0;
    Py_DECREF(encoded);
    return found;
#endif
}

/* Whether one of *finder*'s listed names is *name* with one of its loaders'
 * suffixes: 1, 0, or -1 with an error. */
static int
lists_module_file(PyObject *finder, PyObject *listing, PyObject *name)
{
    PyObject *loaders = PyObject_GetAttr(finder, loaders_key);
    if (loaders == NULL || !PyList_CheckExact(loaders)) {
        Py_XDECREF(loaders);
        PyErr_Clear();
        return 0;
    }
    int found = 0;
    for (Py_ssize_t i = 0; found == 0 && i < PyList_GET_SIZE(loaders); i++) {
        PyObject *pair = PyList_GET_ITEM(loaders, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) < 1 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0))) {
            continue;
        }
        PyObject *file = PyUnicode_Concat(name, PyTuple_GET_ITEM(pair, 0));
        found = file == NULL ? -1 : PySet_Contains(listing, file);
        Py_XDECREF(file);
    }
    Py_DECREF(loaders);
    return found;
}

/* Whether the path finder's listing of a directory of *path* (a package's
 * __path__) shows the submodule *name*: 1, 0 (not shown: ask the import
 * system), or -1 with an error. */
static int
is_listed(PyObject *path, PyObject *name)
{
    PyObject *external = imported(external_key);
    PyObject *finders = external == NULL ? NULL : PySys_GetObject("path_importer_cache");
    if (!PyList_CheckExact(path) || finders == NULL || !PyDict_CheckExact(finders)) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *file_finder = PyObject_GetAttr(external, file_finder_key);
    if (file_finder == NULL) {
        PyErr_Clear();
        return 0;
    }
    int found = 0;
    /* Nothing below runs Python code (exact str keys, an exact FileFinder's
     * own attributes, exact sets), so *path* cannot change meanwhile. */
    for (Py_ssize_t i = 0; found == 0 && i < PyList_GET_SIZE(path); i++) {
        PyObject *entry = PyList_GET_ITEM(path, i);
        PyObject *finder = PyUnicode_CheckExact(entry) ? PyDict_GetItemWithError(finders, entry)
                                                       : NULL;
        if (finder == NULL) {
            found = PyErr_Occurred() ? -1 : 0;
            continue;
        }
        if ((PyObject *)Py_TYPE(finder) != file_finder) {
            continue;
        }
        PyObject *listing = PyObject_GetAttr(finder, listing_key);
        if (listing == NULL || Py_TYPE(listing) != &PySet_Type) {
            Py_XDECREF(listing);
            PyErr_Clear();
            continue;
        }
        found = PySet_Contains(listing, name);
        if (found > 0) {
            found = is_directory(finder, name);
        }
        if (found == 0) {
            found = lists_module_file(finder, listing, name);
        }
        Py_DECREF(listing);
    }
    Py_DECREF(file_finder);
    return found;
}

/* The full name of *module*'s submodule *name* where the import system
 * finds it without running it, as importlib.util.find_spec() answers; Py_None
 * where it does not (or cannot be asked here: the full path decides); NULL
 * with an error the search raised. */
static PyObject *
unrun_submodule(PyObject *module, PyObject *name)
{
    PyObject *namespace = PyModule_GetDict(module);
    PyObject *package = namespace == NULL ? NULL : PyDict_GetItemWithError(namespace, name_key);
    PyObject *path = package == NULL ? NULL : PyDict_GetItemWithError(namespace, path_key);
    if (path == NULL || path == Py_None || !PyUnicode_Check(package)) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    Py_INCREF(path);
    PyObject *full_name = PyUnicode_FromFormat("%U.%U", package, name);
    PyObject *found = NULL;
    if (full_name == NULL) {
        goto done;
    }
    PyObject *submodule = imported(full_name);
    if (submodule != NULL) {
        /* Imported already: found if it has a spec. */
        Py_INCREF(submodule);
        PyObject *spec = submodule == Py_None ? NULL : PyObject_GetAttr(submodule, spec_key);
        Py_DECREF(submodule);
        if (spec == NULL && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_AttributeError)) {
            goto done;
        }
        PyErr_Clear();
        found = spec == NULL || spec == Py_None ? Py_NewRef(Py_None) : Py_NewRef(full_name);
        Py_XDECREF(spec);
        goto done;
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    int listed = is_listed(path, name);
    if (listed != 0) {
        found = listed < 0 ? NULL : Py_NewRef(full_name);
        goto done;
    }
    PyObject *bootstrap = imported(bootstrap_key);
    if (bootstrap == NULL) {
        found = PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
        goto done;
    }
    PyObject *spec = PyObject_CallMethodObjArgs(bootstrap, search_key, full_name, path, NULL);
    if (spec == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ImportError) || PyErr_ExceptionMatches(PyExc_ValueError) ||
            PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            found = Py_NewRef(Py_None);
        }
        goto done;
    }
    found = Py_NewRef(spec == Py_None ? Py_None : full_name);
    Py_DECREF(spec);
done:
    Py_XDECREF(full_name);
    Py_DECREF(path);
    return found;
}

/* declare_alone() with a new entry made of *fields* (stolen, may be NULL:
 * an error already set), then a bool. */
static PyObject *
declare_entry(PyObject *extension, PyObject *module, PyObject *name, PyObject *entry,
              PyObject *factory, PyObject *state_module)
{
    int done = entry == NULL ? -1
                             : declare_alone(extension, module, name, entry, factory, state_module);
    Py_XDECREF(entry);
    Py_DECREF(module);
    return done < 0 ? NULL : PyBool_FromLong(done);
}

PyObject *
native_lazy_alone(PyObject *extension, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyUnicode_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "lazy_alone() takes 4 arguments, the last a str");
        return NULL;
    }
    PyObject *name = args[1], *factory = args[2];
    if (!is_main_interpreter() || !is_declarable(name) ||
        (factory != Py_None && !PyCallable_Check(factory))) {
        Py_RETURN_FALSE;
    }
    if (intern_keys() < 0) {
        return NULL;
    }
    PyObject *module = target_module(args[0]);
    if (module == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    }
    PyObject *submodule = factory == Py_None ? unrun_submodule(module, name) : Py_NewRef(Py_None);
    if (submodule == NULL || (factory == Py_None && submodule == Py_None)) {
        Py_DECREF(module);
        if (submodule == NULL) {
            return NULL;
        }
        Py_DECREF(submodule);
        Py_RETURN_FALSE; /* no such submodule: the full path says so */
    }
    PyObject *entry = Py_BuildValue("(sOOOONO)", "", PyExc_DeprecationWarning, Py_None, Py_None,
                                    submodule, PyLong_FromLong(DECLARED_LAZY), Py_None);
    Py_DECREF(submodule);
    return declare_entry(extension, module, name, entry, factory, args[3]);
}

/* A category the full path accepts: a Warning subclass. */
static int
is_warning_class(PyObject *category)
{
    return PyType_Check(category) &&
           PyType_IsSubtype((PyTypeObject *)category, (PyTypeObject *)PyExc_Warning);
}

static int
is_declared_text(PyObject *text)
{
    return text == Py_None || (PyUnicode_CheckExact(text) && PyUnicode_GET_LENGTH(text) > 0);
}

PyObject *
native_removed_alone(PyObject *extension, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyUnicode_CheckExact(args[5])) {
        PyErr_SetString(PyExc_TypeError, "removed_alone() takes 6 arguments, the last a str");
        return NULL;
    }
    PyObject *name = args[1], *message = args[2], *warning = args[3], *category = args[4];
    if (!is_main_interpreter() || !is_declarable(name) || !is_declared_text(message) ||
        !is_declared_text(warning) || (message == Py_None && warning == Py_None) ||
        !is_warning_class(category)) {
        Py_RETURN_FALSE;
    }
    PyObject *module = target_module(args[0]);
    if (module == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    }
    PyObject *entry = Py_BuildValue("(OOOOONO)", message, category, Py_None, Py_None, Py_None,
                                    PyLong_FromLong(DECLARED_REMOVED), warning);
    return declare_entry(extension, module, name, entry, Py_None, args[5]);
}

/* warn as given, or None where it is warnings.warn itself, which the
 * extension calls anyway (by the same C function, one frame less). */
static PyObject *
own_warn(PyObject *warn)
{
    static PyObject *warnings_key = NULL;
    if (warn == Py_None) {
        return Py_NewRef(Py_None);
    }
    if (warnings_key == NULL && (warnings_key = PyUnicode_InternFromString("warnings")) == NULL) {
        return NULL;
    }
    PyObject *warnings = imported(warnings_key);
    PyObject *standard = warnings == NULL ? NULL : PyObject_GetAttrString(warnings, "warn");
    if (standard == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    PyObject *own = Py_NewRef(warn == standard ? Py_None : warn);
    Py_XDECREF(standard);
    return own;
}

PyObject *
native_deprecated_alone(PyObject *extension, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyUnicode_CheckExact(args[6])) {
        PyErr_SetString(PyExc_TypeError, "deprecated_alone() takes 7 arguments, the last a str");
        return NULL;
    }
    PyObject *name = args[1], *message = args[2], *category = args[3], *warn = args[4];
    /* A name the module holds, with no factory: a lazily deprecated name
     * or a submodule's deprecation is the full path's. */
    if (!is_main_interpreter() || !is_declarable(name) || args[5] != Py_None ||
        !PyUnicode_CheckExact(message) || PyUnicode_GET_LENGTH(message) == 0 ||
        !is_warning_class(category) ||
        (warn != Py_None && !PyCallable_Check(warn))) {
        Py_RETURN_FALSE;
    }
    PyObject *module = target_module(args[0]);
    if (module == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    }
    PyObject *own = own_warn(warn);
    PyObject *entry = own == NULL ? NULL
                                  : Py_BuildValue("(OOOOONO)", message, category, own, Py_None,
                                                  Py_None, PyLong_FromLong(DECLARED_DEPRECATED),
                                                  Py_None);
    Py_XDECREF(own);
    return declare_entry(extension, module, name, entry, Py_None, args[6]);
}
