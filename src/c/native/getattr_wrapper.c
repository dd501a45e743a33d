/* ModuleType's read slot wrapper, 3.11-3.14: in place while an opted-in
 * module's PEP 562 __getattr__ is held outside its namespace
 * (relocated_getattr.c), so that the specialiser specialises reads of the
 * module's names; the wrapper calls the held function on a miss.  Only
 * reads the specialiser leaves to the slot get here.  Deprecated attributes
 * need no wrapper: a module with deprecated names gets a Python class of
 * its own (pep726hook._deprecations). */
#include "native.h"

/* ModuleType's own read slot, captured when first wrapped and never cleared:
 * a subclass readied meanwhile may still call relocating_getattro(). */
static getattrofunc original_getattro = NULL;
static int getattro_wrapped = 0;

/* Interned "__getattr__", made with the first wrap, kept for the runtime. */
PyObject *getattr_key = NULL;

#if RELOCATE_GETATTR
/* A read on an opted-in module whose PEP 562 __getattr__ pep726hook holds
 * (3.11-3.14), with CPython's order: the namespace and the class, then the
 * function, for and only for a missing name.
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
        /* CPython's own message (circular import, submodule, none); a
         * subclass's error is back in place.  A removed name's warning was
         * given by the lookup above. */
        return exact ? read_again_without_warning(original_getattro, self, name) : NULL;
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
    return result;
}

static PyObject *
relocating_getattro(PyObject *self, PyObject *name)
{
    if (relocating_count != 0) {
        weak_entry *opted = weak_table_find(&opt_ins, self);
        if (opted != NULL && opted->value != NULL) {
            return relocating_module_read(opted, self, name);
        }
    }
    return original_getattro(self, name);
}
#else
/* Never put in place: no __getattr__ is relocated on these versions. */
static PyObject *
relocating_getattro(PyObject *self, PyObject *name)
{
    return original_getattro(self, name);
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
    if (repoint_getattro_subclasses(&PyModule_Type, original_getattro, relocating_getattro) <
        0) {
        return -1;
    }
    PyModule_Type.tp_getattro = relocating_getattro;
    getattro_wrapped = 1;
    forget_module_type_lookups();
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
     * original and finds no held function. */
    if (repoint_getattro_subclasses(&PyModule_Type, relocating_getattro, original_getattro) <
        0) {
        PyErr_Clear();
    }
    forget_module_type_lookups();
    PyErr_Restore(type, value, tb);
}

/* A ModuleType subclass created after the wrap got the original slot:
 * CPython's slot fix-up (update_one_slot in Objects/typeobject.c) takes the
 * function that ModuleType.__getattribute__ wraps, which is the original.
 * Point *type* and its subclasses at the wrapper, so that an opted-in
 * module given such a class (`module.__class__ = Own`) still reaches its
 * held __getattr__.  A class with a Python __getattr__/__getattribute__ has the
 * interpreter's own slot function and is left alone. */
int
give_wrapper_to(PyTypeObject *type)
{
    if (!getattro_wrapped || !PyType_IsSubtype(type, &PyModule_Type)) {
        return 0;
    }
    if (type->tp_getattro == original_getattro) {
        type->tp_getattro = relocating_getattro;
    }
    return repoint_getattro_subclasses(type, original_getattro, relocating_getattro);
}

void
release_getattro_wrapper(void)
{
    if (relocating_count == 0) {
        unwrap_getattro(1);
    }
}

int
reads_through_wrapper(PyTypeObject *type)
{
    return getattro_wrapped && type->tp_getattro == relocating_getattro;
}

int
getattro_is_wrapped(void)
{
    return getattro_wrapped;
}

void
forget_getattro_wrapper(int release)
{
    if (!release) {
        unwrap_getattro(0);
        /* It belonged to the finished runtime (before 3.12 it was mortal). */
        getattr_key = NULL;
    }
    else {
        release_getattro_wrapper();
    }
}
