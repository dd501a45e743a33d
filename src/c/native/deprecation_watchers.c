/* Keeping the private builtins and the namespaces of deprecating modules
 * right: a change of the interpreter's builtins is mirrored into every
 * private builtins dict (3.12+ by a dict watcher; before, only stores on the
 * builtins module, through the store slot), and a deprecated name that the
 * module's own code binds again is moved back into its private builtins
 * (3.12+). */
#include "native.h"

/* Mirror a change of the interpreter's builtins (*value* NULL: a deletion)
 * into every private builtins dict, but never over a deprecated name.  Only
 * an exact str key, the only kind code reads as a name: comparing any other
 * with the deprecated names could run its Python __eq__ inside the builtins
 * dict's watcher, which must not change that dict. */
void
mirror_builtin(PyObject *key, PyObject *value)
{
    if (!PyUnicode_CheckExact(key)) {
        return;
    }
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
    schedule_rebound_moves(); /* as a change of a namespace does */
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
 * watcher may not change the dict it watches, so the name is noted here and
 * moved back into the private builtins, where it stays deprecated, by a
 * pending call, between two bytecodes of the main thread.  Nothing noted is
 * dropped until it is moved or needs no move: one pending call at a time
 * serves every note (the interpreter's queue of pending calls is short and
 * shared), a note found while a store of the module's deprecated names is
 * under way waits for the last of them to end (schedule_rebound_moves(),
 * from set_storing()), and a call the full queue refused is asked for again
 * at the next change of a deprecating module's namespace or of the
 * interpreter's builtins, or the next store of a deprecated name (until
 * then the name reads as the module's own, without a warning). */
typedef struct {
    PyObject *namespace; /* held until the note is served */
    PyObject *name;
    PyObject *value;
} rebound_name;

static rebound_name *rebound_notes = NULL;
static size_t rebound_count = 0;
static size_t rebound_capacity = 0;
/* Whether a pending call that serves the notes is in the queue. */
static int rebound_call_queued = 0;

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

static void
drop_note(rebound_name *note)
{
    Py_DECREF(note->namespace);
    Py_DECREF(note->name);
    Py_DECREF(note->value);
}

/* Move *note*'s name back if the namespace still holds the value the
 * module's code bound: 1 served (moved, or no move needed), 0 to wait (a
 * store of the module's deprecated names is under way: its end moves a
 * failed store's value back itself and asks for this again), -1 with an
 * exception. */
static int
move_rebound_name(rebound_name *note)
{
    weak_entry *entry = entry_of_namespace(note->namespace);
    if (entry == NULL) {
        return 1; /* the module died or no longer deprecates */
    }
    if (entry->flags != 0) {
        return 0;
    }
    /* Our own reference: the stores below can run a __del__ that ends the
     * module's deprecations (and the record with them). */
    PyObject *record = Py_NewRef(entry->value);
    PyObject *namespace = PyTuple_GET_ITEM(record, 2);
    int result = 1;
    PyObject *current = PyDict_GetItemWithError(namespace, note->name);
    if (current == NULL) {
        result = PyErr_Occurred() ? -1 : 1;
    }
    else if (current == note->value) {
        /* The name is an exact str and the entries' keys are too: this runs
         * no Python code. */
        int deprecated = has_moved_value(PyTuple_GET_ITEM(record, 1), note->name);
        if (deprecated < 0) {
            result = -1;
        }
        else if (deprecated) {
            /* Into the private builtins before out of the namespace: a
             * reader in another thread finds it in one of them.  The value
             * it replaces there can run a __del__ that binds the name in
             * the namespace again: that later value is the module's (a note
             * of its own moves it), and stays. */
            if (PyDict_SetItem(PyTuple_GET_ITEM(record, 0), note->name, note->value) < 0) {
                result = -1;
            }
            else {
                current = PyDict_GetItemWithError(namespace, note->name);
                if (current == note->value) {
                    if (PyDict_DelItem(namespace, note->name) < 0) {
                        result = -1;
                    }
                }
                else if (current == NULL && PyErr_Occurred()) {
                    result = -1;
                }
            }
        }
    }
    Py_DECREF(record);
    return result;
}

/* Room for one more note; 0 when out of memory. */
static int
grow_notes(void)
{
    size_t capacity = rebound_capacity ? rebound_capacity * 2 : 8;
    rebound_name *grown =
        (rebound_name *)PyMem_RawRealloc(rebound_notes, capacity * sizeof(rebound_name));
    if (grown == NULL) {
        return 0;
    }
    rebound_notes = grown;
    rebound_capacity = capacity;
    return 1;
}

static int
serve_rebound_names(void *unused)
{
    (void)unused;
    rebound_call_queued = 0;
    /* Taken over whole: moving a name can run Python code, which can note
     * more names (they wait for the next call, asked for below). */
    rebound_name *notes = rebound_notes;
    size_t count = rebound_count;
    size_t capacity = rebound_capacity;
    rebound_notes = NULL;
    rebound_count = rebound_capacity = 0;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        int served = move_rebound_name(&notes[i]);
        if (served < 0) {
            PyErr_WriteUnraisable(notes[i].name);
            served = 1;
        }
        if (served) {
            drop_note(&notes[i]);
        }
        else {
            notes[kept++] = notes[i];
        }
    }
    if (rebound_notes == NULL) {
        rebound_notes = notes;
        rebound_count = kept;
        rebound_capacity = capacity;
    }
    else {
        /* Notes made meanwhile: the waiting ones go after them (the order
         * does not matter: each note checks the namespace afresh). */
        for (size_t i = 0; i < kept; i++) {
            if (rebound_count == rebound_capacity && !grow_notes()) {
                /* Out of memory: a note cannot be kept. */
                drop_note(&notes[i]);
                continue;
            }
            rebound_notes[rebound_count++] = notes[i];
        }
        PyMem_RawFree(notes);
    }
    return 0;
}

void
schedule_rebound_moves(void)
{
    if (rebound_count == 0 || rebound_call_queued) {
        return;
    }
    /* Under the GIL, and the pending call runs under it too. */
    if (Py_AddPendingCall(serve_rebound_names, NULL) == 0) {
        rebound_call_queued = 1;
    }
}

static int
namespace_watch_callback(PyDict_WatchEvent event, PyObject *dict, PyObject *key,
                         PyObject *new_value)
{
    /* Any change of a deprecating module's namespace asks again for a
     * call the full queue refused before. */
    schedule_rebound_moves();
    /* A deprecated() marker becomes a deprecation of its own (the store
     * slot or the first read through the module converts it).  The key is
     * an exact str (is_deprecated_somewhere()): nothing below runs Python
     * code. */
    if ((event != PyDict_EVENT_ADDED && event != PyDict_EVENT_MODIFIED) ||
        !is_deprecated_somewhere(key) || is_marker(new_value)) {
        return 0;
    }
    weak_entry *entry = entry_of_namespace(dict);
    if (entry == NULL || in_declaration_window(entry->module)) {
        /* In its window a deprecated name is the namespace's: its end moves it. */
        return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    /* Noted even while a store of the module's deprecated names is under
     * way (its own putting back of the name is noted too, and then finds
     * the name moved back or no longer deprecated): the store may be of
     * another name, and this one must not stay in the namespace. */
    int deprecated = has_moved_value(PyTuple_GET_ITEM(entry->value, 1), key);
    if (deprecated == 1 && (rebound_count < rebound_capacity || grow_notes())) {
        rebound_name *note = &rebound_notes[rebound_count++];
        note->namespace = Py_NewRef(dict);
        note->name = Py_NewRef(key);
        note->value = Py_NewRef(new_value);
    }
    schedule_rebound_moves();
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
    /* The watchers belonged to the interpreter that is going, and so do
     * the notes' objects (not released: it frees them itself). */
    builtins_watcher = -1;
    namespace_watcher = -1;
    PyMem_RawFree(rebound_notes);
    rebound_notes = NULL;
    rebound_count = rebound_capacity = 0;
    rebound_call_queued = 0;
}
#endif
