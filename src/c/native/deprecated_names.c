/* Deprecated module attributes once the module's import has ended.
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
 * The deprecating modules are held weakly (weak_table.c), each with a tuple
 * (private builtins, {name: (message, category, warn, load, submodule)})
 * that pep726hook._deprecations keeps up to date.  Stores and deletions of a
 * deprecated name through its module go to a Python callback of that package
 * (warn, put the name back, store, end the deprecation). */
#include "native.h"
#if PY_VERSION_HEX < 0x030B0000
/* PyFrameObject's fields (f_code, f_globals) are public before 3.11. */
#  include <frameobject.h>
#endif

/* ---- the deprecating modules ---- */

static PyObject *
forget_deprecating(PyObject *self, PyObject *ref)
{
    (void)self;
    (void)weak_table_forget_ref(&deprecating_modules, ref);
    Py_RETURN_NONE;
}

static PyMethodDef forget_deprecating_def = {"_forget_deprecating", forget_deprecating, METH_O,
                                             NULL};

weak_table deprecating_modules = {NULL, 0, 0, NULL, &forget_deprecating_def};

/* The interpreter's builtins dict, whose changes every private builtins dict
 * mirrors (borrowed: it lives as long as the interpreter). */
static PyObject *interpreter_builtins = NULL;

/* The function called for a store (module, name, value) or a deletion
 * (module, name) of a deprecated name through its deprecating module. */
static PyObject *store_callback = NULL;

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
static int
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

/* ---- keeping the private builtins and the namespaces right ---- */

/* A deprecating module's weak entry counts, in its flags, the stores and
 * deletions of its deprecated names under way (in any thread; the callback
 * puts the name back into the namespace itself), during which the namespace
 * watcher leaves it alone. */
#define DEPRECATED_STORE_UNIT 1u


/* Mirror a change of the interpreter's builtins (*value* NULL: a deletion)
 * into every private builtins dict, but never over a deprecated name. */
static void
mirror_builtin(PyObject *key, PyObject *value)
{
    for (size_t i = 0; i < deprecating_modules.capacity; i++) {
        PyObject *record = deprecating_modules.entries[i].value;
        if (record == NULL) {
            continue;
        }
        Py_INCREF(record);
        PyObject *private_builtins = PyTuple_GET_ITEM(record, 0);
        int deprecated = PyDict_Contains(PyTuple_GET_ITEM(record, 1), key);
        if (deprecated == 0) {
            if (value != NULL) {
                deprecated = PyDict_SetItem(private_builtins, key, value);
            }
            else if (PyDict_DelItem(private_builtins, key) < 0) {
                /* Not there: nothing to mirror. */
                PyErr_Clear();
            }
        }
        Py_DECREF(record);
        if (deprecated < 0) {
            PyErr_WriteUnraisable(key);
        }
    }
}

#if HOOKLESS_CACHE
static int builtins_watcher = -1;
static int namespace_watcher = -1;

static int
builtins_watch_callback(PyDict_WatchEvent event, PyObject *dict, PyObject *key,
                        PyObject *new_value)
{
    if (dict != interpreter_builtins || key == NULL) {
        return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    switch (event) {
    case PyDict_EVENT_ADDED:
    case PyDict_EVENT_MODIFIED:
        mirror_builtin(key, new_value);
        break;
    case PyDict_EVENT_DELETED:
        mirror_builtin(key, NULL);
        break;
    default:
        break;
    }
    PyErr_Restore(type, value, tb);
    return 0;
}

/* A deprecated name bound again in a moved module's namespace by the
 * module's own code (`global Old; Old = v`, `globals()["Old"] = v`): the
 * watcher may not change the dict it watches, so this runs as a pending
 * call, between two bytecodes of the main thread, and moves it back into the
 * private builtins, where it stays deprecated. */
typedef struct {
    PyObject *namespace; /* held until the call has run */
    PyObject *name;
    PyObject *value;
} rebound_name;

/* The entry of the deprecating module whose namespace is *namespace*. */
static weak_entry *
entry_of_namespace(PyObject *namespace)
{
    for (size_t i = 0; i < deprecating_modules.capacity; i++) {
        weak_entry *entry = &deprecating_modules.entries[i];
        if (entry->value != NULL && PyTuple_GET_ITEM(entry->value, 2) == namespace) {
            return entry;
        }
    }
    return NULL;
}

static int
move_rebound_name(void *arg)
{
    rebound_name *rebound = (rebound_name *)arg;
    weak_entry *entry = entry_of_namespace(rebound->namespace);
    int result = 0;
    if (entry != NULL && entry->flags == 0) {
        PyObject *record = entry->value;
        Py_INCREF(record);
        PyObject *namespace = PyTuple_GET_ITEM(record, 2);
        PyObject *current = PyDict_GetItemWithError(namespace, rebound->name);
        int deprecated = PyDict_Contains(PyTuple_GET_ITEM(record, 1), rebound->name);
        if (current == rebound->value && deprecated == 1) {
            if (PyDict_SetItem(PyTuple_GET_ITEM(record, 0), rebound->name, current) < 0 ||
                PyDict_DelItem(namespace, rebound->name) < 0) {
                result = -1;
            }
        }
        else if (PyErr_Occurred()) {
            result = -1;
        }
        Py_DECREF(record);
    }
    if (result < 0) {
        PyErr_WriteUnraisable(rebound->name);
    }
    Py_DECREF(rebound->namespace);
    Py_DECREF(rebound->name);
    Py_DECREF(rebound->value);
    PyMem_RawFree(rebound);
    return 0;
}

/* Whether *key* is deprecated by some module: ModuleType's dict holds a
 * descriptor of ours under it. */
static int
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

static int
namespace_watch_callback(PyDict_WatchEvent event, PyObject *dict, PyObject *key,
                         PyObject *new_value)
{
    /* A deprecated() marker becomes a deprecation of its own (the store
     * slot or the first read through the module converts it). */
    if ((event != PyDict_EVENT_ADDED && event != PyDict_EVENT_MODIFIED) ||
        !is_deprecated_somewhere(key) || is_marker(new_value)) {
        return 0;
    }
    weak_entry *entry = entry_of_namespace(dict);
    if (entry == NULL || entry->flags != 0) {
        return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int deprecated = PyDict_Contains(PyTuple_GET_ITEM(entry->value, 1), key);
    if (deprecated == 1) {
        rebound_name *rebound = (rebound_name *)PyMem_RawMalloc(sizeof(rebound_name));
        if (rebound != NULL) {
            Py_INCREF(dict);
            Py_INCREF(key);
            Py_INCREF(new_value);
            rebound->namespace = dict;
            rebound->name = key;
            rebound->value = new_value;
            if (Py_AddPendingCall(move_rebound_name, rebound) < 0) {
                /* The queue is full: the name stays where the code put it. */
                Py_DECREF(rebound->namespace);
                Py_DECREF(rebound->name);
                Py_DECREF(rebound->value);
                PyMem_RawFree(rebound);
            }
        }
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return 0;
}

/* Watch *namespace* (and, once, the interpreter's builtins); failing costs
 * only the mirroring, so it never raises. */
static void
watch_for_deprecations(PyObject *namespace)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (builtins_watcher < 0) {
        builtins_watcher = PyDict_AddWatcher(builtins_watch_callback);
        if (builtins_watcher >= 0 && PyDict_Watch(builtins_watcher, interpreter_builtins) < 0) {
            PyErr_Clear();
        }
    }
    if (namespace_watcher < 0) {
        namespace_watcher = PyDict_AddWatcher(namespace_watch_callback);
    }
    if (namespace_watcher >= 0 && PyDict_Watch(namespace_watcher, namespace) < 0) {
        PyErr_Clear();
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}
#endif

int
set_storing(PyObject *module, int storing)
{
    weak_entry *entry = weak_table_find(&deprecating_modules, module);
    if (entry != NULL) {
        if (storing) {
            entry->flags += DEPRECATED_STORE_UNIT;
        }
        else if (entry->flags != 0) {
            entry->flags -= DEPRECATED_STORE_UNIT;
        }
    }
    return 0;
}

int
set_deprecating(PyObject *module, PyObject *builtins, PyObject *entries,
                PyObject *interpreter)
{
    if (!is_main_interpreter()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "deprecated names are served by the main interpreter's module type "
                        "only");
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *name, *deprecation;
    while (PyDict_Next(entries, &pos, &name, &deprecation)) {
        if (!PyUnicode_CheckExact(name) || !PyTuple_CheckExact(deprecation) ||
            PyTuple_GET_SIZE(deprecation) != 5 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(deprecation, 0))) {
            PyErr_SetString(PyExc_TypeError,
                            "entries must map str names to (message, category, warn, load, "
                            "submodule) tuples");
            return -1;
        }
    }
    if (add_descriptors(entries) < 0) {
        return -1;
    }
    PyObject *namespace = PyModule_GetDict(module);
    if (namespace == NULL) {
        return -1;
    }
    if (interpreter_builtins != NULL && interpreter_builtins != interpreter) {
        PyErr_SetString(PyExc_RuntimeError, "the interpreter's builtins dict changed");
        return -1;
    }
    interpreter_builtins = interpreter;
    PyObject *record = PyTuple_Pack(3, builtins, entries, namespace);
    if (record == NULL) {
        return -1;
    }
    int result = weak_table_set(&deprecating_modules, module, record);
    Py_DECREF(record);
#if HOOKLESS_CACHE
    if (result == 0) {
        watch_for_deprecations(namespace);
    }
#endif
    return result;
}

int
set_store_callback(PyObject *callback)
{
    if (!is_main_interpreter()) {
        return 0;
    }
    Py_XINCREF(callback);
    Py_XSETREF(store_callback, callback);
    return 0;
}

void
forget_deprecations(int release)
{
    weak_table_clear(&deprecating_modules, release);
    interpreter_builtins = NULL;
#if HOOKLESS_CACHE
    /* The watchers belonged to the interpreter that is going. */
    builtins_watcher = -1;
    namespace_watcher = -1;
#endif
    if (release) {
        Py_CLEAR(store_callback);
    }
    else {
        store_callback = NULL;
    }
}

/* The store slot's detour: a store or deletion of a deprecated name through
 * its deprecating module goes to the callback; everything else to
 * store_through_hooks(). */
int
store_while_deprecating(PyObject *self, PyObject *name, PyObject *value)
{
    weak_entry *entry = weak_table_find(&deprecating_modules, self);
    PyObject *callback = store_callback;
#if !HOOKLESS_CACHE
    /* Without dict watchers, a store on the builtins module (mock.patch,
     * monkeypatch) is the change of builtins that can be seen. */
    if (entry == NULL && interpreter_builtins != NULL && PyModule_Check(self) &&
        PyModule_GetDict(self) == interpreter_builtins) {
        if (store_through_hooks(self, name, value) < 0) {
            return -1;
        }
        if (PyUnicode_CheckExact(name)) {
            mirror_builtin(name, value);
        }
        return 0;
    }
#endif
    if (entry == NULL || entry->value == NULL || callback == NULL || !PyUnicode_Check(name)) {
        return store_through_hooks(self, name, value);
    }
    int found = PyDict_Contains(PyTuple_GET_ITEM(entry->value, 1), name);
    if (found < 0) {
        return -1;
    }
    /* A store of __spec__ (importlib.reload() runs the body again) goes to
     * the callback too: the names the body binds again move again. */
    if (!found && !(value != NULL && PyUnicode_CheckExact(name) &&
                    PyUnicode_CompareWithASCIIString(name, "__spec__") == 0)) {
        return store_through_hooks(self, name, value);
    }
    Py_INCREF(callback);
    PyObject *result = PyObject_CallFunctionObjArgs(callback, self, name, value, NULL);
    Py_DECREF(callback);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* ---- functions and frames made before the move ---- */

/* What one pass rebinds: functions whose globals are namespaces[i] and
 * whose builtins are the interpreter's get privates[i] (3.10+: before, a
 * call looks globals['__builtins__'] up), and so do the frames of
 * generators, coroutines and async generators waiting with them. */
typedef struct {
    frame_targets targets;
    PyObject **found; /* functions with those globals, rebound or to rebind */
    Py_ssize_t *found_index;
    Py_ssize_t found_count;
    Py_ssize_t found_capacity;
    PyObject **generators;
    Py_ssize_t generator_count;
    Py_ssize_t generator_capacity;
    int failed;
} rebind_pass;

/* 1 and the index if *item* is a function whose globals are a target's
 * (a walk may have rebound it already: its generators' frames still wait
 * with the interpreter's builtins), else 0. */
static int
wants_rebinding(rebind_pass *pass, PyObject *item, Py_ssize_t *index)
{
#if PY_VERSION_HEX >= 0x030A0000
    if (!PyFunction_Check(item)) {
        return 0;
    }
    PyFunctionObject *function = (PyFunctionObject *)item;
    for (Py_ssize_t i = 0; i < pass->targets.count; i++) {
        if (function->func_globals == pass->targets.namespaces[i]) {
            *index = i;
            return 1;
        }
    }
#else
    (void)pass;
    (void)item;
    (void)index;
#endif
    return 0;
}

/* Append *item* (and *index*, if *indexes*) to a growing array in raw
 * memory: the pass's callback may make no object.  0, or -1 when out of
 * memory. */
static int
append_raw(PyObject ***items, Py_ssize_t **indexes, Py_ssize_t *count, Py_ssize_t *capacity,
           PyObject *item, Py_ssize_t index)
{
    if (*count == *capacity) {
        Py_ssize_t larger = *capacity == 0 ? 64 : *capacity * 2;
        PyObject **grown = (PyObject **)PyMem_RawRealloc(*items, (size_t)larger * sizeof(PyObject *));
        if (grown == NULL) {
            return -1;
        }
        *items = grown;
        if (indexes != NULL) {
            Py_ssize_t *grown_indexes =
                (Py_ssize_t *)PyMem_RawRealloc(*indexes, (size_t)larger * sizeof(Py_ssize_t));
            if (grown_indexes == NULL) {
                return -1;
            }
            *indexes = grown_indexes;
        }
        *capacity = larger;
    }
    (*items)[*count] = item;
    if (indexes != NULL) {
        (*indexes)[*count] = index;
    }
    (*count)++;
    return 0;
}

/* Note *item* if the pass wants it; 0, or -1 when out of memory.  Each
 * object noted gets a reference: nothing that runs before the end of the
 * pass may free it. */
static int
note_object(rebind_pass *pass, PyObject *item)
{
    Py_ssize_t index;
    if (wants_rebinding(pass, item, &index)) {
        if (append_raw(&pass->found, &pass->found_index, &pass->found_count,
                       &pass->found_capacity, item, index) < 0) {
            return -1;
        }
    }
    else if (may_hold_waiting_frame(item)) {
        if (append_raw(&pass->generators, NULL, &pass->generator_count,
                       &pass->generator_capacity, item, 0) < 0) {
            return -1;
        }
    }
    else {
        return 0;
    }
    Py_INCREF(item);
    return 0;
}

#if PY_VERSION_HEX >= 0x030C0000
/* PyUnstable_GC_VisitObjects' callback: it may neither make nor free an
 * object, so it only notes what it wants (in raw memory). */
static int
visit_for_rebinding(PyObject *item, void *arg)
{
    rebind_pass *pass = (rebind_pass *)arg;
    if (note_object(pass, item) < 0) {
        pass->failed = 1;
        return 0;
    }
    return 1;
}
#endif

/* Note every function and generator the collector tracks that the pass
 * wants; 0, or -1 with an exception. */
static int
visit_tracked_objects(rebind_pass *pass)
{
#if PY_VERSION_HEX >= 0x030C0000
    /* Every object the collector tracks, without a list of them all. */
    PyUnstable_GC_VisitObjects(visit_for_rebinding, pass);
#else
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *objects = gc == NULL ? NULL : PyObject_CallMethod(gc, "get_objects", NULL);
    Py_XDECREF(gc);
    if (objects == NULL) {
        return -1;
    }
    Py_ssize_t size = PyList_GET_SIZE(objects);
    for (Py_ssize_t i = 0; i < size && !pass->failed; i++) {
        if (note_object(pass, PyList_GET_ITEM(objects, i)) < 0) {
            pass->failed = 1;
        }
    }
    Py_DECREF(objects);
#endif
    if (pass->failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Give the frames of the generators noted the private builtins; from 3.11
 * on only where their code is that of a function of a target (such a frame
 * borrows its function's builtins).  0, or -1 with an exception. */
static int
rebind_generators(rebind_pass *pass)
{
    if (pass->generator_count == 0) {
        return 0;
    }
    PyObject *codes = NULL;
#if PY_VERSION_HEX >= 0x030B0000
    if (pass->found_count == 0) {
        return 0;
    }
    codes = PySet_New(NULL);
    if (codes == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < pass->found_count; i++) {
        if (PySet_Add(codes, ((PyFunctionObject *)pass->found[i])->func_code) < 0) {
            Py_DECREF(codes);
            return -1;
        }
    }
#endif
    int result = 0;
    for (Py_ssize_t i = 0; i < pass->generator_count && result == 0; i++) {
        if (rebind_generator_frame(pass->generators[i], &pass->targets, codes) < 0) {
            result = -1;
        }
    }
    Py_XDECREF(codes);
    return result;
}

Py_ssize_t rebinding_passes = 0;

/* One pass over the tracked objects for namespaces[0..count): the number
 * of functions rebound, or -1 with an exception. */
static Py_ssize_t
rebind_in_one_pass(PyObject *const *namespaces, PyObject *const *privates, Py_ssize_t count,
                   PyObject *interpreter)
{
    rebind_pass pass = {{namespaces, privates, count, interpreter}, NULL, NULL, 0, 0, NULL, 0, 0, 0};
    rebinding_passes++;
    Py_ssize_t rebound = 0;
    int failed = visit_tracked_objects(&pass) < 0;
#if PY_VERSION_HEX >= 0x030A0000
    for (Py_ssize_t i = 0; i < pass.found_count && !failed; i++) {
        rebound += give_private_builtins((PyFunctionObject *)pass.found[i], interpreter,
                                         privates[pass.found_index[i]]);
    }
#endif
    /* The frames after their functions, whose builtins they borrow. */
    if (!failed && rebind_generators(&pass) < 0) {
        failed = 1;
    }
    for (Py_ssize_t i = 0; i < pass.found_count; i++) {
        Py_DECREF(pass.found[i]);
    }
    for (Py_ssize_t i = 0; i < pass.generator_count; i++) {
        Py_DECREF(pass.generators[i]);
    }
    PyMem_RawFree(pass.found);
    PyMem_RawFree(pass.found_index);
    PyMem_RawFree(pass.generators);
    return failed ? -1 : rebound;
}

/* None if the walk proved its namespace, else why not. */
static PyObject *
walk_outcome_text(namespace_walk_result *result)
{
    switch (result->outcome) {
    case WALK_PROVED:
        Py_RETURN_NONE;
    case WALK_BUDGET_EXCEEDED:
        return PyUnicode_FromString("the walk exceeded its budget");
    case WALK_NAMESPACE_HELD:
        return PyUnicode_FromFormat(
            "the namespace has %zd references beyond its module and the functions found",
            result->extra);
    case WALK_GENERATOR_FUNCTION_HELD:
        return PyUnicode_FromFormat(
            "the generator function %U has %zd references beyond those the walk saw",
            result->held_function, result->extra);
    }
    Py_UNREACHABLE();
}

PyObject *
rebind_builtins(PyObject *modules, PyObject *privates, PyObject *interpreter, Py_ssize_t needed)
{
    Py_ssize_t count = PyList_GET_SIZE(modules);
    PyObject *outcomes = PyList_New(count);
    if (outcomes == NULL) {
        return NULL;
    }
    Py_ssize_t rebound = 0;
    int pass_ran = 0;
    /* Each namespace is walked first (namespace_walk.c); one pass serves
     * those whose walk proved nothing, if one of them is needed now (the
     * others wait for their own move).  From 3.10 on a function keeps the
     * builtins of the globals it was made in; before, each call looks
     * globals['__builtins__'] up, and the pass only looks for generators. */
    namespace_walk_result *results = (namespace_walk_result *)PyMem_RawCalloc(
        (size_t)(count + 1), sizeof(namespace_walk_result));
    /* [namespaces not proved | their privates | namespaces served | theirs] */
    PyObject **arrays = (PyObject **)PyMem_RawCalloc((size_t)(4 * count + 1), sizeof(PyObject *));
    PyObject **left = arrays;
    PyObject **served = arrays == NULL ? NULL : arrays + 2 * count;
    int failed = results == NULL || arrays == NULL;
    if (failed) {
        PyErr_NoMemory();
    }
    Py_ssize_t left_count = 0;
    Py_ssize_t served_count = 0;
    int pass_needed = 0;
    /* The walks make no object: the counts they read are those of one
     * moment, with nothing but the modules held on the way here. */
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        PyObject *module = PyList_GET_ITEM(modules, i);
        PyObject *namespace = PyModule_GetDict(module);
        PyObject *private_builtins = PyList_GET_ITEM(privates, i);
        /* The record set_deprecating() keeps holds the namespace too. */
        weak_entry *entry = weak_table_find(&deprecating_modules, module);
        Py_ssize_t known = entry != NULL && entry->value != NULL &&
                           PyTuple_GET_ITEM(entry->value, 2) == namespace;
        if (walk_namespace(namespace, private_builtins, interpreter, known, &results[i]) < 0) {
            failed = 1;
            break;
        }
        rebound += results[i].rebound;
        if (results[i].outcome != WALK_PROVED) {
            pass_needed |= i < needed;
            left[left_count] = namespace;
            left[count + left_count] = private_builtins;
            left_count++;
        }
        else {
            served[served_count] = namespace;
            served[count + served_count] = private_builtins;
            served_count++;
        }
    }
    if (!failed && pass_needed) {
        pass_ran = 1;
        Py_ssize_t found = rebind_in_one_pass(left, left + count, left_count, interpreter);
        failed = found < 0;
        rebound += failed ? 0 : found;
        for (Py_ssize_t i = 0; i < left_count; i++) {
            served[served_count] = left[i];
            served[count + served_count] = left[count + i];
            served_count++;
        }
    }
    if (!failed) {
        /* Frames running now, in any thread, after the functions whose
         * builtins they borrow (3.11+). */
        frame_targets targets = {served, served + count, served_count, interpreter};
        failed = rebind_running_frames(&targets) < 0;
    }
    for (Py_ssize_t i = 0; i < count && results != NULL; i++) {
        if (!failed) {
            PyObject *text = walk_outcome_text(&results[i]);
            PyObject *outcome = text == NULL ? NULL : Py_BuildValue("(nN)", results[i].walked, text);
            failed = outcome == NULL;
            if (!failed) {
                PyList_SET_ITEM(outcomes, i, outcome);
            }
        }
        Py_XDECREF(results[i].held_function);
    }
    PyMem_RawFree(results);
    PyMem_RawFree(arrays);
    if (failed) {
        Py_DECREF(outcomes);
        return NULL;
    }
    return Py_BuildValue("(nON)", rebound, pass_ran ? Py_True : Py_False, outcomes);
}
