/* Deprecated module attributes: reads, stores and deletions of the names in
 * a module's deprecation table, a dict {name: (value, message, category)}
 * that the Python side shares with us (set_deprecations()).  The names are
 * not in the module's namespace, so CPython's specialised reads of every
 * other name stay as they are.
 *
 * Reads: while at least one module has a table, ModuleType's read slot is
 * wrapped (deprecated_reads.c); the module's PEP 562 __getattr__ is asked
 * first, then the table, and the warning names the caller's line.
 *
 * Stores and deletions: hooked_setattro() (store.c) sends every store on a
 * module with a table here; a table name warns, leaves the table (a
 * deletion puts its value back in the namespace first), then takes the
 * ordinary store path, and all of that is undone if the store fails. */
#include "native.h"

static PyObject *forget_deprecating(PyObject *self, PyObject *ref);
static PyMethodDef forget_deprecating_def = {"_forget_deprecating", forget_deprecating, METH_O,
                                             NULL};

weak_table deprecations = {NULL, 0, 0, NULL, &forget_deprecating_def};

/* ---- one table entry ---- */

/* Check the entry *item* found for *name*: (value, message: str, category:
 * Warning subclass[, warn: None or a callable]).  Borrowed results (*warn*
 * NULL for None or absent); TypeError if it is anything else. */
static int
unpack_entry(PyObject *name, PyObject *item, PyObject **value, PyObject **message,
             PyObject **category, PyObject **warn)
{
    if (PyTuple_Check(item) &&
        (PyTuple_GET_SIZE(item) == 3 || PyTuple_GET_SIZE(item) == 4)) {
        PyObject *text = PyTuple_GET_ITEM(item, 1);
        PyObject *kind = PyTuple_GET_ITEM(item, 2);
        PyObject *function = PyTuple_GET_SIZE(item) == 4 ? PyTuple_GET_ITEM(item, 3) : Py_None;
        if (PyUnicode_Check(text) && PyType_Check(kind) &&
            PyType_IsSubtype((PyTypeObject *)kind, (PyTypeObject *)PyExc_Warning) &&
            (function == Py_None || PyCallable_Check(function))) {
            *value = PyTuple_GET_ITEM(item, 0);
            *message = text;
            *category = kind;
            *warn = function == Py_None ? NULL : function;
            return 0;
        }
    }
    PyErr_Format(PyExc_TypeError,
                 "the deprecation table entry for %R must be a (value, message, category[, "
                 "warn]) tuple with a str message, a Warning subclass and a callable or None, "
                 "not '%.200s'",
                 name, Py_TYPE(item)->tp_name);
    return -1;
}

int
entry_value(PyObject *name, PyObject *item, PyObject **value)
{
    PyObject *message, *category, *warn;
    return unpack_entry(name, item, value, &message, &category, &warn);
}

int
warn_for_entry(PyObject *name, PyObject *item, PyObject **value)
{
    PyObject *message, *category, *warn;
    if (unpack_entry(name, item, value, &message, &category, &warn) < 0) {
        return -1;
    }
    if (warn == NULL) {
        const char *text = PyUnicode_AsUTF8(message);
        /* No Python frame of ours is on the stack: level 1 is the caller. */
        return text == NULL ? -1 : PyErr_WarnEx(category, text, 1);
    }
    /* Level 2 for a warnings.warn() call in the body of *warn*, whose frame
     * sits right above the caller's.  The item, which the caller holds,
     * keeps the function alive while it runs. */
    PyObject *level = PyLong_FromLong(2);
    if (level == NULL) {
        return -1;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(warn, message, category, level, NULL);
    Py_DECREF(level);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* ---- markers stored through a module ---- */

PyTypeObject *marker_type = NULL;
/* pep726hook._deprecation.stored_through (a strong reference). */
static PyObject *adopt_markers = NULL;

int
watch_markers(PyObject *type, PyObject *adopt)
{
    if (!PyType_Check(type) || !PyCallable_Check(adopt)) {
        PyErr_SetString(PyExc_TypeError, "watch_markers() needs a class and a callable");
        return -1;
    }
    if (!is_main_interpreter()) {
        /* The slot is process-wide; another interpreter's objects stay out. */
        return 0;
    }
    Py_INCREF(type);
    Py_INCREF(adopt);
    PyObject *old_type = (PyObject *)marker_type, *old_adopt = adopt_markers;
    marker_type = (PyTypeObject *)type;
    adopt_markers = adopt;
    Py_XDECREF(old_type);
    Py_XDECREF(old_adopt);
    return 0;
}

void
forget_markers(int release)
{
    PyObject *old_type = (PyObject *)marker_type, *old_adopt = adopt_markers;
    marker_type = NULL;
    adopt_markers = NULL;
    if (release) {
        Py_XDECREF(old_type);
        Py_XDECREF(old_adopt);
    }
}

int
check_marker_store(PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        return 0;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(name);
    if (length > 4 && is_dunder_name(name) && PyUnicode_READ_CHAR(name, length - 1) == '_' &&
        PyUnicode_READ_CHAR(name, length - 2) == '_') {
        PyErr_Format(PyExc_ValueError,
                     "storing a pep726hook.deprecated() value: %R cannot be deprecated: the "
                     "interpreter and the import system read dunder names themselves",
                     name);
        return -1;
    }
    return 0;
}

int
is_spec_name(PyObject *name)
{
    return PyUnicode_Check(name) && is_dunder_name(name) &&
           PyUnicode_CompareWithASCIIString(name, "__spec__") == 0;
}

int
report_store(PyObject *module, PyObject *name)
{
    PyObject *adopt = adopt_markers;
    if (adopt == NULL) {
        return 0;
    }
    Py_INCREF(adopt);
    PyObject *result = PyObject_CallFunctionObjArgs(adopt, module, name, NULL);
    Py_DECREF(adopt);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* ---- the table of tables ---- */

/* The weak references' callback: the module is being deallocated. */
static PyObject *
forget_deprecating(PyObject *self, PyObject *ref)
{
    (void)self;
    weak_table_forget_ref(&deprecations, ref);
    release_getattro_wrapper();
    Py_RETURN_NONE;
}

int
set_module_deprecations(PyObject *module, PyObject *table)
{
    if (table == NULL || PyDict_GET_SIZE(table) == 0) {
        (void)weak_table_remove(&deprecations, module);
        release_getattro_wrapper();
        return 0;
    }
    if (wrap_getattro() < 0) {
        return -1;
    }
    if (weak_table_set(&deprecations, module, table) < 0) {
        release_getattro_wrapper();
        return -1;
    }
    /* Its class may be a subclass created since the wrap (give_wrapper_to). */
    return give_wrapper_to(Py_TYPE(module));
}

Py_ssize_t
deprecating_count(void)
{
    Py_ssize_t count = 0;
    for (size_t i = 0; i < deprecations.capacity; i++) {
        PyObject *table = deprecations.entries[i].value;
        if (table != NULL && PyDict_GET_SIZE(table) > 0) {
            count++;
        }
    }
    return count;
}

void
forget_all_deprecations(int release)
{
    weak_table_clear(&deprecations, release);
    if (!release) {
        unwrap_getattro(0);
        /* It belonged to the finished runtime (before 3.12 it was mortal). */
        getattr_key = NULL;
    }
    else {
        release_getattro_wrapper();
    }
}

/* ---- stores and deletions ---- */

/* Remove *name* from *table* if its entry is still *item* (another access
 * may have ended the deprecation, or deprecated the name anew). */
static int
remove_entry(PyObject *table, PyObject *name, PyObject *item)
{
    PyObject *current = PyDict_GetItemWithError(table, name);
    if (current == item) {
        return PyDict_DelItem(table, name);
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* The table name whose store or deletion deprecated_change() is making:
 * the same store made again through the slot meanwhile (a hook calling
 * ModuleType.__setattr__) is the ordinary one, and does not warn twice. */
static PyObject *changing_module = NULL;
static PyObject *changing_name = NULL;

static int
is_changing(PyObject *module, PyObject *name)
{
    return module == changing_module && changing_name != NULL &&
           PyUnicode_Compare(name, changing_name) == 0;
}

/* ordinary_setattro() with *name* marked as changing. */
static int
change_ordinarily(PyObject *module, PyObject *name, PyObject *value)
{
    PyObject *outer_module = changing_module, *outer_name = changing_name;
    changing_module = module;
    changing_name = name;
    int result = ordinary_setattro(module, name, value);
    changing_module = outer_module;
    changing_name = outer_name;
    return result;
}

/* The store (*value*) or deletion (NULL) of table name *name*, whose entry
 * *item* the caller holds: warn, then the ordinary store or deletion, and
 * only once that succeeded does the deprecation end.  Meanwhile a reader in
 * another thread finds the name in the namespace (the new value, or the
 * old one put back for the deletion) or in the table (the old value), never
 * in neither; a failure leaves the table as it was. */
static int
deprecated_change(PyObject *module, PyObject *table, PyObject *name, PyObject *item,
                  PyObject *value)
{
    PyObject *old;
    if (warn_for_entry(name, item, &old) < 0) {
        return -1;
    }
    PyObject *namespace = NULL;
    int restored = 0;
    if (value == NULL) {
        /* What a deletion deletes (a hook's `del globals()[name]`): the
         * value, back in the namespace. */
        namespace = PyModule_GetDict(module);
        PyObject *there = namespace == NULL ? NULL : PyDict_SetDefault(namespace, name, old);
        if (there == NULL) {
            return -1;
        }
        restored = there == old;
    }
    if (change_ordinarily(module, name, value) == 0) {
        /* Another thread may have stored meanwhile and ended it. */
        return remove_entry(table, name, item);
    }
    if (restored) {
        PyObject *type, *error, *tb;
        PyErr_Fetch(&type, &error, &tb);
        if (PyDict_GetItemWithError(namespace, name) == old &&
            PyDict_DelItem(namespace, name) < 0) {
            PyErr_Clear();
        }
        PyErr_Clear();
        PyErr_Restore(type, error, tb);
    }
    return -1;
}

int
deprecated_setattro(PyObject *module, PyObject *name, PyObject *value)
{
    weak_entry *entry = weak_table_find(&deprecations, module);
    if (entry == NULL || !PyUnicode_Check(name) || is_changing(module, name)) {
        return ordinary_setattro(module, name, value);
    }
    PyObject *table = entry->value;
    Py_INCREF(table);
    PyObject *item = PyDict_GetItemWithError(table, name);
    if (item == NULL) {
        Py_DECREF(table);
        if (PyErr_Occurred() || ordinary_setattro(module, name, value) < 0) {
            return -1;
        }
        /* `module.__class__ = Own`, Own created since the read slot was
         * wrapped: give Own the wrapper, or the table would be out of reach. */
        if (value != NULL && PyUnicode_CompareWithASCIIString(name, "__class__") == 0) {
            return give_wrapper_to(Py_TYPE(module));
        }
        return 0;
    }
    Py_INCREF(item);
    int result = deprecated_change(module, table, name, item, value);
    Py_DECREF(item);
    Py_DECREF(table);
    return result;
}
