/* ModuleType.__setattr__ / __delattr__ while installed.
 *
 * What slot_tp_setattro calls on every module store on 3.8-3.12, so each
 * instruction here is paid by every store.  A method descriptor
 * (PyDescr_NewMethod) would check its arguments in method_vectorcall_FASTCALL
 * (an isinstance through PyObject_TypeCheck), enter a recursion guard and
 * call our function; this type is a method descriptor too
 * (Py_TPFLAGS_METHOD_DESCRIPTOR: slot_tp_setattro and super() call it
 * unbound, no bound method is made) whose vectorcall goes straight to the
 * dispatch.  The hook call has its own recursion guard. */
#include "native.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    /* 0: __setattr__(self, name, value); 1: __delattr__(self, name). */
    int deleting;
} hook_descr;

static PyTypeObject hook_descr_type;

static const char *
hook_descr_name(hook_descr *descr)
{
    return descr->deleting ? "__delattr__" : "__setattr__";
}

/* The error of a call that is not (module, str[, value]), worded like the
 * method descriptor's; kept out of the fast path. */
static PyObject *
hook_descr_bad_call(hook_descr *descr, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    const char *name = hook_descr_name(descr);
    Py_ssize_t expected = descr->deleting ? 1 : 2;
    if (nargs < 1) {
        PyErr_Format(PyExc_TypeError, "descriptor '%s' of 'module' object needs an argument",
                     name);
    }
    else if (!PyModule_Check(args[0])) {
        PyErr_Format(PyExc_TypeError,
                     "descriptor '%s' for 'module' objects doesn't apply to a '%.100s' object",
                     name, Py_TYPE(args[0])->tp_name);
    }
    else if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", name);
    }
    else if (nargs - 1 != expected) {
        PyErr_Format(PyExc_TypeError, "expected %zd argument%s, got %zd", expected,
                     expected == 1 ? "" : "s", nargs - 1);
    }
    else {
        PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
                     Py_TYPE(args[1])->tp_name);
    }
    return NULL;
}

static PyObject *
hook_descr_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames)
{
    hook_descr *descr = (hook_descr *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 - descr->deleting || kwnames != NULL || !PyModule_Check(args[0]) ||
        !PyUnicode_Check(args[1])) {
        return hook_descr_bad_call(descr, args, nargs, kwnames);
    }
    if (hooked_setattro(args[0], args[1], descr->deleting ? NULL : args[2]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
hook_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    if (!PyModule_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "descriptor '%s' for 'module' objects doesn't apply to a '%.100s' object",
                     hook_descr_name((hook_descr *)self), Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyMethod_New(self, obj);
}

static PyObject *
hook_descr_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<method '%s' of 'module' objects>",
                                hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_qualname(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromFormat("module.%s", hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_objclass(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    Py_INCREF((PyObject *)&PyModule_Type);
    return (PyObject *)&PyModule_Type;
}

/* The text signature keeps inspect.signature(ModuleType.__setattr__) working,
 * as it does for the slot wrapper this replaces (CPython's test_inspect
 * test_types_module_has_signatures). */
static PyObject *
hook_descr_get_text_signature(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((hook_descr *)self)->deleting ? "($self, name, /)"
                                                               : "($self, name, value, /)");
}

static PyObject *
hook_descr_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(
        ((hook_descr *)self)->deleting
            ? "Implement delattr(self, name), calling the module's own __delattr__ hook "
              "when its namespace defines one (PEP 726)."
            : "Implement setattr(self, name, value), calling the module's own __setattr__ "
              "hook when its namespace defines one (PEP 726).");
}

static PyGetSetDef hook_descr_getset[] = {
    {"__name__", hook_descr_get_name, NULL, NULL, NULL},
    {"__qualname__", hook_descr_get_qualname, NULL, NULL, NULL},
    {"__objclass__", hook_descr_get_objclass, NULL, NULL, NULL},
    {"__text_signature__", hook_descr_get_text_signature, NULL, NULL, NULL},
    {"__doc__", hook_descr_get_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Pickled by reference, like a method descriptor. */
static PyObject *
hook_descr_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *getattr = PyEval_GetBuiltins() == NULL
                            ? NULL
                            : PyDict_GetItemString(PyEval_GetBuiltins(), "getattr");
    if (getattr == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "builtins.getattr not found");
        return NULL;
    }
    return Py_BuildValue("O(Os)", getattr, (PyObject *)&PyModule_Type,
                         hook_descr_name((hook_descr *)self));
}

static PyMethodDef hook_descr_methods[] = {
    {"__reduce__", hook_descr_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject hook_descr_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.module_hook_descriptor",
    .tp_basicsize = sizeof(hook_descr),
    .tp_vectorcall_offset = offsetof(hook_descr, vectorcall),
    .tp_repr = hook_descr_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | HAS_VECTORCALL_FLAG,
    .tp_doc = "ModuleType.__setattr__/__delattr__ while pep726hook's native engine is "
              "installed.",
    .tp_methods = hook_descr_methods,
    .tp_getset = hook_descr_getset,
    .tp_descr_get = hook_descr_get,
};

PyObject *
new_hook_descr(int deleting)
{
    if (PyType_Ready(&hook_descr_type) < 0) {
        return NULL;
    }
    hook_descr *descr = PyObject_New(hook_descr, &hook_descr_type);
    if (descr == NULL) {
        return NULL;
    }
    descr->vectorcall = hook_descr_vectorcall;
    descr->deleting = deleting;
    return (PyObject *)descr;
}
