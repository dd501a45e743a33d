/* The descriptors that serve a deprecating module's moved names.
 *
 * A deprecating module's deprecated names leave its namespace for a builtins
 * dict of its own (the interpreter's builtins plus those names), which its own
 * code (functions, class bodies, eval with its globals) reads after the
 * namespace, as every global lookup does.  A read through the module then
 * misses the namespace and reaches the descriptor that this file puts into
 * ModuleType's own dict under each deprecated name: it warns and returns the
 * value.  The module stays an exact ModuleType, so reads of its other names
 * keep the specialiser's module fast path, which reads the module's dict and
 * never its type.
 *
 * The descriptors are non-data descriptors: a module whose namespace holds
 * the name gets its own value without any call (the generic lookup prefers
 * the instance dict), stores of the name on any module stay plain dict
 * stores, and a module without it gets an AttributeError that CPython's
 * module lookup clears before it tries the module's PEP 562 __getattr__ and
 * formats its own message.
 *
 * Which modules deprecate what is deprecating_modules.c's table. */
#include "native.h"
#if PY_VERSION_HEX < 0x030B0000
/* PyFrameObject's fields (f_code, f_globals) are public before 3.11. */
#  include <frameobject.h>
#endif

/* ---- the descriptor ---- */

typedef struct {
    PyObject_HEAD
    PyObject *name; /* exact str */
} deprecated_name;

static void
deprecated_name_dealloc(PyObject *self)
{
    Py_XDECREF(((deprecated_name *)self)->name);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
deprecated_name_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<pep726hook deprecated module attribute %R>",
                                ((deprecated_name *)self)->name);
}

/* Whether the Python frame running now is importlib's _handle_fromlist:
 * `from package import name` asks hasattr(package, name) there before the
 * import statement's own read, which alone warns. */
static int
is_fromlist_probe(void)
{
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame == NULL) {
        return 0;
    }
    if (!frame_code_is_named(frame, "_handle_fromlist")) {
        return 0;
    }
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *globals = PyFrame_GetGlobals(frame);
#else
    PyObject *globals = frame->f_globals;
    Py_XINCREF(globals);
#endif
    if (globals == NULL) {
        return 0;
    }
    PyObject *module_name = PyDict_GetItemString(globals, "__name__");
    int probe = module_name != NULL && PyUnicode_Check(module_name) &&
            (PyUnicode_CompareWithASCIIString(module_name, "_frozen_importlib") == 0 ||
             PyUnicode_CompareWithASCIIString(module_name, "importlib._bootstrap") == 0);
    Py_DECREF(globals);
    return probe;
}

/* Issue the warning of *deprecation* (a tuple (message, category, warn, load,
 * submodule)) at the line of the Python code running now: with stacklevel 1
 * from C no frame of ours is in between, so a `-W error` traceback ends at
 * the reader's line.  A warn callable is called as warn(message, category,
 * 2): warnings.warn called directly inside it names the same line. */
static int
warn_deprecation(PyObject *deprecation)
{
    PyObject *message = PyTuple_GET_ITEM(deprecation, 0);
    PyObject *category = PyTuple_GET_ITEM(deprecation, 1);
    PyObject *warn = PyTuple_GET_ITEM(deprecation, 2);
    if (warn == Py_None) {
        const char *text = PyUnicode_AsUTF8(message);
        if (text == NULL) {
            return -1;
        }
        return PyErr_WarnEx(category, text, 1);
    }
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

/* The miss: what the generic lookup would raise; a module's own lookup
 * replaces it with its own message (and tries its PEP 562 __getattr__). */
static PyObject *
deprecated_name_miss(PyObject *self, PyObject *obj)
{
    PyObject *name = ((deprecated_name *)self)->name;
    if (Py_TYPE(obj) == &PyModule_Type) {
        /* Cleared by the module's own lookup, which formats its own
         * message: no message to format here (hasattr() pays for it). */
        PyErr_SetObject(PyExc_AttributeError, name);
        return NULL;
    }
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'",
                 Py_TYPE(obj)->tp_name, name);
    return NULL;
}

#if PY_VERSION_HEX >= 0x030E0000
/* From 3.14 on annotationlib's ForwardRef.evaluate() resolves a string
 * annotation that is a bare name in the globals it was given, then with
 * hasattr(builtins, name) / getattr(builtins, name) on the builtins module,
 * not through globals['__builtins__'].  So a read of a deprecated name
 * through the builtins module, made by that function for the globals of the
 * module that deprecates it, is that module's own code reading it: served
 * from its private builtins, with no warning.  Returns a new reference, or
 * NULL without an exception when this is not such a read. */
static PyObject *
annotation_read(PyObject *obj, PyObject *name)
{
    if (interpreter_builtins == NULL || !PyModule_Check(obj) ||
        PyModule_GetDict(obj) != interpreter_builtins) {
        return NULL;
    }
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame == NULL) {
        return NULL;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
    int evaluate = PyUnicode_CompareWithASCIIString(code->co_name, "evaluate") == 0;
    Py_DECREF(code);
    PyObject *frame_globals = evaluate ? PyFrame_GetGlobals(frame) : NULL;
    if (frame_globals == NULL) {
        return NULL;
    }
    PyObject *module_name = PyDict_GetItemString(frame_globals, "__name__");
    evaluate = module_name != NULL && PyUnicode_Check(module_name) &&
               PyUnicode_CompareWithASCIIString(module_name, "annotationlib") == 0;
    Py_DECREF(frame_globals);
    if (!evaluate) {
        return NULL;
    }
    PyObject *locals = PyFrame_GetLocals(frame);
    if (locals == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *globals = PyMapping_GetItemString(locals, "globals");
    Py_DECREF(locals);
    if (globals == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *value = NULL;
    for (size_t i = 0; value == NULL && i < deprecating_modules.capacity; i++) {
        PyObject *record = deprecating_modules.entries[i].value;
        if (record == NULL || PyTuple_GET_ITEM(record, 2) != globals) {
            continue;
        }
        if (PyDict_Contains(PyTuple_GET_ITEM(record, 1), name) == 1) {
            value = PyDict_GetItemWithError(PyTuple_GET_ITEM(record, 0), name);
            Py_XINCREF(value);
        }
        PyErr_Clear();
    }
    Py_DECREF(globals);
    return value;
}
#endif

static PyObject *
deprecated_name_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    weak_entry *entry = weak_table_find(&deprecating_modules, obj);
    if (entry == NULL || entry->value == NULL) {
#if PY_VERSION_HEX >= 0x030E0000
        PyObject *annotation = annotation_read(obj, ((deprecated_name *)self)->name);
        if (annotation != NULL) {
            return annotation;
        }
#endif
        return deprecated_name_miss(self, obj);
    }
    PyObject *name = ((deprecated_name *)self)->name;
    /* Held: warnings and loads run code that may change the table. */
    PyObject *record = entry->value;
    Py_INCREF(record);
    PyObject *builtins = PyTuple_GET_ITEM(record, 0);
    PyObject *deprecation = PyDict_GetItemWithError(PyTuple_GET_ITEM(record, 1), name);
    if (deprecation == NULL) {
        Py_DECREF(record);
        return PyErr_Occurred() ? NULL : deprecated_name_miss(self, obj);
    }
    Py_INCREF(deprecation);
    PyObject *value = PyDict_GetItemWithError(builtins, name);
    int loaded = 0;
    if (value != NULL) {
        Py_INCREF(value);
    }
    else if (PyErr_Occurred()) {
        goto fail;
    }
    else {
        PyObject *load = PyTuple_GET_ITEM(deprecation, 3);
        if (load == Py_None) {
            /* Deleted from the private builtins by hand. */
            Py_DECREF(deprecation);
            Py_DECREF(record);
            return deprecated_name_miss(self, obj);
        }
        value = PyObject_CallFunctionObjArgs(load, NULL);
        if (value == NULL) {
            goto fail;
        }
        loaded = 1;
    }
    if (!is_fromlist_probe() && warn_deprecation(deprecation) < 0) {
        Py_DECREF(value);
        goto fail;
    }
    if (loaded) {
        /* A value stored meanwhile (the import system binding the
         * submodule, another thread) wins. */
        PyObject *kept = PyDict_SetDefault(builtins, name, value);
        Py_XINCREF(kept);
        Py_DECREF(value);
        value = kept;
    }
    Py_DECREF(deprecation);
    Py_DECREF(record);
    return value;
fail:
    Py_DECREF(deprecation);
    Py_DECREF(record);
    return NULL;
}

static PyTypeObject deprecated_name_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.deprecated_module_attribute",
    .tp_basicsize = sizeof(deprecated_name),
    .tp_dealloc = deprecated_name_dealloc,
    .tp_repr = deprecated_name_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A name deprecated by some module (pep726hook.deprecate_attribute()): a read "
              "through that module warns; every other module reads its own value.",
    .tp_descr_get = deprecated_name_get,
};

/* Put a descriptor for each name of *names* that has none into ModuleType's
 * dict; forget_module_type_lookups() once if any was added (what a lookup
 * cached of a new name is its absence: patch.c says where that lives).
 * Refuses a name under which the dict holds anything else (nothing is added
 * then). */
int
add_descriptors(PyObject *names)
{
    if (PyType_Ready(&deprecated_name_type) < 0) {
        return -1;
    }
    PyObject *dict = type_dict(&PyModule_Type);
    if (dict == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError, "ModuleType has no type dict");
        }
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *name, *ignored;
    while (PyDict_Next(names, &pos, &name, &ignored)) {
        PyObject *current = PyDict_GetItemWithError(dict, name);
        if (current == NULL && PyErr_Occurred()) {
            goto fail;
        }
        if (current != NULL && Py_TYPE(current) != &deprecated_name_type) {
            PyErr_Format(PyExc_ValueError,
                         "%R cannot be deprecated: types.ModuleType has an attribute of that "
                         "name, which every module shares",
                         name);
            goto fail;
        }
    }
    int added = 0;
    pos = 0;
    while (PyDict_Next(names, &pos, &name, &ignored)) {
        PyObject *current = PyDict_GetItemWithError(dict, name);
        if (current != NULL) {
            continue;
        }
        if (PyErr_Occurred()) {
            goto fail;
        }
        deprecated_name *descr = PyObject_New(deprecated_name, &deprecated_name_type);
        if (descr == NULL) {
            goto fail;
        }
        Py_INCREF(name);
        descr->name = name;
        int failed = PyDict_SetItem(dict, name, (PyObject *)descr);
        Py_DECREF(descr);
        if (failed) {
            goto fail;
        }
        added = 1;
    }
    Py_DECREF(dict);
    if (added) {
        forget_module_type_lookups();
    }
    return 0;
fail:
    Py_DECREF(dict);
    return -1;
}

int
is_deprecated_somewhere(PyObject *key)
{
    if (!PyUnicode_CheckExact(key)) {
        return 0;
    }
    PyObject *dict = type_dict(&PyModule_Type);
    if (dict == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *found = PyDict_GetItemWithError(dict, key);
    Py_DECREF(dict);
    if (found == NULL) {
        PyErr_Clear();
        return 0;
    }
    return Py_TYPE(found) == &deprecated_name_type;
}
