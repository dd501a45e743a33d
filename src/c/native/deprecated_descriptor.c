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
 * The same descriptors serve a module's lazy and removed names
 * (pep726hook.lazy_attribute(), removed_attribute()), which have no value in
 * the private builtins: a lazy read loads the value into the namespace, a
 * removed read raises the library's AttributeError through a one-shot
 * __getattr__ (below).
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
    PyObject *miss; /* the AttributeError of a miss, kept for the next one (or NULL) */
    PyObject *miss_message; /* that error's message, made at the first miss (or NULL) */
} deprecated_name;

static void
deprecated_name_dealloc(PyObject *self)
{
    Py_XDECREF(((deprecated_name *)self)->name);
    Py_XDECREF(((deprecated_name *)self)->miss);
    Py_XDECREF(((deprecated_name *)self)->miss_message);
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
int
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

/* The miss of *self*'s name on *obj*, which does not declare it
 * (declared_miss.c).  Returns NULL. */
static PyObject *
deprecated_name_miss(PyObject *self, PyObject *obj)
{
    deprecated_name *descr = (deprecated_name *)self;
    return raise_declared_name_miss(obj, descr->name, &descr->miss, &descr->miss_message);
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

/* ---- removed names: the library's message through the module's lookup ----
 *
 * CPython's module lookup clears an AttributeError raised by a descriptor of
 * ModuleType's and then calls the namespace's __getattr__, if there is one,
 * or raises an error of its own ("module 'm' has no attribute 'x'").  So
 * that a read of a removed name raises the library's own message, the
 * descriptor puts a one-shot __getattr__ into the namespace before it
 * raises: the lookup calls it right away, with the same name; it takes
 * itself out of the namespace (putting back the module's own __getattr__
 * it stood in for, if any) and raises the error.  The namespace holds no
 * __getattr__ between two reads, so the module stays specialised.  Called
 * for another name (the descriptor was reached by object.__getattribute__,
 * whose caller got the error directly), it hands the read to the module's
 * own __getattr__, or raises the module's miss. */

typedef struct {
    PyObject_HEAD
    PyObject *module;    /* the module */
    PyObject *namespace; /* its dict */
    PyObject *previous;  /* the module's own __getattr__ it stands in for, or NULL */
    PyObject *name;      /* the removed name */
    PyObject *error;     /* the AttributeError(message) to raise */
} removed_getattr;

static int
removed_getattr_traverse(PyObject *self, visitproc visit, void *arg)
{
    removed_getattr *one = (removed_getattr *)self;
    Py_VISIT(one->module);
    Py_VISIT(one->namespace);
    Py_VISIT(one->previous);
    Py_VISIT(one->name);
    Py_VISIT(one->error);
    return 0;
}

static int
removed_getattr_clear(PyObject *self)
{
    removed_getattr *one = (removed_getattr *)self;
    Py_CLEAR(one->module);
    Py_CLEAR(one->namespace);
    Py_CLEAR(one->previous);
    Py_CLEAR(one->name);
    Py_CLEAR(one->error);
    return 0;
}

static void
removed_getattr_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    (void)removed_getattr_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
removed_getattr_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    removed_getattr *one = (removed_getattr *)self;
    PyObject *name;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) ||
        !PyArg_UnpackTuple(args, "__getattr__", 1, 1, &name)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "__getattr__() takes one argument");
        }
        return NULL;
    }
    if (one->namespace == NULL || one->module == NULL) {
        PyErr_SetObject(PyExc_AttributeError, name);
        return NULL;
    }
    PyObject *key = PyUnicode_InternFromString("__getattr__");
    if (key == NULL) {
        return NULL;
    }
    /* The namespace may hold the last reference to this object. */
    Py_INCREF(self);
    PyObject *result = NULL;
    PyObject *current = PyDict_GetItemWithError(one->namespace, key);
    if (current == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (current == NULL) {
        /* On 3.11-3.14 the native engine holds an opted-in module's own
         * __getattr__ outside its namespace (relocated_getattr.c), and may
         * have taken this one out there to call it: whichever it holds goes
         * back into the namespace, whence this one leaves below. */
        if (return_relocated_getattr(one->module) < 0) {
            goto done;
        }
        current = PyDict_GetItemWithError(one->namespace, key);
        if (current == NULL && PyErr_Occurred()) {
            goto done;
        }
    }
    if (current == self) {
        int failed = one->previous != NULL
                         ? PyDict_SetItem(one->namespace, key, one->previous)
                         : PyDict_DelItem(one->namespace, key);
        if (failed) {
            goto done;
        }
    }
    else if (current == NULL && one->previous != NULL) {
        /* The module's own goes back into the namespace, whence the next
         * miss takes it out again. */
        if (PyDict_SetDefault(one->namespace, key, one->previous) == NULL) {
            goto done;
        }
    }
    int same = PyUnicode_Check(name) ? PyUnicode_Compare(name, one->name) == 0 : 0;
    if (PyErr_Occurred()) {
        goto done;
    }
    if (same) {
        PyErr_SetObject((PyObject *)Py_TYPE(one->error), one->error);
    }
    else if (one->previous != NULL) {
        result = PyObject_CallFunctionObjArgs(one->previous, name, NULL);
    }
    else {
        PyObject *module_name = PyDict_GetItemString(one->namespace, "__name__");
        if (module_name != NULL && PyUnicode_Check(module_name)) {
            PyErr_Format(PyExc_AttributeError, "module '%U' has no attribute '%U'",
                         module_name, name);
        }
        else {
            PyErr_Format(PyExc_AttributeError, "module has no attribute '%U'", name);
        }
    }
done:
    Py_DECREF(key);
    Py_DECREF(self);
    return result;
}

static PyTypeObject removed_getattr_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.removed_attribute_error",
    .tp_basicsize = sizeof(removed_getattr),
    .tp_dealloc = removed_getattr_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The one-shot __getattr__ through which a read of a removed module attribute "
              "(pep726hook.removed_attribute()) raises the library's own message.",
    .tp_traverse = removed_getattr_traverse,
    .tp_clear = removed_getattr_clear,
    .tp_call = removed_getattr_call,
};

/* Raise the AttributeError *error* (a reference stolen) from a read of
 * *name* through the module *obj* whose namespace is *namespace*, so that
 * the module's lookup lets it through unchanged: through a one-shot
 * __getattr__.  Returns NULL. */
static PyObject *
raise_through_module(PyObject *obj, PyObject *namespace, PyObject *name, PyObject *error)
{
    if (Py_TYPE(obj) == &PyModule_Type && PyDict_CheckExact(namespace)) {
        /* A module's own __getattr__ that the native engine holds outside
         * its namespace goes back there, for this one to stand in for. */
        if (return_relocated_getattr(obj) < 0) {
            Py_DECREF(error);
            return NULL;
        }
        PyObject *key = PyUnicode_InternFromString("__getattr__");
        if (key == NULL || PyType_Ready(&removed_getattr_type) < 0) {
            Py_XDECREF(key);
            Py_DECREF(error);
            return NULL;
        }
        PyObject *previous = PyDict_GetItemWithError(namespace, key);
        if (previous == NULL && PyErr_Occurred()) {
            Py_DECREF(key);
            Py_DECREF(error);
            return NULL;
        }
        if (previous != NULL && Py_TYPE(previous) == &removed_getattr_type) {
            /* One left by a read that did not come through the module's
             * lookup: stand in for what it stood in for. */
            previous = ((removed_getattr *)previous)->previous;
        }
        removed_getattr *one = PyObject_GC_New(removed_getattr, &removed_getattr_type);
        if (one == NULL) {
            Py_DECREF(key);
            Py_DECREF(error);
            return NULL;
        }
        Py_INCREF(obj);
        one->module = obj;
        Py_INCREF(namespace);
        one->namespace = namespace;
        Py_XINCREF(previous);
        one->previous = previous;
        Py_INCREF(name);
        one->name = name;
        Py_INCREF(error);
        one->error = error;
        PyObject_GC_Track((PyObject *)one);
        int failed = PyDict_SetItem(namespace, key, (PyObject *)one);
        Py_DECREF(key);
        Py_DECREF(one);
        if (failed) {
            Py_DECREF(error);
            return NULL;
        }
    }
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
    return NULL;
}

/* The read that read_again_without_warning() repeats: its module and name
 * (borrowed, for the length of the call) and thread.  One at a time per
 * process: a nested or concurrent one of another read only warns. */
static PyObject *quiet_module = NULL;
static PyObject *quiet_name = NULL;
static unsigned long quiet_thread = 0;

PyObject *
read_again_without_warning(getattrofunc slot, PyObject *module, PyObject *name)
{
    if (quiet_module != NULL) {
        return slot(module, name);
    }
    quiet_module = module;
    quiet_name = name;
    quiet_thread = PyThread_get_thread_ident();
    PyObject *result = slot(module, name);
    quiet_module = NULL;
    quiet_name = NULL;
    quiet_thread = 0;
    return result;
}

static int
is_repeated_read(PyObject *obj, PyObject *name)
{
    return quiet_module == obj && quiet_name == name &&
           quiet_thread == PyThread_get_thread_ident();
}

/* A read of the removed name *name* (entry *deprecation*) of the module
 * *obj* whose namespace is *namespace*: warn, if the removal has a warning
 * (not for the import system's probe of `from m import name`), then raise
 * AttributeError(message) through a one-shot __getattr__, or, for a removal
 * without a message, miss as on a plain module.  Returns NULL. */
static PyObject *
read_removed(PyObject *self, PyObject *obj, PyObject *namespace, PyObject *name,
             PyObject *deprecation)
{
    PyObject *warning = PyTuple_GET_ITEM(deprecation, 6);
    if (warning != Py_None && !is_repeated_read(obj, name) && !is_fromlist_probe()) {
        const char *text = PyUnicode_AsUTF8(warning);
        if (text == NULL || PyErr_WarnEx(PyTuple_GET_ITEM(deprecation, 1), text, 1) < 0) {
            return NULL;
        }
    }
    if (PyTuple_GET_ITEM(deprecation, 0) == Py_None) {
        /* No message: a miss as on a plain module (its own __getattr__,
         * then CPython's error, which the lookup makes). */
        return deprecated_name_miss(self, obj);
    }
    PyObject *error = PyObject_CallFunctionObjArgs(
        PyExc_AttributeError, PyTuple_GET_ITEM(deprecation, 0), NULL);
    if (error == NULL) {
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030A0000
    /* Its name None, not unset: CPython then leaves it so (it fills in the
     * name and object of an unset one), and a traceback prints the library's
     * message without a "Did you mean" guess appended (_warning.py's
     * removed_error() says the same for the class engine). */
    if (PyObject_SetAttrString(error, "name", Py_None) < 0) {
        Py_DECREF(error);
        return NULL;
    }
#endif
    return raise_through_module(obj, namespace, name, error);
}

/* A load (a lazy name's, or a lazy deprecated value's) that failed: an
 * AttributeError it raised goes through the module's lookup unchanged (it
 * would clear it); any other exception propagates as it is.  Returns NULL. */
static PyObject *
load_failed(PyObject *obj, PyObject *namespace, PyObject *name)
{
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return NULL;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value == NULL) {
        PyErr_Restore(type, value, traceback);
        return NULL;
    }
    if (traceback != NULL) {
        PyException_SetTraceback(value, traceback);
    }
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return raise_through_module(obj, namespace, name, value);
}

int
has_moved_value(PyObject *entries, PyObject *name)
{
    PyObject *deprecation = PyDict_GetItemWithError(entries, name);
    if (deprecation == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyTuple_CheckExact(deprecation) || PyTuple_GET_SIZE(deprecation) != DECLARED_ENTRY_SIZE) {
        return 1;
    }
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(deprecation, 5));
    if (kind == -1 && PyErr_Occurred()) {
        return -1;
    }
    return kind == DECLARED_DEPRECATED;
}

/* Whether *value*, read from a private builtins dict under *name*, is the
 * interpreter's builtin of that name (a lazy deprecated value not loaded
 * yet leaves it there: a module deprecating `float` lazily). */
static int
is_interpreter_builtin(PyObject *name, PyObject *value)
{
    if (interpreter_builtins == NULL) {
        return 0;
    }
    PyObject *builtin = PyDict_GetItemWithError(interpreter_builtins, name);
    if (builtin == NULL) {
        PyErr_Clear();
        return 0;
    }
    return builtin == value;
}

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
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(deprecation, 5));
    if (kind == DECLARED_LAZY) {
        /* The load stores the value in the namespace, where later reads find
         * it without coming here, and ends the declaration.  No warning. */
        PyObject *lazy = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(deprecation, 3), NULL);
        if (lazy == NULL) {
            (void)load_failed(obj, PyTuple_GET_ITEM(record, 2), name);
        }
        Py_DECREF(deprecation);
        Py_DECREF(record);
        return lazy;
    }
    if (kind == DECLARED_REMOVED) {
        PyObject *removed =
            read_removed(self, obj, PyTuple_GET_ITEM(record, 2), name, deprecation);
        Py_DECREF(deprecation);
        Py_DECREF(record);
        return removed;
    }
    PyObject *value = PyDict_GetItemWithError(builtins, name);
    int loaded = 0;
    if (value != NULL && PyTuple_GET_ITEM(deprecation, 3) != Py_None &&
        is_interpreter_builtin(name, value)) {
        value = NULL; /* a lazy value not loaded yet */
    }
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
            (void)load_failed(obj, PyTuple_GET_ITEM(record, 2), name);
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
         * submodule, another thread) wins; the builtin of the same name does
         * not. */
        PyObject *kept = PyDict_GetItemWithError(builtins, name);
        if (kept == NULL && PyErr_Occurred()) {
            Py_DECREF(value);
            goto fail;
        }
        if (kept == NULL || is_interpreter_builtin(name, kept)) {
            if (PyDict_SetItem(builtins, name, value) < 0) {
                Py_DECREF(value);
                goto fail;
            }
        }
        else {
            Py_INCREF(kept);
            Py_SETREF(value, kept);
        }
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
 * then).  add_descriptors_keeping_lookups() leaves the forgetting to its
 * caller. */
int
add_descriptors(PyObject *names)
{
    int added = add_descriptors_keeping_lookups(names);
    if (added > 0) {
        forget_module_type_lookups();
    }
    return added < 0 ? -1 : 0;
}

int
add_descriptors_keeping_lookups(PyObject *names)
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
        descr->miss = NULL;
        descr->miss_message = NULL;
        int failed = PyDict_SetItem(dict, name, (PyObject *)descr);
        Py_DECREF(descr);
        if (failed) {
            goto fail;
        }
        added = 1;
    }
    Py_DECREF(dict);
    return added;
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
