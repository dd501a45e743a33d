/* Deprecated module attributes: reads, stores and deletions of the names in
 * a module's deprecation table, a dict {name: (value, message, category)}
 * that the Python side shares with us (set_deprecations()).  The names are
 * not in the module's namespace, so CPython's specialised reads of every
 * other name stay as they are.
 *
 * Reads: while at least one module has a table, ModuleType's tp_getattro is
 * deprecating_getattro(), which calls the original slot and returns what it
 * returns; only when that fails with AttributeError (after the module's PEP
 * 562 __getattr__, which the original slot runs) is the module looked up in
 * the table of tables, then the name.  A found name warns from C with
 * stacklevel 1: no Python frame of ours is on the stack, so the warning
 * names the caller's line.
 *
 * Stores and deletions: hooked_setattro() (store.c) sends every store on a
 * module with a table here; a table name warns, leaves the table (a
 * deletion puts its value back in the namespace first), then takes the
 * ordinary store path, and all of that is undone if the store fails. */
#include "native.h"
#if !HAS_FRAME_ACCESSORS
/* 3.8's frame struct (f_code). */
#  include <frameobject.h>
#endif

static PyObject *forget_deprecating(PyObject *self, PyObject *ref);
static PyMethodDef forget_deprecating_def = {"_forget_deprecating", forget_deprecating, METH_O,
                                             NULL};

weak_table deprecations = {NULL, 0, 0, NULL, &forget_deprecating_def};

/* ModuleType's own read slot, captured when first wrapped and never cleared:
 * a subclass readied meanwhile may still call deprecating_getattro(). */
static getattrofunc original_getattro = NULL;
static int getattro_wrapped = 0;

/* ---- one table entry ---- */

/* Check the entry *item* found for *name*: (value, message: str, category:
 * Warning subclass).  Borrowed results; TypeError if it is anything else. */
static int
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

/* Whether *code* is importlib's _handle_fromlist, frozen or from source. */
static int
is_handle_fromlist(PyCodeObject *code)
{
    if (!PyUnicode_Check(code->co_name) || !PyUnicode_Check(code->co_filename) ||
        PyUnicode_CompareWithASCIIString(code->co_name, "_handle_fromlist") != 0) {
        return 0;
    }
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    if (file == NULL) {
        PyErr_Clear();
        return 0;
    }
    static const char suffix[] = "_bootstrap.py";
    size_t length = strlen(file), suffix_length = sizeof(suffix) - 1;
    return strcmp(file, "<frozen importlib._bootstrap>") == 0 ||
           (length >= suffix_length && strcmp(file + length - suffix_length, suffix) == 0);
}

/* Whether this read is the hasattr(package, name) probe that the import
 * system's _handle_fromlist makes for `from package import name` before the
 * user's own IMPORT_FROM reads the name: only that read may warn. */
static int
is_fromlist_probe(void)
{
#if HAS_FRAME_ACCESSORS
    PyFrameObject *frame = PyThreadState_GetFrame(PyThreadState_Get());
    if (frame == NULL) {
        return 0;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
    Py_DECREF(frame);
#else
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame == NULL) {
        return 0;
    }
    PyCodeObject *code = frame->f_code;
    Py_INCREF(code);
#endif
    int probe = is_handle_fromlist(code);
    Py_DECREF(code);
    return probe;
}

/* ---- reads ---- */

/* Interned "__getattr__", made with the first table, kept for the runtime. */
static PyObject *getattr_key = NULL;

/* The read of table name *name*, whose entry *item* the caller holds: warn
 * (unless this is the import system's probe) and return the value. */
static PyObject *
serve_entry(PyObject *name, PyObject *item)
{
    PyObject *found, *category;
    const char *message;
    if (unpack_entry(name, item, &found, &message, &category) < 0 ||
        (!is_fromlist_probe() && PyErr_WarnEx(category, message, 1) < 0)) {
        return NULL;
    }
    /* The entry, which the caller holds, kept it alive through the warning. */
    Py_INCREF(found);
    return found;
}

/* The entry for *name* in *module*'s table (new reference), NULL if none
 * (or with an exception: a key's __eq__ may raise, or change the tables,
 * which is why the table is held meanwhile). */
static PyObject *
find_entry(weak_entry *entry, PyObject *name)
{
    PyObject *table = entry->value;
    Py_INCREF(table);
    PyObject *item = PyUnicode_Check(name) ? PyDict_GetItemWithError(table, name) : NULL;
    Py_XINCREF(item);
    Py_DECREF(table);
    return item;
}

/* The original slot failed with *module*, which has a table, and *item*
 * (held, or NULL) is the entry for *name*: a table name is read with a
 * warning, anything else fails as it did. */
static PyObject *
read_after_miss(PyObject *name, PyObject *item)
{
    if (item == NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return NULL;
    }
    PyErr_Clear();
    return serve_entry(name, item);
}

#if DEPRECATION_NAME_FIRST
/* A read on a module with a table.  The module's specialised reads never get
 * here; the others pay one dict lookup first.  A table name is served
 * without the original slot's miss (which formats an AttributeError, about
 * two thirds of the cost of such a read) when nothing could answer before
 * the table: an exact module (no class attributes), a non-dunder name,
 * no such key in the namespace, no PEP 562 __getattr__. */
static Py_NO_INLINE PyObject *
deprecating_module_getattro(weak_entry *entry, PyObject *self, PyObject *name)
{
    PyObject *item = find_entry(entry, name);
    if (item == NULL) {
        return PyErr_Occurred() ? NULL : original_getattro(self, name);
    }
    PyObject *result;
    int direct = 0;
    PyObject *dict = Py_TYPE(self) == &PyModule_Type && !is_dunder_name(name)
                         ? PyModule_GetDict(self)
                         : NULL;
    if (dict != NULL) {
        direct = PyDict_Contains(dict, name);
        if (direct == 0) {
            direct = PyDict_Contains(dict, getattr_key);
        }
        direct = direct < 0 ? -1 : !direct;
    }
    if (direct < 0) {
        result = NULL;
    }
    else if (direct) {
        result = serve_entry(name, item);
    }
    else {
        result = original_getattro(self, name);
        if (result == NULL) {
            result = read_after_miss(name, item);
        }
    }
    Py_DECREF(item);
    return result;
}

/* ModuleType's read slot while a module has a table.  A read on any other
 * module costs one probe of the table of tables; specialised reads (3.11+)
 * never call the slot. */
static PyObject *
deprecating_getattro(PyObject *self, PyObject *name)
{
    weak_entry *entry = weak_table_find(&deprecations, self);
    if (entry != NULL) {
        return deprecating_module_getattro(entry, self, name);
    }
    return original_getattro(self, name);
}
#else
/* The original slot failed: look for a table. */
static Py_NO_INLINE PyObject *
deprecated_read(PyObject *self, PyObject *name)
{
    weak_entry *entry = weak_table_find(&deprecations, self);
    if (entry == NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return NULL;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *item = find_entry(entry, name);
    if (item == NULL && !PyErr_Occurred()) {
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (item == NULL) {
        return NULL;
    }
    PyObject *result = serve_entry(name, item);
    Py_DECREF(item);
    return result;
}

/* ModuleType's read slot while a module has a table.  Every read of a
 * module calls the slot before 3.11, so a hit costs only the call of the
 * original slot and a NULL check. */
static PyObject *
deprecating_getattro(PyObject *self, PyObject *name)
{
    PyObject *result = original_getattro(self, name);
    if (result == NULL) {
        return deprecated_read(self, name);
    }
    return result;
}
#endif

/* Put the wrapper into ModuleType's slot and that of its subclasses still on
 * the original (they copied it when created). */
static int
wrap_getattro(void)
{
    if (getattro_wrapped) {
        return 0;
    }
    if (original_getattro == NULL) {
        original_getattro = PyModule_Type.tp_getattro;
    }
    if (PyModule_Type.tp_getattro != original_getattro) {
        PyErr_SetString(PyExc_RuntimeError,
                        "ModuleType's attribute read slot was replaced by something other "
                        "than pep726hook");
        return -1;
    }
    if (repoint_getattro_subclasses(&PyModule_Type, original_getattro, deprecating_getattro) <
        0) {
        return -1;
    }
    PyModule_Type.tp_getattro = deprecating_getattro;
    getattro_wrapped = 1;
    PyType_Modified(&PyModule_Type);
    return 0;
}

/* Take the wrapper out again.  *release* is 0 when the runtime is gone:
 * then no object (no subclass) is touched.  Never raises. */
static void
unwrap_getattro(int release)
{
    if (!getattro_wrapped) {
        return;
    }
    PyModule_Type.tp_getattro = original_getattro;
    getattro_wrapped = 0;
    if (!release) {
        return;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    /* A subclass left on the wrapper still reads correctly: it calls the
     * original and finds no table. */
    if (repoint_getattro_subclasses(&PyModule_Type, deprecating_getattro, original_getattro) <
        0) {
        PyErr_Clear();
    }
    PyType_Modified(&PyModule_Type);
    PyErr_Restore(type, value, tb);
}

int
getattro_is_wrapped(void)
{
    return getattro_wrapped;
}

/* ---- the table of tables ---- */

/* The weak references' callback: the module is being deallocated. */
static PyObject *
forget_deprecating(PyObject *self, PyObject *ref)
{
    (void)self;
    weak_table_forget_ref(&deprecations, ref);
    if (deprecations.count == 0) {
        unwrap_getattro(1);
    }
    Py_RETURN_NONE;
}

int
set_module_deprecations(PyObject *module, PyObject *table)
{
    if (table == NULL || PyDict_GET_SIZE(table) == 0) {
        (void)weak_table_remove(&deprecations, module);
        if (deprecations.count == 0) {
            unwrap_getattro(1);
        }
        return 0;
    }
    if (getattr_key == NULL) {
        getattr_key = PyUnicode_InternFromString("__getattr__");
        if (getattr_key == NULL) {
            return -1;
        }
    }
    if (wrap_getattro() < 0) {
        return -1;
    }
    if (weak_table_set(&deprecations, module, table) < 0) {
        if (deprecations.count == 0) {
            unwrap_getattro(1);
        }
        return -1;
    }
    return 0;
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
    unwrap_getattro(release);
    if (!release) {
        /* It belonged to the finished runtime (before 3.12 it was mortal). */
        getattr_key = NULL;
    }
    weak_table_clear(&deprecations, release);
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
        return PyErr_Occurred() ? -1 : ordinary_setattro(module, name, value);
    }
    Py_INCREF(item);
    int result = deprecated_change(module, table, name, item, value);
    Py_DECREF(item);
    Py_DECREF(table);
    return result;
}
