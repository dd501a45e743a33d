/* The "no hook here" cache (3.11+).
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
 * between.  3.11 has the version of a dict's keys instead (second half of
 * this file); 3.8-3.10 look the hook up on every store. */
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
#elif KEYS_VERSION_CACHE
/* 3.11: no watcher, but the keys of a dict carry a version (dk_version)
 * that CPython's specialising interpreter gives them when it caches a
 * global or module attribute lookup, and resets to 0 whenever a key is
 * added or removed: its own LOAD_GLOBAL_BUILTIN relies on that to know a
 * name is still absent from a module's globals, which is what this cache
 * needs to know of the hook keys.  Versions come from one counter and are
 * never given twice (a copied dict's keys start at 0), so a version found
 * without hook keys vouches for every dict that still has it: a store of an
 * existing name keeps it, anything that adds a key (a finalizer run by the
 * store included) drops it.  Reading it needs the head of the internal keys
 * struct, checked below against the running interpreter; the version itself
 * is only read, never assigned (the function that assigns one is not
 * exported), so a namespace no specialised code reads is looked up on every
 * store, as before.  Lookups in a dict whose keys are all exact str run no
 * Python code, so only such dicts are remembered. */
#define DICT_KEYS_UNICODE_3_11 1
uint32_t hookless_versions[HOOKLESS_SLOTS];
/* 1: the running interpreter's keys struct starts as keys_head_3_11 says. */
static int keys_head_checked = 0;
static int versions_atexit_registered = 0;

void
remember_hookless(PyObject *dict)
{
    if (!keys_head_checked || !PyDict_CheckExact(dict) ||
        ((PyDictObject *)dict)->ma_values != NULL) {
        return;
    }
    PyDictKeysObject *keys = ((PyDictObject *)dict)->ma_keys;
    keys_head_3_11 *head = (keys_head_3_11 *)keys;
    uint32_t version = head->dk_version;
    if (version == 0 || head->dk_kind != DICT_KEYS_UNICODE_3_11) {
        return;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int has = PyDict_Contains(dict, setattr_key);
    if (has == 0) {
        has = PyDict_Contains(dict, delattr_key);
    }
    if (has == 0 && ((PyDictObject *)dict)->ma_keys == keys && head->dk_version == version) {
        hookless_versions[hookless_slot(dict)] = version;
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* Check keys_head_3_11 against a dict made here: one str key in the
 * smallest table (8 slots of one byte: log2 sizes 3 and 3), all keys str,
 * no version yet; a non-str key makes the keys general. */
static int
keys_head_matches(void)
{
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return 0;
    }
    int ok = 0;
    if (PyDict_SetItem(dict, setattr_key, Py_None) == 0) {
        keys_head_3_11 *head = (keys_head_3_11 *)((PyDictObject *)dict)->ma_keys;
        ok = head->dk_refcnt == 1 && head->dk_log2_size == 3 && head->dk_log2_index_bytes == 3 &&
             head->dk_kind == DICT_KEYS_UNICODE_3_11 && head->dk_version == 0;
        if (ok && PyDict_SetItem(dict, Py_None, Py_None) == 0) {
            head = (keys_head_3_11 *)((PyDictObject *)dict)->ma_keys;
            ok = head->dk_kind != DICT_KEYS_UNICODE_3_11 && head->dk_version == 0;
        }
    }
    Py_DECREF(dict);
    PyErr_Clear();
    return ok;
}

/* After Py_FinalizeEx: a runtime initialised again in this process may
 * count keys versions from the start again, so none of ours may outlive
 * this one. */
static void
forget_hookless_versions(void)
{
    memset(hookless_versions, 0, sizeof(hookless_versions));
    keys_head_checked = 0;
    versions_atexit_registered = 0;
}

/* install(): check the struct once.  Never raises. */
void
start_hookless_cache(void)
{
    if (!versions_atexit_registered) {
        if (Py_AtExit(forget_hookless_versions) < 0) {
            /* Without it the table must stay empty. */
            return;
        }
        versions_atexit_registered = 1;
    }
    if (!keys_head_checked) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        keys_head_checked = keys_head_matches();
        PyErr_Restore(type, value, tb);
    }
}
#else
/* ISO C wants something in every translation unit. */
typedef int hookless_cache_is_for_3_11_and_later;
#endif
