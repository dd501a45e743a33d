/* The deprecating modules: which modules' deprecated names have moved out of
 * their namespace, and the store slot's detour for those names.
 *
 * The deprecating modules are held weakly (weak_table.c), each with a
 * 3-tuple (private builtins, {name: (message, category, warn, load,
 * submodule, kind, warning)}, namespace) that pep726hook._deprecations keeps up to date.
 * Stores and deletions of a deprecated name through its module go to a
 * Python callback of that package (warn, put the name back, store, end the
 * deprecation). */
#include "native.h"

/* A deprecating module's weak entry counts, in its flags, the stores and
 * deletions of its deprecated names under way (in any thread; the callback
 * puts the name back into the namespace itself), during which the namespace
 * watcher leaves it alone (deprecation_watchers.c). */
#define DEPRECATED_STORE_UNIT 1u

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
PyObject *interpreter_builtins = NULL;

/* The function called for a store (module, name, value) or a deletion
 * (module, name) of a deprecated name through its deprecating module. */
static PyObject *store_callback = NULL;

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
#if HOOKLESS_CACHE
            if (entry->flags == 0) {
                /* Names the module's code bound again meanwhile wait for this. */
                schedule_rebound_moves();
            }
#endif
        }
    }
    return 0;
}

/* The collector's view of a deprecating module: the module holds its record
 * too.  The table owns the record, out of the collector's sight, and the
 * record often leads back to the module: its namespace holds the module
 * itself (`this = sys.modules[__name__]`, a package importing itself), its
 * private builtins hold the moved functions whose globals that namespace is,
 * its entries a warn callable or a factory closing over the module.  Seen
 * only from the table, such a cycle looks held from outside and is never
 * freed; seen as the module's own reference, it is garbage like any other
 * cycle through a module.  Collecting it first runs the weak reference's
 * callback (the collector clears weak references before it breaks cycles),
 * which forgets the entry and releases the record.
 *
 * The module type's slot is replaced once, at the first deprecation, and
 * stays (a type made from it since may have copied it); a subclass's
 * traverse calls it through the base's slot.  Another interpreter's
 * modules are never in the table, which only the main interpreter reads. */
static traverseproc module_traverse = NULL;

static int
traverse_deprecating(PyObject *module, visitproc visit, void *arg)
{
    int result = module_traverse(module, visit, arg);
    if (result != 0 || !is_main_interpreter() || deprecating_modules.count == 0) {
        return result;
    }
    weak_entry *entry = weak_table_find(&deprecating_modules, module);
    if (entry != NULL) {
        Py_VISIT(entry->value);
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
        /* The message is a str, or None for a removed name that misses. */
        if (!PyUnicode_CheckExact(name) || !PyTuple_CheckExact(deprecation) ||
            PyTuple_GET_SIZE(deprecation) != DECLARED_ENTRY_SIZE ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(deprecation, 5)) ||
            !(PyUnicode_Check(PyTuple_GET_ITEM(deprecation, 0)) ||
              (PyTuple_GET_ITEM(deprecation, 0) == Py_None &&
               PyLong_AsLong(PyTuple_GET_ITEM(deprecation, 5)) == DECLARED_REMOVED))) {
            PyErr_SetString(PyExc_TypeError,
                            "entries must map str names to (message, category, warn, load, "
                            "submodule, kind, warning) tuples");
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
    if (module_traverse == NULL) {
        module_traverse = PyModule_Type.tp_traverse;
        PyModule_Type.tp_traverse = traverse_deprecating;
    }
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

int
visit_store_callback(visitproc visit, void *arg)
{
    Py_VISIT(store_callback);
    return 0;
}

void
forget_deprecations(int release)
{
    weak_table_clear(&deprecating_modules, release);
    weak_table_clear(&declared_alone_modules, release);
    interpreter_builtins = NULL;
#if HOOKLESS_CACHE
    forget_deprecation_watchers();
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
    if (entry == NULL || entry->value == NULL || !PyUnicode_Check(name)) {
        return store_through_hooks(self, name, value);
    }
    /* For a str subclass the lookup runs its Python __hash__ and __eq__,
     * which can end the module's deprecations or set another callback: the
     * entries are held here, and the callback is read after it. */
    PyObject *entries = PyTuple_GET_ITEM(entry->value, 1);
    Py_INCREF(entries);
    int found = PyDict_Contains(entries, name);
    Py_DECREF(entries);
    if (found < 0) {
        return -1;
    }
    PyObject *callback = store_callback;
    if (callback == NULL) {
        /* Declared by the extension alone (declared_alone.c), not adopted yet. */
        if (found && PyUnicode_CheckExact(name)) {
            return store_declared_alone(self, name, value, PyTuple_GET_ITEM(entry->value, 1));
        }
        int stored = store_through_hooks(self, name, value);
#if !HOOKLESS_CACHE
        /* importlib.reload() stores __spec__ before it runs the body again. */
        if (stored == 0 && value != NULL && PyUnicode_CheckExact(name) &&
            PyUnicode_CompareWithASCIIString(name, "__spec__") == 0) {
            reopen_window_for_reload(self);
        }
#endif
        return stored;
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
