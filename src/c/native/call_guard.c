/* The call guard: object.__setattr__ / object.__delattr__ on modules (3.8-3.12).
 *
 * typeobject.c's hackcheck(), run by the slot wrappers of object.__setattr__
 * and object.__delattr__ (and of ModuleType's own original ones), rejects a
 * module once ModuleType's slot is a C function other than the generic one.
 * Those slot wrappers are only ever called through the tp_call of two types
 * (neither has a vectorcall on 3.8-3.12, checked at install): the wrapper
 * descriptor (object.__setattr__(m, n, v), slot_tp_setattro of a subclass,
 * super() on 3.12) and the method-wrapper bound to an object
 * (super(ModuleType, m).__setattr__).  While the direct slot is installed
 * both tp_calls are wrapped: for a call of a slot wrapper around the generic
 * store with the exact arguments it accepts and a module as self, hackcheck
 * runs here with hooked_setattro counting as the generic function, and then
 * the generic store, as wrap_setattr/wrap_delattr would.  Everything else,
 * every error message included, is CPython's own call.  The `__call__` slot
 * wrappers of the two types (type(object.__setattr__).__call__(...)) wrap
 * the original tp_calls and would skip ours, so calls of those are routed
 * back through ours. */
#include "native.h"

#if CALL_GUARD

/* descrobject.c's private method-wrapper layout; checked against the live
 * type at install (size, and the fields of a bound object.__setattr__). */
typedef struct {
    PyObject_HEAD
    PyWrapperDescrObject *descr;
    PyObject *self;
} method_wrapper_layout;

static ternaryfunc original_descr_call = NULL;
static ternaryfunc original_method_wrapper_call = NULL;
static PyTypeObject *method_wrapper_type = NULL;
/* wrap_setattr, wrap_delattr and wrap_call of typeobject.c, read from the
 * slot wrappers object.__setattr__, object.__delattr__, and
 * wrapper_descriptor.__call__. */
static wrapperfunc generic_wrap_setattr = NULL;
static wrapperfunc generic_wrap_delattr = NULL;
static wrapperfunc wrap_call_function = NULL;
static setattrofunc python_class_setattro = NULL;
/* Whether the two tp_calls are ours.  The captured pointers above are never
 * cleared: another interpreter's thread may be inside a guarded call. */
static int call_guard_installed = 0;

/* What the slot of *type* would be without the patch. */
static setattrofunc
unpatched_setattro(PyTypeObject *type)
{
    return type->tp_setattro == hooked_setattro ? PyObject_GenericSetAttr : type->tp_setattro;
}

/* typeobject.c's hackcheck() as CPython runs it on an unpatched interpreter. */
static int
emulated_hackcheck(PyObject *self, setattrofunc func, const char *what)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        return 1;
    }
#  if PY_VERSION_HEX < 0x03090000
    /* 3.8: the first class in the MRO that is not a Python class must
     * have *func* as its slot. */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        setattrofunc slot = unpatched_setattro((PyTypeObject *)PyTuple_GET_ITEM(mro, i));
        if (slot == func) {
            break;
        }
        if (slot != python_class_setattro) {
            goto reject;
        }
    }
#  else
    /* 3.9-3.12: from the class that defined type(self)'s slot, the tp_base
     * chain must reach *func* passing Python classes only. */
    setattrofunc own = unpatched_setattro(type);
    PyTypeObject *defining = type;
    for (Py_ssize_t i = PyTuple_GET_SIZE(mro) - 1; i >= 0; i--) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        setattrofunc slot = unpatched_setattro(base);
        if (slot != python_class_setattro && slot == own) {
            defining = base;
            break;
        }
    }
    for (PyTypeObject *base = defining; base != NULL; base = base->tp_base) {
        setattrofunc slot = unpatched_setattro(base);
        if (slot == func) {
            break;
        }
        if (slot != python_class_setattro) {
            goto reject;
        }
    }
#  endif
    return 1;
reject:
    PyErr_Format(PyExc_TypeError, "can't apply this %s to %s object", what, type->tp_name);
    return 0;
}

static PyObject *guarded_descr_call(PyObject *callable, PyObject *args, PyObject *kwds);
static PyObject *guarded_method_wrapper_call(PyObject *callable, PyObject *args, PyObject *kwds);

/* Whether a call of *descr* may be one the guard takes: a slot wrapper of
 * the generic store, or the __call__ of the two guarded types.  Every call
 * of every slot wrapper in the process passes here (object.__init__(self),
 * super().__init__(), int.__add__(a, b), ...), so the rest of them leave
 * after one load and three compares, before anything else is read. */
static inline int
may_be_guarded(PyWrapperDescrObject *descr)
{
    void *wrapped = descr->d_wrapped;
    return wrapped == (void *)PyObject_GenericSetAttr || wrapped == (void *)original_descr_call ||
           wrapped == (void *)original_method_wrapper_call;
}

/* The call of *descr* bound to *self* with args[first:] and *kwds*, if it is
 * one this guard takes; otherwise sets *handled* to 0 and returns NULL. */
static PyObject *
guarded_raw_call(PyWrapperDescrObject *descr, PyObject *self, PyObject *args, Py_ssize_t first,
                 PyObject *kwds, int *handled)
{
    *handled = 0;
    wrapperfunc wrapper = descr->d_base->wrapper;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args) - first;
    if (descr->d_wrapped == (void *)PyObject_GenericSetAttr) {
        int deleting = wrapper == generic_wrap_delattr;
        if ((!deleting && wrapper != generic_wrap_setattr) || nargs != 2 - deleting ||
            (kwds != NULL && (!PyDict_Check(kwds) || PyDict_GET_SIZE(kwds) != 0)) ||
            !PyModule_Check(self) || !call_guard_installed) {
            return NULL;
        }
        *handled = 1;
        PyObject *name = PyTuple_GET_ITEM(args, first);
        PyObject *value = deleting ? NULL : PyTuple_GET_ITEM(args, first + 1);
        if (!emulated_hackcheck(self, PyObject_GenericSetAttr,
                                deleting ? "__delattr__" : "__setattr__") ||
            PyObject_GenericSetAttr(self, name, value) < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (wrapper == wrap_call_function &&
        (descr->d_wrapped == (void *)original_descr_call ||
         descr->d_wrapped == (void *)original_method_wrapper_call)) {
        /* type(object.__setattr__).__call__(object.__setattr__, ...): what
         * wrap_call does, through our tp_call. */
        *handled = 1;
        PyObject *rest = PyTuple_GetSlice(args, first, PyTuple_GET_SIZE(args));
        if (rest == NULL) {
            return NULL;
        }
        PyObject *result = descr->d_wrapped == (void *)original_descr_call
                               ? guarded_descr_call(self, rest, kwds)
                               : guarded_method_wrapper_call(self, rest, kwds);
        Py_DECREF(rest);
        return result;
    }
    return NULL;
}

/* The calls may_be_guarded() lets through, kept out of line so that the
 * others pay no register saves. */
static Py_NO_INLINE PyObject *
guarded_descr_call_checked(PyObject *callable, PyObject *args, PyObject *kwds)
{
    PyWrapperDescrObject *descr = (PyWrapperDescrObject *)callable;
    if (PyTuple_GET_SIZE(args) >= 1) {
        PyObject *self = PyTuple_GET_ITEM(args, 0);
        /* The original checks that self is an instance of the descriptor's
         * class first; ours only takes calls where that holds. */
        if (PyType_IsSubtype(Py_TYPE(self), PyDescr_TYPE(descr))) {
            int handled;
            PyObject *result = guarded_raw_call(descr, self, args, 1, kwds, &handled);
            if (handled) {
                return result;
            }
        }
    }
    return original_descr_call(callable, args, kwds);
}

static PyObject *
guarded_descr_call(PyObject *callable, PyObject *args, PyObject *kwds)
{
    if (may_be_guarded((PyWrapperDescrObject *)callable)) {
        return guarded_descr_call_checked(callable, args, kwds);
    }
    return original_descr_call(callable, args, kwds);
}

static Py_NO_INLINE PyObject *
guarded_method_wrapper_call_checked(PyObject *callable, PyObject *args, PyObject *kwds)
{
    method_wrapper_layout *bound = (method_wrapper_layout *)callable;
    int handled;
    PyObject *result = guarded_raw_call(bound->descr, bound->self, args, 0, kwds, &handled);
    if (handled) {
        return result;
    }
    return original_method_wrapper_call(callable, args, kwds);
}

static PyObject *
guarded_method_wrapper_call(PyObject *callable, PyObject *args, PyObject *kwds)
{
    if (may_be_guarded(((method_wrapper_layout *)callable)->descr)) {
        return guarded_method_wrapper_call_checked(callable, args, kwds);
    }
    return original_method_wrapper_call(callable, args, kwds);
}

#  define TYPE_HAS_VECTORCALL(type) (((type)->tp_flags & HAS_VECTORCALL_FLAG) != 0)

/* The slot wrapper *name* of *type*, if it is one: borrowed, NULL if not
 * (no exception). */
static PyWrapperDescrObject *
slot_wrapper_of(PyTypeObject *type, const char *name)
{
    PyObject *found = PyObject_GetAttrString((PyObject *)type, name);
    if (found == NULL) {
        PyErr_Clear();
        return NULL;
    }
    /* The type's dict keeps it alive. */
    Py_DECREF(found);
    return Py_TYPE(found) == &PyWrapperDescr_Type ? (PyWrapperDescrObject *)found : NULL;
}

/* Capture what the guard needs and check every assumption it rests on.
 * Returns 1 if the guard can be installed, 0 if not (the caller keeps the
 * slot design), -1 on error. */
int
prepare_call_guard(void)
{
    if (python_class_setattro == NULL) {
        python_class_setattro = find_slot_tp_setattro();
        if (python_class_setattro == NULL) {
            return -1;
        }
    }
    PyWrapperDescrObject *set = slot_wrapper_of(&PyBaseObject_Type, "__setattr__");
    PyWrapperDescrObject *del = slot_wrapper_of(&PyBaseObject_Type, "__delattr__");
    PyWrapperDescrObject *call = slot_wrapper_of(&PyWrapperDescr_Type, "__call__");
    if (set == NULL || del == NULL || call == NULL ||
        set->d_wrapped != (void *)PyObject_GenericSetAttr ||
        del->d_wrapped != (void *)PyObject_GenericSetAttr ||
        TYPE_HAS_VECTORCALL(&PyWrapperDescr_Type) ||
        PyWrapperDescr_Type.tp_basicsize != (Py_ssize_t)sizeof(PyWrapperDescrObject)) {
        return 0;
    }
    PyObject *bound = PyObject_GetAttrString(Py_None, "__setattr__");
    if (bound == NULL) {
        return -1;
    }
    PyTypeObject *type = Py_TYPE(bound);
    int fits = type->tp_basicsize == (Py_ssize_t)sizeof(method_wrapper_layout) &&
               !TYPE_HAS_VECTORCALL(type) && type->tp_call != NULL &&
               ((method_wrapper_layout *)bound)->descr == set &&
               ((method_wrapper_layout *)bound)->self == Py_None;
    Py_DECREF(bound);
    if (!fits) {
        return 0;
    }
    if (!call_guard_installed) {
        method_wrapper_type = type;
        original_descr_call = PyWrapperDescr_Type.tp_call;
        original_method_wrapper_call = type->tp_call;
    }
    generic_wrap_setattr = set->d_base->wrapper;
    generic_wrap_delattr = del->d_base->wrapper;
    wrap_call_function = call->d_base->wrapper;
    return call->d_wrapped == (void *)original_descr_call;
}

void
install_call_guard(void)
{
    PyWrapperDescr_Type.tp_call = guarded_descr_call;
    method_wrapper_type->tp_call = guarded_method_wrapper_call;
    call_guard_installed = 1;
}

void
uninstall_call_guard(void)
{
    if (call_guard_installed) {
        PyWrapperDescr_Type.tp_call = original_descr_call;
        method_wrapper_type->tp_call = original_method_wrapper_call;
        call_guard_installed = 0;
    }
}
int
call_guard_is_installed(void)
{
    return call_guard_installed;
}
#else
/* ISO C wants something in every translation unit. */
typedef int call_guard_is_for_3_8_to_3_12;
#endif
