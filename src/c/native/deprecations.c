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
 * Warning subclass).  Borrowed results; TypeError if it is anything else. */
int
unpack_entry(PyObject *name, PyObject *item, PyObject **value, const char **message,
             PyObject **category)
{
    if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3) {
        PyObject *text = PyTuple_GET_ITEM(item, 1);
        PyObject *kind = PyTuple_GET_ITEM(item, 2);
        if (PyUnicode_Check(text) && PyType_Check(kind) &&
            PyType_IsSubtype((PyTypeObject *)kind, (PyTypeObject *)PyExc_Warning)) {
            *message = PyUnicode_AsUTF8(text);
            if (*message == NULL) {
                return -1;
            }
            *value = PyTuple_GET_ITEM(item, 0);
            *category = kind;
            return 0;
        }
    }
    PyErr_Format(PyExc_TypeError,
                 "the deprecation table entry for %R must be a (value, message, category) "
                 "tuple with a str message and a Warning subclass, not '%.200s'",
                 name, Py_TYPE(item)->tp_name);
    return -1;
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

/* Remove *name* from *table* if it is there: 1 if removed, 0 if absent. */
static int
remove_name(PyObject *table, PyObject *name)
{
    if (PyDict_DelItem(table, name) == 0) {
        return 1;
    }
    if (PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

/* The store (*value*) or deletion (NULL) of table name *name*, whose entry
 * *item* the caller holds. */
static int
deprecated_change(PyObject *module, PyObject *table, PyObject *name, PyObject *item,
                  PyObject *value)
{
    PyObject *old, *category;
    const char *message;
    if (unpack_entry(name, item, &old, &message, &category) < 0 ||
        PyErr_WarnEx(category, message, 1) < 0) {
        return -1;
    }
    /* The deprecation ends (code run by the warning may have ended it). */
    int removed = remove_name(table, name);
    if (removed < 0) {
        return -1;
    }
    PyObject *namespace = NULL;
    if (value == NULL) {
        /* What a deletion deletes: the value, back in the namespace. */
        namespace = PyModule_GetDict(module);
        if (namespace == NULL || PyDict_SetItem(namespace, name, old) < 0) {
            namespace = NULL;
            goto undo;
        }
    }
    if (ordinary_setattro(module, name, value) == 0) {
        return 0;
    }
undo:;
    PyObject *type, *error, *tb;
    PyErr_Fetch(&type, &error, &tb);
    if (namespace != NULL && PyDict_GetItemWithError(namespace, name) == old &&
        PyDict_DelItem(namespace, name) < 0) {
        PyErr_Clear();
    }
    if (removed && PyDict_SetItem(table, name, item) < 0) {
        PyErr_Clear();
    }
    PyErr_Clear();
    PyErr_Restore(type, error, tb);
    return -1;
}

int
deprecated_setattro(PyObject *module, PyObject *name, PyObject *value)
{
    weak_entry *entry = weak_table_find(&deprecations, module);
    if (entry == NULL || !PyUnicode_Check(name)) {
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
