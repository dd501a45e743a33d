/* The "no hook here" cache (3.12+).
 *
 * Without a hook, a store costs the dictionary miss for '__setattr__' on top of
 * the store itself: about a fifth of a plain module store.  From 3.12 on a
 * dict watcher (public C API) tells us of every change to a watched dict, so a
 * namespace found to hold neither hook key can be remembered until a change
 * could have added one.  The cache is direct-mapped by the dict's address
 * and holds borrowed pointers: the watcher evicts a dict when a key that
 * could equal a hook key is added to it, when another dict is cloned into it
 * and when it is deallocated, so a pointer in it is always a live namespace
 * without hooks.  Only the interpreter that registered the watcher fills it
 * (watchers are per interpreter); any interpreter may read it, as the live
 * dicts of one interpreter are never another's.
 *
 * A namespace is watched only once stores through the slot have found it
 * without hooks HOOKLESS_WATCH_AFTER times (counted per slot, the last dict
 * seen there).  A watched dict reports every later change, the stores of
 * its own module's code included, so watching each namespace the import
 * system sets a few attributes on (__spec__, __loader__, __file__, ... just
 * before its module's body runs) made every name that body binds call into
 * the watcher: about 0.9 M instructions over pyperf's start-up on 3.12, paid
 * by every process that enabled a single module.  Namespaces stored into
 * through the slot again and again are the ones the cache is for.
 *
 * Before 3.12 nothing gives such a notice exactly: ma_version_tag changes with
 * our own store, and a finalizer of the value it replaces may add a hook in
 * between, so those versions look the hook up on every store. */
#include "native.h"

#if HOOKLESS_CACHE
PyObject *hookless[HOOKLESS_SLOTS];
static int hookless_watcher = -1;
static PyInterpreterState *hookless_interp = NULL;
/* Bumped whenever a watched dict may have gained a hook key, so that a dict
 * checked while a lookup ran foreign code (an __eq__ of a non-str key) is not
 * remembered on a stale answer. */
static unsigned long hookless_generation = 0;
static int hookless_atexit_registered = 0;
#define HOOKLESS_WATCH_AFTER 8
/* Per slot, the last namespace found without hooks and how many times in a
 * row: only compared with, never read through (it may be dead). */
static PyObject *hookless_candidate[HOOKLESS_SLOTS];
static unsigned char hookless_misses[HOOKLESS_SLOTS];

/* Whether a dict lookup of '__setattr__' or '__delattr__' could find *key*:
 * any object but an exact str may compare equal to them. */
static int
may_be_hook_key(PyObject *key)
{
    if (key == setattr_key || key == delattr_key || !PyUnicode_CheckExact(key)) {
        return 1;
    }
    return PyUnicode_GET_LENGTH(key) == PyUnicode_GET_LENGTH(setattr_key) &&
           (PyUnicode_Compare(key, setattr_key) == 0 || PyUnicode_Compare(key, delattr_key) == 0);
}

static void
unwatch_quietly(PyObject *dict)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyDict_Unwatch(hookless_watcher, dict) < 0) {
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
}

static int
hookless_watch_callback(PyDict_WatchEvent event, PyObject *dict, PyObject *key,
                        PyObject *new_value)
{
    (void)new_value;
    switch (event) {
    case PyDict_EVENT_ADDED:
    case PyDict_EVENT_MODIFIED:
        if (!may_be_hook_key(key)) {
            return 0;
        }
        break;
    case PyDict_EVENT_DELETED:
    case PyDict_EVENT_CLEARED:
        /* Removing keys never adds a hook. */
        return 0;
    default:
        /* CLONED (another dict's items copied in) and DEALLOCATED. */
        break;
    }
    hookless_generation++;
    size_t slot = hookless_slot(dict);
    if (hookless[slot] == dict) {
        hookless[slot] = NULL;
        if (event != PyDict_EVENT_DEALLOCATED) {
            unwatch_quietly(dict);
        }
    }
    return 0;
}

/* Remember *dict* if it holds neither hook key.  Never raises. */
void
remember_hookless(PyObject *dict)
{
    if (hookless_watcher < 0 || PyInterpreterState_Get() != hookless_interp) {
        return;
    }
    size_t slot = hookless_slot(dict);
    if (hookless_candidate[slot] != dict) {
        hookless_candidate[slot] = dict;
        hookless_misses[slot] = 1;
        return;
    }
    if (++hookless_misses[slot] < HOOKLESS_WATCH_AFTER) {
        return;
    }
    hookless_misses[slot] = 0;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    unsigned long generation = hookless_generation;
    /* Watched first: a change made from now on is seen by the callback. */
    if (PyDict_Watch(hookless_watcher, dict) == 0) {
        int has_set = PyDict_Contains(dict, setattr_key);
        int has_del = has_set == 0 ? PyDict_Contains(dict, delattr_key) : has_set;
        if (has_set == 0 && has_del == 0 && generation == hookless_generation) {
            PyObject *previous = hookless[slot];
            hookless[slot] = dict;
            if (previous != NULL && previous != dict) {
                unwatch_quietly(previous);
            }
        }
        else if (hookless[slot] != dict) {
            unwatch_quietly(dict);
        }
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* Empty the cache and stop watching (uninstall, interpreter finalization). */
static void
forget_all_hookless(void)
{
    int unwatch = hookless_watcher >= 0 && hookless_interp != NULL &&
                  PyInterpreterState_Get() == hookless_interp;
    for (size_t i = 0; i < HOOKLESS_SLOTS; i++) {
        if (hookless[i] != NULL && unwatch) {
            unwatch_quietly(hookless[i]);
        }
        hookless[i] = NULL;
        hookless_candidate[i] = NULL;
        hookless_misses[i] = 0;
    }
    hookless_generation++;
}

/* Py_FinalizeEx runs this after the interpreter is gone: the cached pointers
 * must not outlive it into a re-initialised one. */
static void
hookless_at_exit(void)
{
    for (size_t i = 0; i < HOOKLESS_SLOTS; i++) {
        hookless[i] = NULL;
        hookless_candidate[i] = NULL;
        hookless_misses[i] = 0;
    }
    hookless_watcher = -1;
    hookless_interp = NULL;
    hookless_atexit_registered = 0;
}

/* Register the watcher in the patching interpreter (install()).  Failure
 * only costs speed, so it never raises. */
void
start_hookless_cache(void)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (hookless_watcher >= 0 && hookless_interp == interp) {
        return;
    }
    forget_all_hookless();
    if (!hookless_atexit_registered) {
        if (Py_AtExit(hookless_at_exit) < 0) {
            return;
        }
        hookless_atexit_registered = 1;
    }
    int watcher = PyDict_AddWatcher(hookless_watch_callback);
    if (watcher < 0) {
        /* All eight watcher slots taken: look the hook up every time. */
        PyErr_Clear();
        return;
    }
    hookless_watcher = watcher;
    hookless_interp = interp;
}

void
stop_hookless_cache(void)
{
    if (hookless_watcher < 0) {
        return;
    }
    forget_all_hookless();
    if (hookless_interp == PyInterpreterState_Get() && PyDict_ClearWatcher(hookless_watcher) < 0) {
        PyErr_Clear();
    }
    hookless_watcher = -1;
    hookless_interp = NULL;
}
#else
/* ISO C wants something in every translation unit. */
typedef int hookless_cache_is_for_3_12_and_later;
#endif
