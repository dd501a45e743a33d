/* Subclasses of ModuleType made before the patch copied its slot when they
 * were created: re-point them (and back again). */
#include "native.h"

/* Tell whether a class in *type*'s MRO before ModuleType defines __setattr__
 * or __delattr__ itself.  Returns -1 with an exception set on error. */
static int
defines_own_setattr(PyTypeObject *type)
{
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        if (base == &PyModule_Type) {
            break;
        }
        PyObject *dict = type_dict(base);
        if (dict == NULL) {
            if (PyErr_Occurred()) {
                return -1;
            }
            continue;
        }
        int found = PyDict_Contains(dict, setattr_key);
        if (found == 0) {
            found = PyDict_Contains(dict, delattr_key);
        }
        Py_DECREF(dict);
        if (found != 0) {
            return found;
        }
    }
    return 0;
}

/* Every class below *root*, breadth first (a new list).
 *
 * The hierarchy is walked with a list, not by C recursion: a chain of one
 * subclass per added module property is a real recipe, and any depth must
 * work (a recursive walk refused chains deeper than 200). */
static PyObject *
all_subclasses(PyTypeObject *root)
{
    PyObject *queue = PyList_New(0);
    PyObject *seen = PySet_New(NULL);
    if (queue == NULL || seen == NULL || PyList_Append(queue, (PyObject *)root) < 0) {
        goto fail;
    }
    for (Py_ssize_t next = 0; next < PyList_GET_SIZE(queue); next++) {
        PyObject *type = PyList_GET_ITEM(queue, next);
        /* type.__subclasses__(cls), not cls.__subclasses__(): a metaclass may
         * define its own. */
        PyObject *subclasses =
            PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", type);
        if (subclasses == NULL) {
            goto fail;
        }
        if (!PyList_Check(subclasses)) {
            Py_DECREF(subclasses);
            PyErr_SetString(PyExc_TypeError, "__subclasses__() did not return a list");
            goto fail;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subclasses); i++) {
            PyObject *item = PyList_GET_ITEM(subclasses, i);
            if (!PyType_Check(item)) {
                continue;
            }
            /* A class with several ModuleType bases is listed by each.  Keyed
             * by address: a metaclass's __eq__/__hash__ must not run here. */
            PyObject *key = PyLong_FromVoidPtr(item);
            int known = key == NULL ? -1 : PySet_Contains(seen, key);
            if (known == 0) {
                known = PySet_Add(seen, key);
            }
            Py_XDECREF(key);
            if (known > 0) {
                continue;
            }
            if (known < 0 || PyList_Append(queue, item) < 0) {
                Py_DECREF(subclasses);
                goto fail;
            }
        }
        Py_DECREF(subclasses);
    }
    Py_DECREF(seen);
    /* Without the root itself. */
    if (PySequence_DelItem(queue, 0) < 0) {
        Py_DECREF(queue);
        return NULL;
    }
    return queue;
fail:
    Py_XDECREF(queue);
    Py_XDECREF(seen);
    return NULL;
}

/* Heap subclasses copied ModuleType's slot when they were created.  Point those
 * still on *from* at *to*.  Subclasses that define
 * __setattr__/__delattr__ in Python have slot_tp_setattro and reach us
 * through super(); they are left alone.  Every class to change is collected
 * before the first is changed, so a failure (MemoryError, a __subclasses__
 * that raises) leaves every slot as it was. */
int
repoint_subclasses(PyTypeObject *root, setattrofunc from, setattrofunc to)
{
    PyObject *subclasses = all_subclasses(root);
    PyObject *change = PyList_New(0);
    if (subclasses == NULL || change == NULL) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subclasses); i++) {
        PyObject *item = PyList_GET_ITEM(subclasses, i);
        PyTypeObject *sub = (PyTypeObject *)item;
        if (sub->tp_setattro != from) {
            continue;
        }
        int keep = 0;
        if (to == PyObject_GenericSetAttr) {
            /* On 3.8-3.12 the patched slot is slot_tp_setattro, which is
             * also what every class defining __setattr__ in Python has:
             * those must keep it. */
            keep = defines_own_setattr(sub);
        }
        if (keep < 0 || (!keep && PyList_Append(change, item) < 0)) {
            goto fail;
        }
    }
    /* Nothing below can fail. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(change); i++) {
        PyTypeObject *sub = (PyTypeObject *)PyList_GET_ITEM(change, i);
        sub->tp_setattro = to;
        /* A store into its __slots__ specialised while the slot was the
         * generic one is guarded by this class's version tag alone. */
        PyType_Modified(sub);
    }
    Py_DECREF(subclasses);
    Py_DECREF(change);
    return 0;
fail:
    Py_XDECREF(subclasses);
    Py_XDECREF(change);
    return -1;
}

/* The same for the read slot: subclasses still on *from* get *to*.  A class
 * defining __getattr__ or __getattribute__ in Python has the interpreter's
 * own slot function, never *from*. */
int
repoint_getattro_subclasses(PyTypeObject *root, getattrofunc from, getattrofunc to)
{
    PyObject *subclasses = all_subclasses(root);
    if (subclasses == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subclasses); i++) {
        PyTypeObject *sub = (PyTypeObject *)PyList_GET_ITEM(subclasses, i);
        if (sub->tp_getattro == from) {
            sub->tp_getattro = to;
            PyType_Modified(sub);
        }
    }
    Py_DECREF(subclasses);
    return 0;
}
