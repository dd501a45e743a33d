/* Reads of deprecated module attributes: ModuleType's read slot wrapper,
 * in place while a module has a deprecation table (deprecations.c holds the
 * tables and handles stores and deletions).
 *
 * Before 3.11 every read of a module calls the slot, so the wrapper does
 * the original's generic lookup itself with AttributeError suppressed and
 * looks at the table only after a miss.  From 3.11 on a module's reads are
 * specialised and never call the slot, so the wrapper may spend a probe of
 * the table of tables on the others; on a deprecating module, a name already
 * served from the table skips the original slot's miss (about two thirds of
 * the cost of such a read).  Either way the module's PEP 562 __getattr__ is
 * asked before the table, and the warning is raised from C with stacklevel
 * 1: no Python frame of ours is on the stack, so it names the caller's
 * line. */
#include "native.h"
#if !HAS_FRAME_ACCESSORS
/* 3.8's frame struct (f_code). */
#  include <frameobject.h>
#endif

/* ModuleType's own read slot, captured when first wrapped and never cleared:
 * a subclass readied meanwhile may still call deprecating_getattro(). */
static getattrofunc original_getattro = NULL;
static int getattro_wrapped = 0;

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
PyObject *getattr_key = NULL;

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

#if DEPRECATION_NAME_FIRST
/* Bits of the addresses of the name objects read from a table (the
 * interned constants of the lines that read deprecated names), so that
 * those lines skip the original slot's miss from their second read on.
 * Only ever a superset: another name whose bit is set costs a table lookup
 * before the original slot. */
static uint64_t served_names = 0;

static inline uint64_t
name_bit(PyObject *name)
{
    uintptr_t address = (uintptr_t)name;
    return (uint64_t)1 << (((address >> 4) ^ (address >> 10)) & 63);
}
#endif

/* The original slot failed: a name in the module's table is served, any
 * other miss fails as it did. */
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
#if DEPRECATION_NAME_FIRST
    if (result != NULL) {
        served_names |= name_bit(name);
    }
#endif
    return result;
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

#if DEPRECATION_NAME_FIRST
/* ModuleType's read slot while a module has a table.  A read on any other
 * module costs one probe of the table of tables; specialised reads (3.11+)
 * never call the slot. */
/* A read on a module with a table: a name served before from this line
 * (or one sharing its bit) is looked up in the table first; any other
 * reads the original slot, and the table after its miss. */
static Py_NO_INLINE PyObject *
deprecating_module_read(weak_entry *entry, PyObject *self, PyObject *name)
{
    if (served_names & name_bit(name)) {
        return deprecating_module_getattro(entry, self, name);
    }
    PyObject *result = original_getattro(self, name);
    if (result == NULL) {
        return deprecated_read(self, name);
    }
    return result;
}

#if RELOCATE_GETATTR
/* A read on an opted-in module whose PEP 562 __getattr__ pep726hook holds
 * (3.11-3.14), with CPython's order: the namespace and the class, then the
 * function, for and only for a missing name, then the deprecation table.
 * Only reads the specialiser leaves to the slot get here: getattr(),
 * hasattr(), `from m import x`, first executions of a line, misses. */
static Py_NO_INLINE PyObject *
relocating_module_read(weak_entry *opted, PyObject *self, PyObject *name)
{
    int error = 0;
    /* A __getattr__ back in the namespace (globals(), reload()) wins and
     * moves out again, so that the next reads specialise. */
    if (namespace_needs_look(opted)) {
        (void)relocated_getattr(self, &error);
        if (error) {
            return NULL;
        }
    }
    PyObject *result;
    int exact = Py_TYPE(self) == &PyModule_Type;
    if (exact) {
        /* ModuleType and object have no getter of user code to run twice:
         * look the name up with AttributeError suppressed, as CPython's own
         * PEP 562 path does, so that a miss formats no message. */
        result = _PyObject_GenericGetAttrWithDict(self, name, NULL, 1);
        if (result != NULL || PyErr_Occurred()) {
            return result;
        }
    }
    else {
        /* A subclass's property runs once: in the original slot, which
         * finds no __getattr__ in the namespace and fails as CPython does. */
        result = original_getattro(self, name);
        if (result != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return result;
        }
    }
    /* The lookup may have run code (a descriptor, a key's __eq__). */
    PyObject *type = NULL, *value = NULL, *tb = NULL;
    if (!exact) {
        PyErr_Fetch(&type, &value, &tb);
    }
    opted = weak_table_find(&opt_ins, self);
    PyObject *function = NULL;
    if (opted != NULL && namespace_needs_look(opted)) {
        function = relocated_getattr(self, &error);
    }
    else if (opted != NULL && opted->value != relocation_marker) {
        function = opted->value;
    }
    if (error) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    if (!exact && function == NULL) {
        PyErr_Restore(type, value, tb);
    }
    if (function == NULL) {
        weak_entry *entry = weak_table_find(&deprecations, self);
        if (exact) {
            if (entry != NULL) {
                PyObject *item = find_entry(entry, name);
                if (item != NULL) {
                    result = serve_entry(name, item);
                    Py_DECREF(item);
                    return result;
                }
                if (PyErr_Occurred()) {
                    return NULL;
                }
            }
            /* CPython's own message (circular import, submodule, none). */
            return original_getattro(self, name);
        }
        return entry != NULL ? deprecated_read(self, name) : NULL;
    }
    /* Held first: dropping the subclass's error may run code, and the
     * function may replace or delete itself while it runs. */
    Py_INCREF(function);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (is_getattr_name(name)) {
        /* `m.__getattr__` reads the function, as from the namespace. */
        return function;
    }
    result = PyObject_CallOneArg(function, name);
    Py_DECREF(function);
    if (result == NULL && deprecations.count != 0) {
        /* The table (if the module has one) after its AttributeError. */
        return deprecated_read(self, name);
    }
    return result;
}
#endif

static PyObject *
deprecating_getattro(PyObject *self, PyObject *name)
{
#if RELOCATE_GETATTR
    if (relocating_count != 0) {
        weak_entry *opted = weak_table_find(&opt_ins, self);
        if (opted != NULL && opted->value != NULL) {
            return relocating_module_read(opted, self, name);
        }
    }
#endif
    weak_entry *entry = weak_table_find(&deprecations, self);
    if (entry != NULL) {
        return deprecating_module_read(entry, self, name);
    }
    return original_getattro(self, name);
}
#else
/* Before 3.11 every module read calls the slot.  The wrapper does the
 * original's first step itself, the generic lookup, with AttributeError
 * suppressed (_PyObject_GenericGetAttrWithDict: exported by 3.8-3.10, whose
 * C API no longer changes), so that a hit costs what it costs the original,
 * and a miss on a deprecating module is served from the table without the
 * original's miss path, which formats up to three AttributeErrors (its
 * lookup's, the module spec's _initializing probe's, and "module ... has no
 * attribute"): more than a PEP 562 __getattr__ costs.  Any other miss runs
 * the original slot whole (PEP 562 __getattr__, CPython's own messages),
 * which repeats the generic lookup, without its exception. */
static Py_NO_INLINE PyObject *
read_after_suppressed_miss(PyObject *self, PyObject *name)
{
    if (PyErr_Occurred()) {
        return NULL;
    }
    weak_entry *entry = weak_table_find(&deprecations, self);
    if (entry != NULL) {
        return deprecating_module_getattro(entry, self, name);
    }
    return original_getattro(self, name);
}

static PyObject *
deprecating_getattro(PyObject *self, PyObject *name)
{
    if (Py_TYPE(self) != &PyModule_Type) {
        /* A subclass's property must run once per read: the original slot
         * first, the table after its miss (the suppressed lookup below and
         * then the original's would call a getter that raises
         * AttributeError twice). */
        PyObject *result = original_getattro(self, name);
        if (result == NULL) {
            return deprecated_read(self, name);
        }
        return result;
    }
    PyObject *result = _PyObject_GenericGetAttrWithDict(self, name, NULL, 1);
    if (result != NULL) {
        return result;
    }
    return read_after_suppressed_miss(self, name);
}
#endif

/* Put the wrapper into ModuleType's slot and that of its subclasses still on
 * the original (they copied it when created). */
int
wrap_getattro(void)
{
    if (getattro_wrapped) {
        return 0;
    }
    if (getattr_key == NULL) {
        getattr_key = PyUnicode_InternFromString("__getattr__");
        if (getattr_key == NULL) {
            return -1;
        }
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
void
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

/* A ModuleType subclass created after the wrap got the original slot:
 * CPython's slot fix-up (update_one_slot in Objects/typeobject.c) takes the
 * function that ModuleType.__getattribute__ wraps, which is the original.
 * Point *type* and its subclasses at the wrapper, so that a deprecating
 * module given such a class (`module.__class__ = Own`) still reaches its
 * table.  A class with a Python __getattr__/__getattribute__ has the
 * interpreter's own slot function and is left alone. */
int
give_wrapper_to(PyTypeObject *type)
{
    if (!getattro_wrapped || !PyType_IsSubtype(type, &PyModule_Type)) {
        return 0;
    }
    if (type->tp_getattro == original_getattro) {
        type->tp_getattro = deprecating_getattro;
    }
    return repoint_getattro_subclasses(type, original_getattro, deprecating_getattro);
}

void
release_getattro_wrapper(void)
{
    if (deprecations.count == 0 && relocating_count == 0) {
        unwrap_getattro(1);
    }
}

int
reads_through_wrapper(PyTypeObject *type)
{
    return getattro_wrapped && type->tp_getattro == deprecating_getattro;
}

int
getattro_is_wrapped(void)
{
    return getattro_wrapped;
}
