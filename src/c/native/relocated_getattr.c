/* An opted-in module's PEP 562 __getattr__, held outside its namespace on
 * CPython 3.11-3.14.
 *
 * There the specialiser refuses LOAD_ATTR on any module whose namespace
 * holds the key '__getattr__' (https://github.com/python/cpython/issues/143469,
 * fixed in 3.15), so every read of such a module, present names included,
 * takes the read slot: about three times a plain module read.  For a module
 * opted in with enable(), the function moves into the module's entry of the
 * opt-in table and the read slot wrapper (getattr_wrapper.c) calls it on a
 * miss, so reads of present names specialise again.
 *
 * A __getattr__ that shows up in the namespace again (the rest of the body,
 * globals(), reload(), a store through the module) wins and moves out at the
 * next read that reaches the slot.  A store or deletion of '__getattr__'
 * through the module first puts the held function back, so the module's own
 * hooks and the store itself see plain PEP 562. */
#include "native.h"

Py_ssize_t relocating_count = 0;
PyObject *relocation_marker = NULL;

#if RELOCATE_GETATTR

/* Set *module*'s entry to *value* (a new reference, stolen); the old value
 * is released last, when the table is consistent. */
static void
set_entry_value(weak_entry *entry, PyObject *value)
{
    PyObject *old = entry->value;
    entry->value = value;
    if (old == NULL && value != NULL) {
        relocating_count++;
    }
    Py_XDECREF(old);
}

static PyObject *
namespace_of(PyObject *module)
{
    PyObject *dict = PyModule_GetDict(module);
    return dict != NULL && PyDict_Check(dict) ? dict : NULL;
}

/* The function *module*'s entry holds (borrowed), NULL if none.  Found
 * afresh: a pointer to an entry is good only until code runs that may opt a
 * module in or out (a key's __eq__ in a dict lookup, a finalizer), which can
 * move the entries of the table or reallocate it. */
static PyObject *
held_function(PyObject *module)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    return entry == NULL || entry->value == relocation_marker ? NULL : entry->value;
}

PyObject *
relocated_getattr(PyObject *module, int *error)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry == NULL) {
        return NULL;
    }
    /* The watcher tells when a __getattr__ may have been stored: no
     * lookup on the reads in between. */
    if (!namespace_needs_look(entry)) {
        return entry->value == relocation_marker ? NULL : entry->value;
    }
    /* Cleared first: a store the lookup's code makes sets it again. */
    entry->flags &= ~NAMESPACE_MAY_HOLD_GETATTR;
    PyObject *dict = namespace_of(module);
    PyObject *found = dict == NULL ? NULL : PyDict_GetItemWithError(dict, getattr_key);
    if (found == NULL) {
        if (PyErr_Occurred()) {
            *error = 1;
            return NULL;
        }
        /* The lookup compared keys: *entry* may be stale. */
        return held_function(module);
    }
    if (!reads_through_wrapper(Py_TYPE(module))) {
        /* A class with a read slot of its own (a Python __getattr__ or
         * __getattribute__) reads through ModuleType.__getattribute__, the
         * original slot, which only finds the function in the namespace;
         * such a class is never specialised anyway. */
        return NULL;
    }
    Py_INCREF(found);
    if (PyDict_DelItem(dict, getattr_key) < 0) {
        Py_DECREF(found);
        *error = 1;
        return NULL;
    }
    /* The deletion compared keys (it may have run an __eq__): find again. */
    entry = weak_table_find(&opt_ins, module);
    if (entry == NULL) {
        /* No longer opted in: it stays where it was. */
        int failed = PyDict_SetItem(dict, getattr_key, found);
        Py_DECREF(found);
        *error = failed < 0;
        return NULL;
    }
    set_entry_value(entry, found);
    return held_function(module);
}

int
return_relocated_getattr(PyObject *module)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry == NULL || entry->value == NULL || entry->value == relocation_marker) {
        return 0;
    }
    PyObject *dict = namespace_of(module);
    if (dict == NULL) {
        return 0;
    }
    PyObject *function = entry->value;
    Py_INCREF(function);
    /* One in the namespace already is newer and wins. */
    int result = PyDict_SetDefault(dict, getattr_key, function) == NULL ? -1 : 0;
    entry = weak_table_find(&opt_ins, module);
    if (result == 0 && entry != NULL && entry->value == function) {
        Py_INCREF(relocation_marker);
        set_entry_value(entry, relocation_marker);
    }
    Py_DECREF(function);
    return result;
}

/* Start serving *module*'s __getattr__: the read slot wrapped, the entry
 * marked (then relocated_getattr() moves the function). */
static int
start_relocating(PyObject *module)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry != NULL && entry->value == NULL) {
        if (relocation_marker == NULL) {
            relocation_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
            if (relocation_marker == NULL) {
                return -1;
            }
        }
        if (wrap_getattro() < 0 || give_wrapper_to(Py_TYPE(module)) < 0) {
            release_getattro_wrapper();
            return -1;
        }
        entry = weak_table_find(&opt_ins, module);
        if (entry == NULL) {
            return 0;
        }
        Py_INCREF(relocation_marker);
        set_entry_value(entry, relocation_marker);
    }
    return 0;
}

#  if HOOKLESS_CACHE
/* 3.12+: an opted-in module without a __getattr__ has its namespace
 * watched (a dict watcher, public API), and the read slot is wrapped for it
 * only once a key that may be '__getattr__' is stored there.  So enable()
 * on a module without one, the common case, leaves ModuleType's own read
 * slot in place, and with it CPython's cheap hasattr() misses on every
 * module (see docs/native-engine-getattr.md).  The watcher belongs to the
 * interpreter that registered it; elsewhere the slot is wrapped at once. */
static int getattr_watcher = -1;
static PyInterpreterState *getattr_watcher_interp = NULL;
static int relocation_scheduled = 0;

/* Run by the main thread at its next safe point: start relocating the
 * watched modules whose namespace got a __getattr__ while the read slot was
 * not wrapped.  Never raises (an error would surface in unrelated code). */
static int
start_flagged_relocations(void *unused)
{
    (void)unused;
    relocation_scheduled = 0;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    for (size_t i = 0; i < opt_ins.capacity; i++) {
        PyObject *module = opt_ins.entries[i].module;
        unsigned int flags = opt_ins.entries[i].flags;
        if (module != NULL && opt_ins.entries[i].value == NULL &&
            (flags & NAMESPACE_MAY_HOLD_GETATTR) && !(flags & GETATTR_KEPT_IN_PLACE) &&
            start_relocating(module) < 0) {
            PyErr_Clear();
        }
    }
    PyErr_Restore(type, value, tb);
    return 0;
}

static int
getattr_watch_callback(PyDict_WatchEvent event, PyObject *dict, PyObject *key,
                       PyObject *new_value)
{
    (void)new_value;
    if (event == PyDict_EVENT_ADDED || event == PyDict_EVENT_MODIFIED) {
        if (PyUnicode_CheckExact(key) && !is_getattr_name(key)) {
            return 0;
        }
    }
    else if (event != PyDict_EVENT_CLONED) {
        return 0;
    }
    /* The dict is about to change: the next read that reaches the slot
     * moves the function out.  A watcher must run no code that could change
     * the dict (an allocation may run the garbage collector and finalizers),
     * so this only marks the module; with the read slot not wrapped yet, the
     * wrap is left to a pending call (public API), which the main thread
     * runs at its next safe point.  Failing here only costs speed. */
    for (size_t i = 0; i < opt_ins.capacity; i++) {
        weak_entry *entry = &opt_ins.entries[i];
        if (entry->module == NULL || namespace_of(entry->module) != dict) {
            continue;
        }
        if (entry->flags & GETATTR_KEPT_IN_PLACE) {
            break;
        }
        entry->flags |= NAMESPACE_MAY_HOLD_GETATTR;
        if (entry->value == NULL) {
            if (getattro_is_wrapped() && relocation_marker != NULL) {
                Py_INCREF(relocation_marker);
                entry->value = relocation_marker;
                relocating_count++;
            }
            else if (!relocation_scheduled &&
                     Py_AddPendingCall(start_flagged_relocations, NULL) == 0) {
                relocation_scheduled = 1;
            }
        }
        break;
    }
    return 0;
}

/* 1 if *dict* is watched now, 0 if it cannot be. */
static int
watch_for_getattr(PyObject *dict)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (getattr_watcher < 0) {
        if (!is_main_interpreter()) {
            return 0;
        }
        int watcher = PyDict_AddWatcher(getattr_watch_callback);
        if (watcher < 0) {
            /* All eight watcher slots taken. */
            PyErr_Clear();
            return 0;
        }
        getattr_watcher = watcher;
        getattr_watcher_interp = interp;
    }
    if (interp != getattr_watcher_interp || PyDict_Watch(getattr_watcher, dict) < 0) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

void
stop_getattr_watcher(int release)
{
    if (release && getattr_watcher >= 0 && getattr_watcher_interp == PyInterpreterState_Get() &&
        PyDict_ClearWatcher(getattr_watcher) < 0) {
        PyErr_Clear();
    }
    getattr_watcher = -1;
    getattr_watcher_interp = NULL;
    relocation_scheduled = 0;
}
#  else
void
stop_getattr_watcher(int release)
{
    (void)release;
}
#  endif

/* Start relocating *module*'s __getattr__ (now, or once it has one). */
static int
track_module_getattr(PyObject *module)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry == NULL) {
        return 0;
    }
    if (entry->value == NULL) {
        PyObject *dict = namespace_of(module);
#  if HOOKLESS_CACHE
        if (dict != NULL) {
            if (getattr_key == NULL) {
                getattr_key = PyUnicode_InternFromString("__getattr__");
                if (getattr_key == NULL) {
                    return -1;
                }
            }
            /* Made here, so that the watcher never allocates it. */
            if (relocation_marker == NULL) {
                relocation_marker = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
                if (relocation_marker == NULL) {
                    return -1;
                }
            }
            /* Watched first: a __getattr__ stored from now on is seen. */
            int watched = watch_for_getattr(dict);
            entry = weak_table_find(&opt_ins, module);
            if (entry == NULL) {
                return 0;
            }
            entry->flags |= watched ? NAMESPACE_MAY_HOLD_GETATTR : NAMESPACE_UNWATCHED;
            int has = watched ? PyDict_Contains(dict, getattr_key) : 1;
            if (has <= 0) {
                return has;
            }
        }
#  else
        (void)dict;
#  endif
        if (start_relocating(module) < 0) {
            return -1;
        }
    }
    int error = 0;
    (void)relocated_getattr(module, &error);
    return error ? -1 : 0;
}

/* Stop relocating *module*'s __getattr__: the function goes back into the
 * namespace, and the read slot is unwrapped once no module needs it. */
static int
keep_getattr_in_place(PyObject *module)
{
    if (return_relocated_getattr(module) < 0) {
        return -1;
    }
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry == NULL || entry->value == NULL || entry->value != relocation_marker) {
        return 0;
    }
    entry->value = NULL;
    relocating_count--;
    /* Never the last reference (the global keeps one): runs no code. */
    Py_DECREF(relocation_marker);
    release_getattro_wrapper();
    return 0;
}

int
place_module_getattr(PyObject *module, int relocate_getattr, int chosen)
{
    weak_entry *entry = weak_table_find(&opt_ins, module);
    if (entry == NULL) {
        return 0;
    }
    if (!chosen && (entry->flags & GETATTR_PLACE_CHOSEN)) {
        /* The author's choice stands against a default. */
        relocate_getattr = !(entry->flags & GETATTR_KEPT_IN_PLACE);
    }
    if (relocate_getattr) {
        entry->flags &= ~GETATTR_KEPT_IN_PLACE;
    }
    else {
        entry->flags |= GETATTR_KEPT_IN_PLACE;
    }
    if (chosen) {
        entry->flags |= GETATTR_PLACE_CHOSEN;
    }
    return relocate_getattr ? track_module_getattr(module) : keep_getattr_in_place(module);
}

void
return_all_relocated(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    /* Listed first: each return stores into a namespace, where a key's
     * __eq__ or a finalizer may opt modules in or out and so move the
     * entries under a walk of the table. */
    PyObject *holding = PyList_New(0);
    for (size_t i = 0; holding != NULL && i < opt_ins.capacity; i++) {
        weak_entry *entry = &opt_ins.entries[i];
        if (entry->module != NULL && entry->value != NULL &&
            entry->value != relocation_marker && PyList_Append(holding, entry->module) < 0) {
            Py_CLEAR(holding);
        }
    }
    if (holding == NULL) {
        PyErr_WriteUnraisable(NULL);
    }
    for (Py_ssize_t i = 0; holding != NULL && i < PyList_GET_SIZE(holding); i++) {
        PyObject *module = PyList_GET_ITEM(holding, i);
        if (return_relocated_getattr(module) < 0) {
            PyErr_WriteUnraisable(module);
        }
    }
    Py_XDECREF(holding);
    PyErr_Restore(type, value, tb);
}
#else
void
stop_getattr_watcher(int release)
{
    (void)release;
}

int
place_module_getattr(PyObject *module, int relocate_getattr, int chosen)
{
    (void)module;
    (void)relocate_getattr;
    (void)chosen;
    return 0;
}

PyObject *
relocated_getattr(PyObject *module, int *error)
{
    (void)module;
    (void)error;
    return NULL;
}

int
return_relocated_getattr(PyObject *module)
{
    (void)module;
    return 0;
}

void
return_all_relocated(void)
{
}
#endif
