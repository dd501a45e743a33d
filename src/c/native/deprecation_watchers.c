/* Keeping the private builtins and the namespaces of deprecating modules
 * right: a change of the interpreter's builtins is mirrored into every
 * private builtins dict (3.12+ by a dict watcher; before, only stores on the
 * builtins module, through the store slot), and a deprecated name that the
 * module's own code binds again is moved back into its private builtins
 * (3.12+). */
#include "native.h"

/* Mirror a change of the interpreter's builtins (*value* NULL: a deletion)
 * into every private builtins dict, but never over a deprecated name. */
void
mirror_builtin(PyObject *key, PyObject *value)
{
    for (size_t i = 0; i < deprecating_modules.capacity; i++) {
        PyObject *record = deprecating_modules.entries[i].value;
        if (record == NULL) {
            continue;
        }
        Py_INCREF(record);
        PyObject *private_builtins = PyTuple_GET_ITEM(record, 0);
        int deprecated = has_moved_value(PyTuple_GET_ITEM(record, 1), key);
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
        int deprecated = has_moved_value(PyTuple_GET_ITEM(record, 1), rebound->name);
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
    int deprecated = has_moved_value(PyTuple_GET_ITEM(entry->value, 1), key);
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
void
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
void
forget_deprecation_watchers(void)
{
    /* The watchers belonged to the interpreter that is going. */
    builtins_watcher = -1;
    namespace_watcher = -1;
}
#endif
