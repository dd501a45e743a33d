/* The AttributeError a read raises on a module that misses a name some
 * other module declares (deprecated, lazy or removed).
 *
 * The name's descriptor sits in ModuleType's dict (deprecated_descriptor.c),
 * so every module's miss of it calls the descriptor.  It raises what the
 * generic lookup raises for a name nobody declares; CPython's module lookup
 * clears that error and formats its own message (after the module's PEP 562
 * __getattr__), so only a direct object.__getattribute__(module, name)
 * shows it.  What it costs is what matters: see the reuse below. */
#include "native.h"

/* From 3.10 on, a miss's AttributeError made once is raised again by later
 * misses while nothing has held or changed it; on free-threaded builds,
 * where two threads could share it, neither it nor its message is kept. */
#if PY_VERSION_HEX >= 0x030A0000 && !defined(Py_GIL_DISABLED)
#  define REUSE_MISS_ERROR 1
#else
#  define REUSE_MISS_ERROR 0
#endif

#if REUSE_MISS_ERROR
/* Whether *error*, the AttributeError that a miss of *name* raised
 * before, is as it was made: nobody else holds it, and nothing was attached
 * to it (a traceback, a context, notes, the object the interpreter adds when
 * it reaches Python code).  Only such an error is raised again. */
static int
is_pristine_miss(PyObject *error, PyObject *name, PyObject *message)
{
    PyAttributeErrorObject *exc = (PyAttributeErrorObject *)error;
    return Py_REFCNT(error) == 1 && exc->dict == NULL &&
#  if PY_VERSION_HEX >= 0x030B0000
           exc->notes == NULL &&
#  endif
           exc->traceback == NULL && exc->context == NULL && exc->cause == NULL &&
           !exc->suppress_context && exc->obj == NULL && exc->name == name &&
           exc->args != NULL && PyTuple_CheckExact(exc->args) &&
           PyTuple_GET_SIZE(exc->args) == 1 &&
           PyTuple_GET_ITEM(exc->args, 0) == message;
}
#endif

/* An AttributeError for a miss of *name* on *obj*, as the generic lookup
 * (`object.__getattribute__`) makes it: its message, and from 3.10 on the
 * name and, unless *obj* is NULL, the object.  A new reference. */
static PyObject *
new_miss_error(PyObject *message, PyObject *name, PyObject *obj)
{
    PyObject *error = PyObject_CallFunctionObjArgs(PyExc_AttributeError, message, NULL);
#if PY_VERSION_HEX >= 0x030A0000
    if (error != NULL) {
        PyAttributeErrorObject *exc = (PyAttributeErrorObject *)error;
        Py_INCREF(name);
        Py_XSETREF(exc->name, name);
        Py_XINCREF(obj);
        Py_XSETREF(exc->obj, obj);
    }
#else
    (void)name;
    (void)obj;
#endif
    return error;
}

/* Raise *error* (a new reference, stolen) as it is, with no context added. */
static void
raise_miss_error(PyObject *error)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(error);
#else
    PyObject *type = (PyObject *)Py_TYPE(error);
    Py_INCREF(type);
    PyErr_Restore(type, error, NULL);
#endif
}

PyObject *
raise_declared_name_miss(PyObject *obj, PyObject *name, PyObject **kept_error,
                         PyObject **kept_message)
{
    /* Neither is kept on free-threaded builds, the error not before 3.10. */
    (void)kept_error;
    (void)kept_message;
    if (Py_TYPE(obj) == &PyModule_Type) {
        /* Cleared by the module's own lookup, which formats its own
         * message, before any code could see it; only a direct
         * object.__getattribute__(module, name) shows it.  From 3.12 on a
         * plain module's suppressed miss (hasattr(), getattr() with a
         * default) makes no exception at all; so that a miss of a name
         * some other module declares costs about as much, its message is
         * made once and the error made by the last miss is raised again
         * when nothing has held or changed it since.  Such an error names
         * no object: holding the last module that missed would keep it
         * alive. */
#if !defined(Py_GIL_DISABLED)
#  if REUSE_MISS_ERROR
        PyObject *error = *kept_error;
        if (error != NULL && is_pristine_miss(error, name, *kept_message)) {
            Py_INCREF(error);
            raise_miss_error(error);
            return NULL;
        }
#  endif
        if (*kept_message == NULL) {
            *kept_message = PyUnicode_FromFormat("'%.100s' object has no attribute '%U'",
                                                 PyModule_Type.tp_name, name);
            if (*kept_message == NULL) {
                return NULL;
            }
        }
#  if REUSE_MISS_ERROR
        error = new_miss_error(*kept_message, name, NULL);
        if (error == NULL) {
            return NULL;
        }
        Py_INCREF(error);
        Py_XSETREF(*kept_error, error);
        raise_miss_error(error);
#  else
        /* Before 3.10 an AttributeError has no name or object: the message
         * alone, left for the lookup to instantiate if it needs to. */
        PyErr_SetObject(PyExc_AttributeError, *kept_message);
#  endif
        return NULL;
#endif
    }
    PyObject *message = PyUnicode_FromFormat("'%.100s' object has no attribute '%U'",
                                             Py_TYPE(obj)->tp_name, name);
    if (message == NULL) {
        return NULL;
    }
    PyObject *error = new_miss_error(message, name, obj);
    Py_DECREF(message);
    if (error != NULL) {
        raise_miss_error(error);
    }
    return NULL;
}
