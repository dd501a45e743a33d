/* pep726hook._native: PEP 726 for every module by patching the module type's
 * store/delete slot, the way the reference implementation (CPython PR #108261)
 * did inside Objects/moduleobject.c.
 *
 * Design (see docs/native-engine.md for the measurements behind it):
 *
 *   ModuleType.__dict__['__setattr__'] / ['__delattr__'] become C method
 *   descriptors (METH_FASTCALL) that look the hook up in the module's own
 *   namespace, call it, and otherwise do the generic store/delete.  They are
 *   what `super().__setattr__` in a ModuleType subclass reaches, so the
 *   subclass runs first and the module hook second (the MRO rule).
 *
 *   ModuleType->tp_setattro points straight at hooked_setattro(), so
 *   `mod.x = v` costs one C call, the hook check and the store.  On 3.8-3.12
 *   typeobject.c's hackcheck() then rejects `object.__setattr__(mod, ...)`
 *   (and __delattr__): it refuses a module as soon as ModuleType's slot is a
 *   C function other than the generic one.  Those slot wrappers are only ever
 *   called through the tp_call of wrapper_descriptor and method-wrapper, so
 *   while patched both tp_calls are wrapped (the "call guard" below): calls
 *   of a slot wrapper of the generic store on a module run an emulation of
 *   hackcheck() in which hooked_setattro counts as the generic function,
 *   then the generic store; everything else goes to CPython's own call.  If
 *   the guard's layout checks fail, install() falls back to the former slot
 *   design (the slot is the interpreter's own slot_tp_setattro, which
 *   hackcheck() skips, calling the method descriptors above).  3.13 applies
 *   hackcheck() to type objects only and needs no guard.
 *
 * Everything here uses the public C API.  The patch of the slot is
 * process-wide and belongs to the main interpreter; the namespace entries live
 * in the type dict, which is shared by every interpreter up to 3.11 and is per
 * interpreter from 3.12 on (PyType_GetDict).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030D0000
/* hackcheck() was relaxed in 3.13 to only guard type objects. */
#  define DIRECT_SLOT_IS_SAFE 1
#else
#  define DIRECT_SLOT_IS_SAFE 0
#endif

/* ---- process-wide state (guarded by the GIL: the module refuses to load in
 * interpreters with their own GIL and is not built for free-threading) ---- */

/* The module type's slot before we patched it (the generic one). */
static setattrofunc original_setattro = NULL;
/* What we put in the slot: slot_tp_setattro or hooked_setattro. */
static setattrofunc installed_setattro = NULL;
/* The interpreter that patched the slot, or NULL when unpatched. */
static PyInterpreterState *patch_owner = NULL;
/* Interned "__setattr__" / "__delattr__".  From 3.12 on these are CPython's
 * statically allocated, immortal identifiers, so hooked_setattro() may use them
 * from any interpreter; before 3.12 all interpreters share one GIL. */
static PyObject *setattr_key = NULL;
static PyObject *delattr_key = NULL;

/* ---- what install() put into a ModuleType dict, and what it replaced ---- */

typedef struct {
    /* Whether our descriptors are in this interpreter's ModuleType dict. */
    int installed;
    /* The entries install() replaced in ModuleType.__dict__, restored by
     * uninstall(); NULL when the key was absent (3.13 dropped ModuleType's own
     * tp_setattro, so its dict has no '__setattr__' there). */
    PyObject *saved_setattr;
    PyObject *saved_delattr;
    /* Our method descriptors, to put there and to recognise them. */
    PyObject *setattr_descr;
    PyObject *delattr_descr;
} entries_t;

/* The main interpreter's entries live for the whole process, outside any
 * module object: a second instance of this module (sys.modules entry deleted
 * and imported again) must find the originals the first one saved. */
static entries_t main_entries = {0, NULL, NULL, NULL, NULL};

/* Module state: the entries of a sub-interpreter, whose ModuleType dict is its
 * own from 3.12 on. */
typedef struct {
    entries_t entries;
} native_state;

static native_state *
get_state(PyObject *module)
{
    return (native_state *)PyModule_GetState(module);
}

#if PY_VERSION_HEX < 0x03090000
/* 3.8 has neither PyInterpreterState_Get() nor PyThreadState_GetInterpreter();
 * the thread state's interp field is the documented way there. */
#  define PyInterpreterState_Get() (PyThreadState_Get()->interp)
#endif

static int
is_main_interpreter(void)
{
    return PyInterpreterState_Get() == PyInterpreterState_Main();
}

static PyMethodDef setattr_def;
static PyMethodDef delattr_def;
static PyObject *new_hook_descr(int deleting);

/* The entries of the current interpreter, descriptors created on first use. */
static entries_t *
get_entries(PyObject *module)
{
    entries_t *entries;
    if (is_main_interpreter()) {
        entries = &main_entries;
    }
    else {
        native_state *state = get_state(module);
        if (state == NULL) {
            return NULL;
        }
        entries = &state->entries;
    }
    /* The main interpreter's entries are the lean descriptor type that
     * slot_tp_setattro calls on every store; a sub-interpreter gets method
     * descriptors, its own objects, whose type is CPython's. */
    int main = entries == &main_entries;
    if (entries->setattr_descr == NULL) {
        entries->setattr_descr =
            main ? new_hook_descr(0) : PyDescr_NewMethod(&PyModule_Type, &setattr_def);
        if (entries->setattr_descr == NULL) {
            return NULL;
        }
    }
    if (entries->delattr_descr == NULL) {
        entries->delattr_descr =
            main ? new_hook_descr(1) : PyDescr_NewMethod(&PyModule_Type, &delattr_def);
        if (entries->delattr_descr == NULL) {
            return NULL;
        }
    }
    return entries;
}

static PyObject *
module_type_dict(void)
{
    /* Returns a new reference. */
#if PY_VERSION_HEX >= 0x030C0000
    /* Static builtin types keep their dict per interpreter from 3.12 on;
     * tp_dict is NULL there. */
    return PyType_GetDict(&PyModule_Type);
#else
    PyObject *dict = PyModule_Type.tp_dict;
    if (dict == NULL) {
        PyErr_SetString(PyExc_SystemError, "ModuleType has no type dict");
        return NULL;
    }
    Py_INCREF(dict);
    return dict;
#endif
}

/* ---- the hook dispatch ---- */

static PyObject *
call_hook(PyObject *hook, PyObject *name, PyObject *value)
{
#if PY_VERSION_HEX >= 0x03090000
    PyObject *args[2] = {name, value};
    return PyObject_Vectorcall(hook, args, value == NULL ? 1 : 2, NULL);
#else
    /* 3.8 only has the provisional _PyObject_Vectorcall. */
    if (value == NULL) {
        return PyObject_CallFunctionObjArgs(hook, name, NULL);
    }
    return PyObject_CallFunctionObjArgs(hook, name, value, NULL);
#endif
}

/* ---- when a store on an exact module is a plain dict store ----
 *
 * The generic store first looks the name up on the type for a data
 * descriptor.  ModuleType and object define none under other than dunder
 * names, but their dicts can be changed from outside (ctypes, the
 * forbiddenfruit recipe), which then calls PyType_Modified() as CPython's own
 * method cache needs.  So the answer is cached against ModuleType's version
 * tag, which that invalidates, and computed again when the tag changes.
 * Only the main interpreter computes it (interpreters with their own GIL must
 * not write these); until it has, other interpreters take the generic
 * store. */
static unsigned int fast_store_tag = 0;
static int fast_store_ok = 0;

/* 1 if *type*'s dict has a data descriptor under a name the fast path takes
 * (anything but a str starting with "__"), 0 if not, -1 on error. */
static int
has_plain_named_data_descriptor(PyTypeObject *type)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *dict = PyType_GetDict(type);
#else
    PyObject *dict = type->tp_dict;
    Py_XINCREF(dict);
#endif
    if (dict == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int found = 0;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (!found && PyDict_Next(dict, &pos, &key, &value)) {
        int dunder = PyUnicode_Check(key) && PyUnicode_GET_LENGTH(key) >= 2 &&
                     PyUnicode_READ_CHAR(key, 0) == '_' && PyUnicode_READ_CHAR(key, 1) == '_';
        found = !dunder && Py_TYPE(value)->tp_descr_set != NULL;
    }
    Py_DECREF(dict);
    return found;
}

/* Whether ModuleType's version tag is valid: 3.13 stopped setting
 * Py_TPFLAGS_VALID_VERSION_TAG, a zero tag means invalid there. */
static int
module_type_tag_is_valid(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyModule_Type.tp_version_tag != 0;
#else
    return (PyModule_Type.tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
           PyModule_Type.tp_version_tag != 0;
#endif
}

static int plain_store_is_dict_store_slow(void);

static inline int
plain_store_is_dict_store(void)
{
    /* The hot path: no interpreter check, it would cost a quarter of a
     * store (see docs/native-engine.md for what sub-interpreters miss). */
    if (PyModule_Type.tp_version_tag == fast_store_tag && module_type_tag_is_valid()) {
        return fast_store_ok;
    }
    return plain_store_is_dict_store_slow();
}

static int
plain_store_is_dict_store_slow(void)
{
    if (!is_main_interpreter()) {
        return 0;
    }
    /* A type attribute lookup gives ModuleType a valid tag again. */
    PyObject *probe = PyObject_GetAttr((PyObject *)&PyModule_Type, setattr_key);
    if (probe == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(probe);
    if (!module_type_tag_is_valid()) {
        /* No tag to cache against (CPython ran out of tags): ask every time. */
        return 0;
    }
    unsigned int tag = PyModule_Type.tp_version_tag;
    int found = has_plain_named_data_descriptor(&PyModule_Type);
    if (found == 0) {
        found = has_plain_named_data_descriptor(&PyBaseObject_Type);
    }
    if (found < 0) {
        PyErr_Clear();
        return 0;
    }
    fast_store_ok = !found;
    fast_store_tag = tag;
    return fast_store_ok;
}

/* Whether calling *hook* enters the interpreter's recursion check itself:
 * a Python function (or a method of one) runs in a new frame, which does. */
static int
hook_counts_its_own_level(PyObject *hook)
{
    if (PyMethod_Check(hook)) {
        hook = PyMethod_GET_FUNCTION(hook);
    }
    return PyFunction_Check(hook);
}

/* ---- whose hooks are called ----
 *
 * A library's enable() gives PEP 726 hooks to its own module only: while
 * process-wide dispatch is off, the patched slot calls the hooks of opted-in
 * modules and does the plain store for every other module, hook or not.  The
 * check runs only once a hook has been found in the namespace, so a store on
 * a module without hooks (nearly all of them) pays nothing for it.
 *
 * The opted-in modules are held weakly: an open-addressing table of module
 * addresses (linear probing, backward-shift deletion), each with a weak
 * reference whose callback removes the entry while the module is being
 * deallocated, before its memory can be reused by a new module.  The table
 * owns the weak references (a reachable weak reference always gets its
 * callback, in the cyclic garbage collector too). */
static int process_wide = 0;

typedef struct {
    PyObject *module; /* borrowed: the weak reference's callback removes it */
    PyObject *ref;    /* owned weak reference to module */
} opt_in_entry;

static opt_in_entry *opt_in_table = NULL;
static size_t opt_in_capacity = 0; /* 0 or a power of two */
static size_t opt_in_count = 0;
/* The weak references' callback (forget_opted_in below). */
static PyObject *opt_in_callback = NULL;

static inline size_t
opt_in_home(PyObject *module)
{
    uintptr_t address = (uintptr_t)module;
    return (size_t)((address >> 4) ^ (address >> 13)) & (opt_in_capacity - 1);
}

static int
is_opted_in(PyObject *module)
{
    if (opt_in_count == 0) {
        return 0;
    }
    size_t mask = opt_in_capacity - 1;
    for (size_t i = opt_in_home(module); opt_in_table[i].module != NULL; i = (i + 1) & mask) {
        if (opt_in_table[i].module == module) {
            return 1;
        }
    }
    return 0;
}

/* Whether the hooks of *module* are called: process-wide, or opted in. */
static inline int
hooks_dispatched(PyObject *module)
{
    return process_wide || is_opted_in(module);
}

/* Insert without growing; the caller made room. */
static void
opt_in_put(PyObject *module, PyObject *ref)
{
    size_t mask = opt_in_capacity - 1;
    size_t i = opt_in_home(module);
    while (opt_in_table[i].module != NULL) {
        i = (i + 1) & mask;
    }
    opt_in_table[i].module = module;
    opt_in_table[i].ref = ref;
    opt_in_count++;
}

static int
opt_in_grow(void)
{
    size_t capacity = opt_in_capacity == 0 ? 16 : opt_in_capacity * 2;
    opt_in_entry *table = (opt_in_entry *)PyMem_RawCalloc(capacity, sizeof(opt_in_entry));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    opt_in_entry *old = opt_in_table;
    size_t old_capacity = opt_in_capacity;
    opt_in_table = table;
    opt_in_capacity = capacity;
    opt_in_count = 0;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].module != NULL) {
            opt_in_put(old[i].module, old[i].ref);
        }
    }
    PyMem_RawFree(old);
    return 0;
}

/* Remove the entry at *i*, moving later entries of its probe run back so
 * that every entry stays reachable from its home slot.  Returns the entry's
 * weak reference (owned) for the caller to release. */
static PyObject *
opt_in_remove_at(size_t i)
{
    size_t mask = opt_in_capacity - 1;
    PyObject *ref = opt_in_table[i].ref;
    opt_in_table[i].module = NULL;
    opt_in_table[i].ref = NULL;
    opt_in_count--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (opt_in_table[j].module == NULL) {
            break;
        }
        size_t home = opt_in_home(opt_in_table[j].module);
        /* The entry at j stays if its home lies cyclically in (i, j]. */
        int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            opt_in_table[i] = opt_in_table[j];
            opt_in_table[j].module = NULL;
            opt_in_table[j].ref = NULL;
            i = j;
        }
    }
    return ref;
}

/* The weak references' callback: the module is being deallocated. */
static PyObject *
forget_opted_in(PyObject *self, PyObject *ref)
{
    (void)self;
    for (size_t i = 0; i < opt_in_capacity; i++) {
        if (opt_in_table[i].ref == ref) {
            Py_DECREF(opt_in_remove_at(i));
            break;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef forget_opted_in_def = {"_forget_opted_in", forget_opted_in, METH_O, NULL};

static int
opt_in_module(PyObject *module)
{
    if (is_opted_in(module)) {
        return 0;
    }
    if (opt_in_callback == NULL) {
        opt_in_callback = PyCFunction_New(&forget_opted_in_def, NULL);
        if (opt_in_callback == NULL) {
            return -1;
        }
    }
    if ((opt_in_count + 1) * 2 > opt_in_capacity && opt_in_grow() < 0) {
        return -1;
    }
    PyObject *ref = PyWeakref_NewRef(module, opt_in_callback);
    if (ref == NULL) {
        return -1;
    }
    opt_in_put(module, ref);
    return 0;
}

/* Forget every opt-in.  *release* is 0 when the runtime that made the weak
 * references is gone: then only the pointers are dropped. */
static void
forget_all_opt_ins(int release)
{
    opt_in_entry *table = opt_in_table;
    size_t capacity = opt_in_capacity;
    opt_in_table = NULL;
    opt_in_capacity = 0;
    opt_in_count = 0;
    if (table == NULL) {
        return;
    }
    for (size_t i = 0; release && i < capacity; i++) {
        Py_XDECREF(table[i].ref);
    }
    PyMem_RawFree(table);
}

/* ---- the "no hook here" cache (3.12+) ----
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
 * Before 3.12 nothing gives such a notice exactly: ma_version_tag changes with
 * our own store, and a finalizer of the value it replaces may add a hook in
 * between, so those versions look the hook up on every store. */
#if PY_VERSION_HEX >= 0x030C0000
#  define HOOKLESS_CACHE 1
#  define HOOKLESS_SLOTS 256
static PyObject *hookless[HOOKLESS_SLOTS];
static int hookless_watcher = -1;
static PyInterpreterState *hookless_interp = NULL;
/* Bumped whenever a watched dict may have gained a hook key, so that a dict
 * checked while a lookup ran foreign code (an __eq__ of a non-str key) is not
 * remembered on a stale answer. */
static unsigned long hookless_generation = 0;
static int hookless_atexit_registered = 0;

static inline size_t
hookless_slot(PyObject *dict)
{
    uintptr_t address = (uintptr_t)dict;
    return (size_t)((address >> 4) ^ (address >> 12)) & (HOOKLESS_SLOTS - 1);
}

static inline int
known_hookless(PyObject *dict)
{
    return hookless[hookless_slot(dict)] == dict;
}

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
static void
remember_hookless(PyObject *dict)
{
    if (hookless_watcher < 0 || PyInterpreterState_Get() != hookless_interp) {
        return;
    }
    size_t slot = hookless_slot(dict);
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
    }
    hookless_watcher = -1;
    hookless_interp = NULL;
    hookless_atexit_registered = 0;
}

/* Register the watcher in the patching interpreter (install()).  Failure
 * only costs speed, so it never raises. */
static void
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

static void
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
#  define HOOKLESS_CACHE 0
#endif

/* Whether this store is LazyLoader ending a lazy load: PyPy 3.11 and CPython
 * 3.12.3-3.12.x end it with a plain `self.__class__ = types.ModuleType` in
 * importlib.util._LazyModule.__getattribute__ (3.13+ use object.__setattr__,
 * gh-117182).  That is import-system bookkeeping, which no hook may see (issue
 * 10); the module's class is still _LazyModule while it happens.  Matched by
 * name: test_importlib makes fresh copies of importlib.util. */
static int
is_lazy_load_ending(PyObject *self, PyObject *name)
{
    PyTypeObject *type = Py_TYPE(self);
    if (type == &PyModule_Type || strcmp(type->tp_name, "_LazyModule") != 0 ||
        !PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "__class__") != 0) {
        return 0;
    }
    PyObject *owner = type->tp_dict == NULL ? NULL : PyDict_GetItemString(type->tp_dict, "__module__");
    return owner != NULL && PyUnicode_Check(owner) &&
           PyUnicode_CompareWithASCIIString(owner, "importlib.util") == 0;
}

/* Calls the *hook* found in a module's namespace for a store (*value*) or a
 * deletion (NULL) of *name*; its result is ignored. */
static int
call_module_hook(PyObject *hook, PyObject *name, PyObject *value)
{
    /* The hook may delete itself or clear the namespace while it runs; hold
     * our own reference for the duration of the call. */
    Py_INCREF(hook);
    /* A hook that stores on its own module recurses through here; the C
     * stack must end in RecursionError, not a crash.  A Python function
     * counts its own frame, as the reference implementation relied on;
     * counting it again here made stores at the recursion limit fail one
     * level early (issue 13).  Anything else (a functools.partial of setattr
     * recurses in C alone) is counted. */
    int counted = !hook_counts_its_own_level(hook);
    if (counted && Py_EnterRecursiveCall(" in a module __setattr__/__delattr__ hook")) {
        Py_DECREF(hook);
        return -1;
    }
    PyObject *result = call_hook(hook, name, value);
    if (counted) {
        Py_LeaveRecursiveCall();
    }
    Py_DECREF(hook);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* Whether *name* (a str) starts with two underscores: the only names under
 * which ModuleType and object have data descriptors. */
static inline int
is_dunder_name(PyObject *name)
{
    return PyUnicode_GET_LENGTH(name) >= 2 && PyUnicode_READ_CHAR(name, 0) == '_' &&
           PyUnicode_READ_CHAR(name, 1) == '_';
}

/* The reference implementation's module_setattro: the hook is looked up in the
 * module's own namespace only (no type lookup, no __getattr__); a key present
 * with any value, None included, is called; its result is ignored.  Every
 * case; hooked_setattro() below takes the common one first. */
static int
hooked_setattro_general(PyObject *self, PyObject *name, PyObject *value)
{
    PyObject *dict = PyModule_Check(self) ? PyModule_GetDict(self) : NULL;
    if (dict != NULL && PyDict_Check(dict)) {
#if HOOKLESS_CACHE
        if (known_hookless(dict)) {
            goto no_hook;
        }
#endif
        PyObject *key = value == NULL ? delattr_key : setattr_key;
        PyObject *hook = PyDict_GetItemWithError(dict, key);
        if (hook != NULL) {
            if (hooks_dispatched(self) && !(value != NULL && is_lazy_load_ending(self, name))) {
                return call_module_hook(hook, name, value);
            }
        }
        else if (PyErr_Occurred()) {
            return -1;
        }
#if HOOKLESS_CACHE
        else {
            remember_hookless(dict);
        }
    no_hook:
#endif
        if (value != NULL && Py_TYPE(self) == &PyModule_Type && PyUnicode_Check(name) &&
            !is_dunder_name(name) && plain_store_is_dict_store()) {
            /* Fast path for the common store, which decides the cost of the
             * patch on every module: the generic store would first look the
             * name up on the type for a data descriptor, and the only ones
             * ModuleType and object have (__class__, __dict__,
             * __annotations__) are dunder names, and anything added to
             * their dicts from outside is caught by
             * plain_store_is_dict_store().  So for an exact ModuleType and
             * any other name it is exactly a dict store. */
            return PyDict_SetItem(dict, name, value);
        }
    }
    else if (PyErr_Occurred()) {
        return -1;
    }
    return PyObject_GenericSetAttr(self, name, value);
}

/* What the slot holds: the store of a non-dunder str name on an exact
 * ModuleType, which decides the cost of the patch on every module, in as few
 * instructions as it can be done exactly (issue 14); everything else, and
 * every module with a hook, goes to hooked_setattro_general().  The namespace
 * is read through tp_dictoffset, public and fixed for ModuleType (md_dict;
 * NULL for a module made by ModuleType.__new__ alone on 3.8, which the general
 * path handles). */
static int
hooked_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    if (Py_TYPE(self) != &PyModule_Type || value == NULL || !PyUnicode_CheckExact(name)) {
        return hooked_setattro_general(self, name, value);
    }
    PyObject *dict = *(PyObject **)((char *)self + PyModule_Type.tp_dictoffset);
    if (dict == NULL || !PyDict_CheckExact(dict)) {
        return hooked_setattro_general(self, name, value);
    }
#if HOOKLESS_CACHE
    if (!known_hookless(dict)) {
        return hooked_setattro_general(self, name, value);
    }
#else
    /* The hash of the interned key, computed when it was interned; no
     * PyDict_GetItemWithError() wrapper around the same lookup. */
    Py_hash_t hash = ((PyASCIIObject *)setattr_key)->hash;
    if (hash == -1) {
        return hooked_setattro_general(self, name, value);
    }
    PyObject *hook = _PyDict_GetItem_KnownHash(dict, setattr_key, hash);
    if (hook != NULL) {
        /* An exact ModuleType is never the _LazyModule of is_lazy_load_ending(). */
        if (hooks_dispatched(self)) {
            return call_module_hook(hook, name, value);
        }
    }
    else if (PyErr_Occurred()) {
        return -1;
    }
#endif
    if (!is_dunder_name(name) && plain_store_is_dict_store()) {
        /* See hooked_setattro_general(): exactly a dict store here. */
        return PyDict_SetItem(dict, name, value);
    }
    return PyObject_GenericSetAttr(self, name, value);
}

static int
check_name(PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    return 0;
}

/* ModuleType.__setattr__(self, name, value) as a plain method descriptor, for
 * the entries of sub-interpreters (the type below is a static type of this
 * extension, used by the main interpreter only).  The method descriptor has
 * already checked that self is a module. */
static PyObject *
module_setattr_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "expected 2 arguments, got %zd", nargs);
        return NULL;
    }
    if (check_name(args[0]) < 0 || hooked_setattro(self, args[0], args[1]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ModuleType.__delattr__(self, name). */
static PyObject *
module_delattr_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "expected 1 argument, got %zd", nargs);
        return NULL;
    }
    if (check_name(args[0]) < 0 || hooked_setattro(self, args[0], NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef setattr_def = {
    "__setattr__", (PyCFunction)(void (*)(void))module_setattr_method, METH_FASTCALL,
    /* The text signature keeps inspect.signature(ModuleType.__setattr__)
     * working, as it does for the slot wrapper this replaces (CPython's
     * test_inspect test_types_module_has_signatures). */
    "__setattr__($self, name, value, /)\n--\n\n"
    "Implement setattr(self, name, value), calling the module's own __setattr__ "
    "hook when its namespace defines one (PEP 726)."};

static PyMethodDef delattr_def = {
    "__delattr__", (PyCFunction)(void (*)(void))module_delattr_method, METH_FASTCALL,
    "__delattr__($self, name, /)\n--\n\n"
    "Implement delattr(self, name), calling the module's own __delattr__ "
    "hook when its namespace defines one (PEP 726)."};

/* ---- ModuleType.__setattr__ / __delattr__ ----
 *
 * What slot_tp_setattro calls on every module store on 3.8-3.12, so each
 * instruction here is paid by every store.  A method descriptor
 * (PyDescr_NewMethod) would check its arguments in method_vectorcall_FASTCALL
 * (an isinstance through PyObject_TypeCheck), enter a recursion guard and
 * call our function; this type is a method descriptor too
 * (Py_TPFLAGS_METHOD_DESCRIPTOR: slot_tp_setattro and super() call it
 * unbound, no bound method is made) whose vectorcall goes straight to the
 * dispatch.  The hook call has its own recursion guard. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    /* 0: __setattr__(self, name, value); 1: __delattr__(self, name). */
    int deleting;
} hook_descr;

static PyTypeObject hook_descr_type;

static const char *
hook_descr_name(hook_descr *descr)
{
    return descr->deleting ? "__delattr__" : "__setattr__";
}

/* The error of a call that is not (module, str[, value]), worded like the
 * method descriptor's; kept out of the fast path. */
static PyObject *
hook_descr_bad_call(hook_descr *descr, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    const char *name = hook_descr_name(descr);
    Py_ssize_t expected = descr->deleting ? 1 : 2;
    if (nargs < 1) {
        PyErr_Format(PyExc_TypeError, "descriptor '%s' of 'module' object needs an argument",
                     name);
    }
    else if (!PyModule_Check(args[0])) {
        PyErr_Format(PyExc_TypeError,
                     "descriptor '%s' for 'module' objects doesn't apply to a '%.100s' object",
                     name, Py_TYPE(args[0])->tp_name);
    }
    else if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", name);
    }
    else if (nargs - 1 != expected) {
        PyErr_Format(PyExc_TypeError, "expected %zd argument%s, got %zd", expected,
                     expected == 1 ? "" : "s", nargs - 1);
    }
    else {
        PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
                     Py_TYPE(args[1])->tp_name);
    }
    return NULL;
}

static PyObject *
hook_descr_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames)
{
    hook_descr *descr = (hook_descr *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 - descr->deleting || kwnames != NULL || !PyModule_Check(args[0]) ||
        !PyUnicode_Check(args[1])) {
        return hook_descr_bad_call(descr, args, nargs, kwnames);
    }
    if (hooked_setattro(args[0], args[1], descr->deleting ? NULL : args[2]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
hook_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    if (!PyModule_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "descriptor '%s' for 'module' objects doesn't apply to a '%.100s' object",
                     hook_descr_name((hook_descr *)self), Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyMethod_New(self, obj);
}

static PyObject *
hook_descr_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<method '%s' of 'module' objects>",
                                hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_qualname(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromFormat("module.%s", hook_descr_name((hook_descr *)self));
}

static PyObject *
hook_descr_get_objclass(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    Py_INCREF((PyObject *)&PyModule_Type);
    return (PyObject *)&PyModule_Type;
}

/* The text signature keeps inspect.signature(ModuleType.__setattr__) working,
 * as it does for the slot wrapper this replaces (CPython's test_inspect
 * test_types_module_has_signatures). */
static PyObject *
hook_descr_get_text_signature(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(((hook_descr *)self)->deleting ? "($self, name, /)"
                                                               : "($self, name, value, /)");
}

static PyObject *
hook_descr_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(
        ((hook_descr *)self)->deleting
            ? "Implement delattr(self, name), calling the module's own __delattr__ hook "
              "when its namespace defines one (PEP 726)."
            : "Implement setattr(self, name, value), calling the module's own __setattr__ "
              "hook when its namespace defines one (PEP 726).");
}

static PyGetSetDef hook_descr_getset[] = {
    {"__name__", hook_descr_get_name, NULL, NULL, NULL},
    {"__qualname__", hook_descr_get_qualname, NULL, NULL, NULL},
    {"__objclass__", hook_descr_get_objclass, NULL, NULL, NULL},
    {"__text_signature__", hook_descr_get_text_signature, NULL, NULL, NULL},
    {"__doc__", hook_descr_get_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Pickled by reference, like a method descriptor. */
static PyObject *
hook_descr_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *getattr = PyEval_GetBuiltins() == NULL
                            ? NULL
                            : PyDict_GetItemString(PyEval_GetBuiltins(), "getattr");
    if (getattr == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "builtins.getattr not found");
        return NULL;
    }
    return Py_BuildValue("O(Os)", getattr, (PyObject *)&PyModule_Type,
                         hook_descr_name((hook_descr *)self));
}

static PyMethodDef hook_descr_methods[] = {
    {"__reduce__", hook_descr_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

#if PY_VERSION_HEX < 0x03090000
#  define HOOK_DESCR_VECTORCALL_FLAG _Py_TPFLAGS_HAVE_VECTORCALL
#else
#  define HOOK_DESCR_VECTORCALL_FLAG Py_TPFLAGS_HAVE_VECTORCALL
#endif

static PyTypeObject hook_descr_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.module_hook_descriptor",
    .tp_basicsize = sizeof(hook_descr),
    .tp_vectorcall_offset = offsetof(hook_descr, vectorcall),
    .tp_repr = hook_descr_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | HOOK_DESCR_VECTORCALL_FLAG,
    .tp_doc = "ModuleType.__setattr__/__delattr__ while pep726hook's native engine is "
              "installed.",
    .tp_methods = hook_descr_methods,
    .tp_getset = hook_descr_getset,
    .tp_descr_get = hook_descr_get,
};

static PyObject *
new_hook_descr(int deleting)
{
    if (PyType_Ready(&hook_descr_type) < 0) {
        return NULL;
    }
    hook_descr *descr = PyObject_New(hook_descr, &hook_descr_type);
    if (descr == NULL) {
        return NULL;
    }
    descr->vectorcall = hook_descr_vectorcall;
    descr->deleting = deleting;
    return (PyObject *)descr;
}

/* ---- finding slot_tp_setattro ---- */

static setattrofunc
find_slot_tp_setattro(void)
{
    /* Any class whose __setattr__ is not a slot wrapper gets typeobject.c's
     * slot_tp_setattro; None is the simplest such value. */
    PyObject *probe = PyObject_CallFunction(
        (PyObject *)&PyType_Type, "s(O){sO}", "_pep726hook_probe",
        (PyObject *)&PyBaseObject_Type, "__setattr__", Py_None);
    if (probe == NULL) {
        return NULL;
    }
    setattrofunc slot = ((PyTypeObject *)probe)->tp_setattro;
    Py_DECREF(probe);
    if (slot == NULL || slot == PyObject_GenericSetAttr) {
        PyErr_SetString(PyExc_RuntimeError,
                        "could not find the interpreter's slot_tp_setattro");
        return NULL;
    }
    return slot;
}

/* ---- object.__setattr__ / object.__delattr__ on modules (3.8-3.12) ----
 *
 * typeobject.c's hackcheck(), run by the slot wrappers of object.__setattr__
 * and object.__delattr__ (and of ModuleType's own original ones), rejects a
 * module once ModuleType's slot is a C function other than the generic one.
 * Those slot wrappers are only ever called through the tp_call of two types
 * (neither has a vectorcall on 3.8-3.12, checked at install): the wrapper
 * descriptor (object.__setattr__(m, n, v), slot_tp_setattro of a subclass,
 * super() on 3.12) and the method-wrapper bound to an object
 * (super(ModuleType, m).__setattr__).  While the direct slot is installed
 * both tp_calls are wrapped: for a call of a slot wrapper around the generic
 * store with the exact arguments it accepts and a module as self, hackcheck
 * runs here with hooked_setattro counting as the generic function, and then
 * the generic store, as wrap_setattr/wrap_delattr would.  Everything else,
 * every error message included, is CPython's own call.  The `__call__` slot
 * wrappers of the two types (type(object.__setattr__).__call__(...)) wrap
 * the original tp_calls and would skip ours, so calls of those are routed
 * back through ours. */
#if !DIRECT_SLOT_IS_SAFE
#  define CALL_GUARD 1

/* descrobject.c's private method-wrapper layout; checked against the live
 * type at install (size, and the fields of a bound object.__setattr__). */
typedef struct {
    PyObject_HEAD
    PyWrapperDescrObject *descr;
    PyObject *self;
} method_wrapper_layout;

static ternaryfunc original_descr_call = NULL;
static ternaryfunc original_method_wrapper_call = NULL;
static PyTypeObject *method_wrapper_type = NULL;
/* wrap_setattr, wrap_delattr and wrap_call of typeobject.c, read from the
 * slot wrappers object.__setattr__, object.__delattr__, and
 * wrapper_descriptor.__call__. */
static wrapperfunc generic_wrap_setattr = NULL;
static wrapperfunc generic_wrap_delattr = NULL;
static wrapperfunc wrap_call_function = NULL;
static setattrofunc python_class_setattro = NULL;
/* Whether the two tp_calls are ours.  The captured pointers above are never
 * cleared: another interpreter's thread may be inside a guarded call. */
static int call_guard_installed = 0;

/* What the slot of *type* would be without the patch. */
static setattrofunc
unpatched_setattro(PyTypeObject *type)
{
    return type->tp_setattro == hooked_setattro ? PyObject_GenericSetAttr : type->tp_setattro;
}

/* typeobject.c's hackcheck() as CPython runs it on an unpatched interpreter. */
static int
emulated_hackcheck(PyObject *self, setattrofunc func, const char *what)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject *mro = type->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        return 1;
    }
#  if PY_VERSION_HEX < 0x03090000
    /* 3.8: the first class in the MRO that is not a Python class must
     * have *func* as its slot. */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        setattrofunc slot = unpatched_setattro((PyTypeObject *)PyTuple_GET_ITEM(mro, i));
        if (slot == func) {
            break;
        }
        if (slot != python_class_setattro) {
            goto reject;
        }
    }
#  else
    /* 3.9-3.12: from the class that defined type(self)'s slot, the tp_base
     * chain must reach *func* passing Python classes only. */
    setattrofunc own = unpatched_setattro(type);
    PyTypeObject *defining = type;
    for (Py_ssize_t i = PyTuple_GET_SIZE(mro) - 1; i >= 0; i--) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        setattrofunc slot = unpatched_setattro(base);
        if (slot != python_class_setattro && slot == own) {
            defining = base;
            break;
        }
    }
    for (PyTypeObject *base = defining; base != NULL; base = base->tp_base) {
        setattrofunc slot = unpatched_setattro(base);
        if (slot == func) {
            break;
        }
        if (slot != python_class_setattro) {
            goto reject;
        }
    }
#  endif
    return 1;
reject:
    PyErr_Format(PyExc_TypeError, "can't apply this %s to %s object", what, type->tp_name);
    return 0;
}

static PyObject *guarded_descr_call(PyObject *callable, PyObject *args, PyObject *kwds);
static PyObject *guarded_method_wrapper_call(PyObject *callable, PyObject *args, PyObject *kwds);

/* The call of *descr* bound to *self* with args[first:] and *kwds*, if it is
 * one this guard takes; otherwise sets *handled* to 0 and returns NULL. */
static PyObject *
guarded_raw_call(PyWrapperDescrObject *descr, PyObject *self, PyObject *args, Py_ssize_t first,
                 PyObject *kwds, int *handled)
{
    *handled = 0;
    wrapperfunc wrapper = descr->d_base->wrapper;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args) - first;
    if (descr->d_wrapped == (void *)PyObject_GenericSetAttr) {
        int deleting = wrapper == generic_wrap_delattr;
        if ((!deleting && wrapper != generic_wrap_setattr) || nargs != 2 - deleting ||
            (kwds != NULL && (!PyDict_Check(kwds) || PyDict_GET_SIZE(kwds) != 0)) ||
            !PyModule_Check(self) || !call_guard_installed) {
            return NULL;
        }
        *handled = 1;
        PyObject *name = PyTuple_GET_ITEM(args, first);
        PyObject *value = deleting ? NULL : PyTuple_GET_ITEM(args, first + 1);
        if (!emulated_hackcheck(self, PyObject_GenericSetAttr,
                                deleting ? "__delattr__" : "__setattr__") ||
            PyObject_GenericSetAttr(self, name, value) < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (wrapper == wrap_call_function &&
        (descr->d_wrapped == (void *)original_descr_call ||
         descr->d_wrapped == (void *)original_method_wrapper_call)) {
        /* type(object.__setattr__).__call__(object.__setattr__, ...): what
         * wrap_call does, through our tp_call. */
        *handled = 1;
        PyObject *rest = PyTuple_GetSlice(args, first, PyTuple_GET_SIZE(args));
        if (rest == NULL) {
            return NULL;
        }
        PyObject *result = descr->d_wrapped == (void *)original_descr_call
                               ? guarded_descr_call(self, rest, kwds)
                               : guarded_method_wrapper_call(self, rest, kwds);
        Py_DECREF(rest);
        return result;
    }
    return NULL;
}

static PyObject *
guarded_descr_call(PyObject *callable, PyObject *args, PyObject *kwds)
{
    PyWrapperDescrObject *descr = (PyWrapperDescrObject *)callable;
    if (PyTuple_GET_SIZE(args) >= 1) {
        PyObject *self = PyTuple_GET_ITEM(args, 0);
        /* The original checks that self is an instance of the descriptor's
         * class first; ours only takes calls where that holds. */
        if (PyType_IsSubtype(Py_TYPE(self), PyDescr_TYPE(descr))) {
            int handled;
            PyObject *result = guarded_raw_call(descr, self, args, 1, kwds, &handled);
            if (handled) {
                return result;
            }
        }
    }
    return original_descr_call(callable, args, kwds);
}

static PyObject *
guarded_method_wrapper_call(PyObject *callable, PyObject *args, PyObject *kwds)
{
    method_wrapper_layout *bound = (method_wrapper_layout *)callable;
    int handled;
    PyObject *result = guarded_raw_call(bound->descr, bound->self, args, 0, kwds, &handled);
    if (handled) {
        return result;
    }
    return original_method_wrapper_call(callable, args, kwds);
}

#  if PY_VERSION_HEX < 0x03090000
#    define TYPE_HAS_VECTORCALL(type) (((type)->tp_flags & _Py_TPFLAGS_HAVE_VECTORCALL) != 0)
#  else
#    define TYPE_HAS_VECTORCALL(type) (((type)->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) != 0)
#  endif

/* The slot wrapper *name* of *type*, if it is one: borrowed, NULL if not
 * (no exception). */
static PyWrapperDescrObject *
slot_wrapper_of(PyTypeObject *type, const char *name)
{
    PyObject *found = PyObject_GetAttrString((PyObject *)type, name);
    if (found == NULL) {
        PyErr_Clear();
        return NULL;
    }
    /* The type's dict keeps it alive. */
    Py_DECREF(found);
    return Py_TYPE(found) == &PyWrapperDescr_Type ? (PyWrapperDescrObject *)found : NULL;
}

/* Capture what the guard needs and check every assumption it rests on.
 * Returns 1 if the guard can be installed, 0 if not (the caller keeps the
 * slot design), -1 on error. */
static int
prepare_call_guard(void)
{
    if (python_class_setattro == NULL) {
        python_class_setattro = find_slot_tp_setattro();
        if (python_class_setattro == NULL) {
            return -1;
        }
    }
    PyWrapperDescrObject *set = slot_wrapper_of(&PyBaseObject_Type, "__setattr__");
    PyWrapperDescrObject *del = slot_wrapper_of(&PyBaseObject_Type, "__delattr__");
    PyWrapperDescrObject *call = slot_wrapper_of(&PyWrapperDescr_Type, "__call__");
    if (set == NULL || del == NULL || call == NULL ||
        set->d_wrapped != (void *)PyObject_GenericSetAttr ||
        del->d_wrapped != (void *)PyObject_GenericSetAttr ||
        TYPE_HAS_VECTORCALL(&PyWrapperDescr_Type) ||
        PyWrapperDescr_Type.tp_basicsize != (Py_ssize_t)sizeof(PyWrapperDescrObject)) {
        return 0;
    }
    PyObject *bound = PyObject_GetAttrString(Py_None, "__setattr__");
    if (bound == NULL) {
        return -1;
    }
    PyTypeObject *type = Py_TYPE(bound);
    int fits = type->tp_basicsize == (Py_ssize_t)sizeof(method_wrapper_layout) &&
               !TYPE_HAS_VECTORCALL(type) && type->tp_call != NULL &&
               ((method_wrapper_layout *)bound)->descr == set &&
               ((method_wrapper_layout *)bound)->self == Py_None;
    Py_DECREF(bound);
    if (!fits) {
        return 0;
    }
    if (!call_guard_installed) {
        method_wrapper_type = type;
        original_descr_call = PyWrapperDescr_Type.tp_call;
        original_method_wrapper_call = type->tp_call;
    }
    generic_wrap_setattr = set->d_base->wrapper;
    generic_wrap_delattr = del->d_base->wrapper;
    wrap_call_function = call->d_base->wrapper;
    return call->d_wrapped == (void *)original_descr_call;
}

static void
install_call_guard(void)
{
    PyWrapperDescr_Type.tp_call = guarded_descr_call;
    method_wrapper_type->tp_call = guarded_method_wrapper_call;
    call_guard_installed = 1;
}

static void
uninstall_call_guard(void)
{
    if (call_guard_installed) {
        PyWrapperDescr_Type.tp_call = original_descr_call;
        method_wrapper_type->tp_call = original_method_wrapper_call;
        call_guard_installed = 0;
    }
}
#else
#  define CALL_GUARD 0
#endif

/* ---- subclasses made before the patch ---- */

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
#if PY_VERSION_HEX >= 0x030C0000
        PyObject *dict = PyType_GetDict(base);
#else
        PyObject *dict = base->tp_dict;
        Py_XINCREF(dict);
#endif
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

/* Heap subclasses copied ModuleType's slot when they were created.  Point those
 * still on *from* at *to* (issue 3, item 2b).  Subclasses that define
 * __setattr__/__delattr__ in Python have slot_tp_setattro and reach us
 * through super(); they are left alone.
 *
 * The hierarchy is walked breadth first with a list, not by C recursion: a
 * chain of one subclass per added module property is a real recipe, and any
 * depth must work (issue 13).  Every class to change is collected before the
 * first is changed, so a failure (MemoryError, a __subclasses__ that raises)
 * leaves every slot as it was. */
static int
repoint_subclasses(PyTypeObject *root, setattrofunc from, setattrofunc to)
{
    PyObject *queue = PyList_New(0);
    PyObject *seen = PySet_New(NULL);
    PyObject *change = PyList_New(0);
    if (queue == NULL || seen == NULL || change == NULL ||
        PyList_Append(queue, (PyObject *)root) < 0) {
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
                Py_DECREF(subclasses);
                goto fail;
            }
        }
        Py_DECREF(subclasses);
    }
    /* Nothing below can fail. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(change); i++) {
        ((PyTypeObject *)PyList_GET_ITEM(change, i))->tp_setattro = to;
    }
    Py_DECREF(queue);
    Py_DECREF(seen);
    Py_DECREF(change);
    return 0;
fail:
    Py_XDECREF(queue);
    Py_XDECREF(seen);
    Py_XDECREF(change);
    return -1;
}

/* ---- new interpreters while the slot is slot_tp_setattro (3.12+) ----
 *
 * From 3.12 on every new interpreter builds its own dict for each static
 * builtin type: add_operators() fills it with slot wrappers around the slots
 * *as they are now*, then the type's tp_methods are added.  With ModuleType's
 * slot at slot_tp_setattro the new dict's '__setattr__' would be a wrapper
 * around slot_tp_setattro, which looks '__setattr__' up and finds itself: the
 * new interpreter dies with "Fatal Python error: _PySys_Create" (issue 3, 2c).
 *
 * So while patched, ModuleType's tp_methods is a copy of the original table
 * followed by our two methods flagged METH_COEXIST, which type_add_method()
 * stores over the slot wrappers: every interpreter created while patched,
 * whoever creates it, from any thread, with or without a thread state, gets
 * our method descriptors in its ModuleType dict from the start.  (An earlier
 * design lent the generic slot out from an audit hook around each creation;
 * it raced with other threads and interpreters and could be fooled by
 * sys.audit(), issue 13.)  The table is never freed: interpreters being
 * created in other threads may be reading it. */
#if PY_VERSION_HEX >= 0x030C0000
#  define PATCH_TP_METHODS 1
#else
#  define PATCH_TP_METHODS 0
#endif

#if PATCH_TP_METHODS
/* ModuleType's own tp_methods, restored by uninstall(); NULL when unpatched. */
static PyMethodDef *original_tp_methods = NULL;
/* The patched table (original entries, ours, sentinel), built once. */
static PyMethodDef *patched_tp_methods = NULL;

static int
build_patched_tp_methods(void)
{
    if (patched_tp_methods != NULL) {
        return 0;
    }
    Py_ssize_t count = 0;
    for (PyMethodDef *def = PyModule_Type.tp_methods; def != NULL && def->ml_name != NULL;
         def++) {
        count++;
    }
    /* Plain malloc: the table outlives every interpreter and runtime. */
    PyMethodDef *table = (PyMethodDef *)calloc((size_t)count + 3, sizeof(PyMethodDef));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (count > 0) {
        memcpy(table, PyModule_Type.tp_methods, (size_t)count * sizeof(PyMethodDef));
    }
    table[count] = setattr_def;
    table[count].ml_flags |= METH_COEXIST;
    table[count + 1] = delattr_def;
    table[count + 1].ml_flags |= METH_COEXIST;
    patched_tp_methods = table;
    return 0;
}
#endif

/* ---- install / uninstall ---- */

/* Put *saved* back under *key*, or remove the key if it was absent. */
static int
restore_entry(PyObject *dict, PyObject *key, PyObject *saved)
{
    if (saved != NULL) {
        return PyDict_SetItem(dict, key, saved);
    }
    if (PyDict_DelItem(dict, key) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError)) {
            return -1;
        }
        PyErr_Clear();
    }
    return 0;
}

/* Put our descriptors into this interpreter's ModuleType dict, saving what
 * was there.  On failure the dict is left as it was. */
static int
install_dict_entries(entries_t *state)
{
    if (state->installed) {
        return 0;
    }
    PyObject *dict = module_type_dict();
    if (dict == NULL) {
        return -1;
    }
    PyObject *old_set = PyDict_GetItemWithError(dict, setattr_key);
    if (old_set == NULL && PyErr_Occurred()) {
        Py_DECREF(dict);
        return -1;
    }
    Py_XINCREF(old_set);
    PyObject *old_del = PyDict_GetItemWithError(dict, delattr_key);
    if (old_del == NULL && PyErr_Occurred()) {
        Py_XDECREF(old_set);
        Py_DECREF(dict);
        return -1;
    }
    Py_XINCREF(old_del);
    if (PyDict_SetItem(dict, setattr_key, state->setattr_descr) < 0) {
        goto fail;
    }
    if (PyDict_SetItem(dict, delattr_key, state->delattr_descr) < 0) {
        (void)restore_entry(dict, setattr_key, old_set);
        goto fail;
    }
    Py_DECREF(dict);
    state->saved_setattr = old_set;
    state->saved_delattr = old_del;
    state->installed = 1;
    /* Invalidates the method caches of ModuleType and all its subclasses. */
    PyType_Modified(&PyModule_Type);
    return 0;
fail:
    Py_XDECREF(old_set);
    Py_XDECREF(old_del);
    Py_DECREF(dict);
    PyType_Modified(&PyModule_Type);
    return -1;
}

static int
uninstall_dict_entries(entries_t *state)
{
    if (!state->installed) {
        return 0;
    }
    PyObject *dict = module_type_dict();
    if (dict == NULL) {
        return -1;
    }
    int rc = 0;
    if (restore_entry(dict, setattr_key, state->saved_setattr) < 0 ||
        restore_entry(dict, delattr_key, state->saved_delattr) < 0) {
        rc = -1;
    }
    Py_DECREF(dict);
    PyType_Modified(&PyModule_Type);
    if (rc == 0) {
        state->installed = 0;
        Py_CLEAR(state->saved_setattr);
        Py_CLEAR(state->saved_delattr);
    }
    return rc;
}

PyDoc_STRVAR(install_doc,
"install(*, process_wide=True, direct=None)\n--\n\n"
"Patch ModuleType so that module stores/deletes can honour PEP 726 hooks.\n\n"
"With *process_wide* true (the default) every module's hooks are called from\n"
"now on; with it false only those of modules passed to opt_in() (unless\n"
"set_process_wide(True) was called).  install() never turns process-wide\n"
"dispatch off.\n"
"In the main interpreter this patches the process-wide slot and the\n"
"ModuleType dict.  In a sub-interpreter it needs the main interpreter to\n"
"have patched first, and then adds that interpreter's own dict entries\n"
"(3.12+; before 3.12 the dict is shared and there is nothing to add).\n"
"*direct* chooses the slot design (None or True: hooked_setattro in the\n"
"slot, with the call guard on 3.8-3.12, or slot_tp_setattro if the guard\n"
"cannot be installed; False: slot_tp_setattro, for benchmarks).  Idempotent.");

static PyObject *patch_module_type(PyObject *module, PyObject *direct_arg);

static PyObject *
native_install(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"process_wide", "direct", NULL};
    int wide = 1;
    PyObject *direct_arg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$pO:install", kwlist, &wide,
                                     &direct_arg)) {
        return NULL;
    }
    PyObject *result = patch_module_type(module, direct_arg);
    if (result != NULL && wide) {
        process_wide = 1;
    }
    return result;
}

static PyObject *
patch_module_type(PyObject *module, PyObject *direct_arg)
{
    if (!is_main_interpreter()) {
        if (patch_owner == NULL) {
            PyErr_SetString(PyExc_RuntimeError,
                            "the native engine patches the module type for the whole "
                            "process, so the main interpreter must install it first");
            return NULL;
        }
#if PY_VERSION_HEX >= 0x030C0000
        entries_t *entries = get_entries(module);
        if (entries == NULL || install_dict_entries(entries) < 0) {
            return NULL;
        }
#endif
        Py_RETURN_NONE;
    }
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return NULL;
    }
    if (patch_owner != NULL) {
        if (install_dict_entries(entries) < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    int direct = 1;
    if (direct_arg != Py_None) {
        direct = PyObject_IsTrue(direct_arg);
        if (direct < 0) {
            return NULL;
        }
    }
#if CALL_GUARD
    if (direct) {
        /* Without the guard object.__setattr__ would fail on modules: then
         * the slot design it is. */
        direct = prepare_call_guard();
        if (direct < 0) {
            return NULL;
        }
    }
#endif
    if (PyModule_Type.tp_setattro != PyObject_GenericSetAttr) {
        /* Someone else patched the slot: refuse rather than chain to an
         * unknown function (or to slot_tp_setattro, which would loop). */
        PyErr_SetString(PyExc_RuntimeError,
                        "ModuleType's attribute store slot was already replaced by "
                        "something other than pep726hook");
        return NULL;
    }
    setattrofunc target = hooked_setattro;
    if (!direct) {
        target = find_slot_tp_setattro();
        if (target == NULL) {
            return NULL;
        }
    }
#if PATCH_TP_METHODS
    /* The methods go in before the slot (and come out after it, in
     * uninstall()): an interpreter that a thread with its own GIL creates
     * meanwhile must never find slot_tp_setattro without them.  The calls in
     * between keep the compiler from reordering the two stores. */
    PyMethodDef *methods_before = PyModule_Type.tp_methods;
    if (target != hooked_setattro || !DIRECT_SLOT_IS_SAFE) {
        if (build_patched_tp_methods() < 0) {
            return NULL;
        }
        PyModule_Type.tp_methods = patched_tp_methods;
    }
#endif
    if (install_dict_entries(entries) < 0) {
        goto fail;
    }
#if CALL_GUARD
    /* Before any slot points at hooked_setattro. */
    if (target == hooked_setattro) {
        install_call_guard();
    }
#endif
    if (repoint_subclasses(&PyModule_Type, PyObject_GenericSetAttr, target) < 0) {
        /* No subclass was changed. */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        (void)uninstall_dict_entries(entries);
#if CALL_GUARD
        uninstall_call_guard();
#endif
        PyErr_Restore(type, value, tb);
        goto fail;
    }
    original_setattro = PyModule_Type.tp_setattro;
    installed_setattro = target;
    PyModule_Type.tp_setattro = target;
    patch_owner = PyInterpreterState_Get();
#if HOOKLESS_CACHE
    start_hookless_cache();
#endif
#if PATCH_TP_METHODS
    if (target != hooked_setattro || !DIRECT_SLOT_IS_SAFE) {
        original_tp_methods = methods_before;
    }
#endif
    Py_RETURN_NONE;
fail:
#if PATCH_TP_METHODS
    PyModule_Type.tp_methods = methods_before;
#endif
    return NULL;
}

PyDoc_STRVAR(uninstall_doc,
"uninstall()\n--\n\n"
"Undo install() in this interpreter.  In the interpreter that patched the\n"
"slot this also restores ModuleType's slot and its subclasses' slots, turns\n"
"process-wide dispatch off and forgets every opt-in.\n"
"Idempotent.");

static PyObject *
native_uninstall(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    if (!is_main_interpreter()) {
#if PY_VERSION_HEX >= 0x030C0000
        entries_t *entries = get_entries(module);
        if (entries == NULL || uninstall_dict_entries(entries) < 0) {
            return NULL;
        }
#endif
        Py_RETURN_NONE;
    }
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return NULL;
    }
    if (patch_owner != NULL) {
        if (repoint_subclasses(&PyModule_Type, installed_setattro, original_setattro) < 0) {
            return NULL;
        }
        PyModule_Type.tp_setattro = original_setattro;
        patch_owner = NULL;
        installed_setattro = NULL;
        process_wide = 0;
        forget_all_opt_ins(1);
#if CALL_GUARD
        /* After the slots: until then object.__setattr__ needs it. */
        uninstall_call_guard();
#endif
#if HOOKLESS_CACHE
        stop_hookless_cache();
#endif
#if PATCH_TP_METHODS
        if (original_tp_methods != NULL) {
            PyModule_Type.tp_methods = original_tp_methods;
            original_tp_methods = NULL;
        }
#endif
        PyType_Modified(&PyModule_Type);
    }
    if (uninstall_dict_entries(entries) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_process_wide_doc,
"set_process_wide(flag)\n--\n\n"
"Turn dispatch to every module's hooks on or off, leaving the patch as it\n"
"is.  While off, only the hooks of opted-in modules are called.");

static PyObject *
native_set_process_wide(PyObject *module, PyObject *arg)
{
    (void)module;
    int flag = PyObject_IsTrue(arg);
    if (flag < 0) {
        return NULL;
    }
    process_wide = flag;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(opt_in_doc,
"opt_in(module)\n--\n\n"
"Call *module*'s hooks from now on, even while process-wide dispatch is off.\n"
"The module is held weakly; it needs install() first.");

static PyObject *
native_opt_in(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyModule_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "opt_in() needs a module, not '%.200s'",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (patch_owner == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "opt_in() needs the native engine installed (install() first)");
        return NULL;
    }
    if (opt_in_module(arg) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(is_opted_in_doc,
"is_opted_in(module)\n--\n\n"
"Tell whether *module* was passed to opt_in() and not forgotten since.");

static PyObject *
native_is_opted_in(PyObject *module, PyObject *arg)
{
    (void)module;
    return PyBool_FromLong(is_opted_in(arg));
}

PyDoc_STRVAR(upgrade_type_doc,
"upgrade_type(cls)\n--\n\n"
"Point the store slot of ModuleType subclass *cls* at the patched one if it\n"
"still has the original generic slot.");

static PyObject *
native_upgrade_type(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyType_Check(arg) || !PyType_IsSubtype((PyTypeObject *)arg, &PyModule_Type)) {
        PyErr_SetString(PyExc_TypeError, "upgrade_type() needs a ModuleType subclass");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)arg;
    if (patch_owner != NULL && cls->tp_setattro == original_setattro) {
        cls->tp_setattro = installed_setattro;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(type_reaches_hook_doc,
"type_reaches_hook(cls)\n--\n\n"
"Tell whether stores on instances of ModuleType subclass *cls* go through\n"
"the patched slot or ModuleType's patched __setattr__.");

static PyObject *
native_type_reaches_hook(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyType_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "type_reaches_hook() needs a type");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)arg;
    if (patch_owner == NULL || !PyType_IsSubtype(cls, &PyModule_Type)) {
        Py_RETURN_FALSE;
    }
    /* A class whose slot is still the original skips the hooks; any other
     * slot (ours, or slot_tp_setattro of a Python-level __setattr__ that
     * reaches ModuleType's through super()) gets there. */
    return PyBool_FromLong(cls->tp_setattro != original_setattro);
}

PyDoc_STRVAR(state_doc,
"state()\n--\n\n"
"Return a dict describing the patch: 'patched' (process-wide slot),\n"
"'owner_is_current' (this interpreter patched it), 'main' (this is the main\n"
"interpreter), 'entries' (this interpreter's ModuleType dict holds our\n"
"descriptors), 'direct' (the slot points straight at the C hook dispatch),\n"
"'call_guard' (the slot wrappers' calls are guarded), 'process_wide' (every\n"
"module's hooks are called), 'opted_in' (number of live opted-in modules).");

static PyObject *
native_state_info(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return NULL;
    }
    PyObject *dict = module_type_dict();
    if (dict == NULL) {
        return NULL;
    }
    PyObject *current = PyDict_GetItemWithError(dict, setattr_key);
    Py_DECREF(dict);
    if (current == NULL && PyErr_Occurred()) {
        return NULL;
    }
    /* Before 3.12 sub-interpreters share the main interpreter's dict. */
    int ours = current != NULL &&
               (current == entries->setattr_descr || current == main_entries.setattr_descr);
    PyInterpreterState *interp = PyInterpreterState_Get();
    return Py_BuildValue(
        "{sOsOsOsOsOsOsOsn}",
        "patched", patch_owner != NULL ? Py_True : Py_False,
        "owner_is_current", (patch_owner != NULL && patch_owner == interp) ? Py_True : Py_False,
        "main", is_main_interpreter() ? Py_True : Py_False,
        "entries", ours ? Py_True : Py_False,
        "direct",
        (patch_owner != NULL && installed_setattro == hooked_setattro) ? Py_True : Py_False,
        "call_guard",
#if CALL_GUARD
        call_guard_installed ? Py_True : Py_False,
#else
        Py_False,
#endif
        "process_wide", process_wide ? Py_True : Py_False,
        "opted_in", (Py_ssize_t)opt_in_count);
}

static PyMethodDef native_methods[] = {
    {"install", (PyCFunction)(void (*)(void))native_install, METH_VARARGS | METH_KEYWORDS,
     install_doc},
    {"uninstall", native_uninstall, METH_NOARGS, uninstall_doc},
    {"upgrade_type", native_upgrade_type, METH_O, upgrade_type_doc},
    {"type_reaches_hook", native_type_reaches_hook, METH_O, type_reaches_hook_doc},
    {"state", native_state_info, METH_NOARGS, state_doc},
    {"set_process_wide", native_set_process_wide, METH_O, set_process_wide_doc},
    {"opt_in", native_opt_in, METH_O, opt_in_doc},
    {"is_opted_in", native_is_opted_in, METH_O, is_opted_in_doc},
    {NULL, NULL, 0, NULL},
};

/* ---- module lifecycle (multi-phase init, needed for sub-interpreters) ---- */

/* An embedding program may call Py_FinalizeEx() and then Py_Initialize()
 * again; this library (and so every static above) stays loaded.  From 3.11 on
 * finalisation tears the static builtin types down and the next
 * initialisation readies them again from their slots as they are: a patched
 * slot_tp_setattro there makes the new ModuleType dict recurse ("Fatal Python
 * error: _PySys_Create: failed to create a module object", issue 13), and our
 * statics would point at objects of the finished runtime.  Py_AtExit
 * functions run after that teardown, so this one, without touching any
 * object, puts the type back as it was and forgets the finished runtime.
 * Where ModuleType survives finalisation (3.8-3.10 keep static types
 * readied, and so their dicts with our entries) the patch carries over into
 * the next runtime, as the class engine's classes would not, and nothing is
 * reset. */
static int atexit_registered = 0;

static void
forget_finished_runtime(void)
{
    atexit_registered = 0;
    /* The weak references and their callback belonged to the finished
     * runtime; the next one opts its modules in again. */
    forget_all_opt_ins(0);
    opt_in_callback = NULL;
    if (PyModule_Type.tp_flags & Py_TPFLAGS_READY) {
        return;
    }
    if (patch_owner != NULL) {
        PyModule_Type.tp_setattro = original_setattro;
    }
#if CALL_GUARD
    /* wrapper_descriptor is readied again too, its __call__ from tp_call. */
    uninstall_call_guard();
#endif
#if PATCH_TP_METHODS
    if (original_tp_methods != NULL) {
        PyModule_Type.tp_methods = original_tp_methods;
        original_tp_methods = NULL;
    }
#endif
    patch_owner = NULL;
    installed_setattro = NULL;
    process_wide = 0;
    /* Their objects died with the runtime: drop the pointers, not references. */
    main_entries.installed = 0;
    main_entries.saved_setattr = NULL;
    main_entries.saved_delattr = NULL;
    main_entries.setattr_descr = NULL;
    main_entries.delattr_descr = NULL;
    setattr_key = NULL;
    delattr_key = NULL;
}

static int
native_exec(PyObject *module)
{
    if (PyModule_Type.tp_dictoffset <= 0) {
        /* hooked_setattro() reads the namespace through it. */
        PyErr_SetString(PyExc_ImportError,
                        "pep726hook._native: ModuleType has no instance dict offset here");
        return -1;
    }
    if (setattr_key == NULL) {
        /* Kept for the life of the process: the patched slot may use them
         * until the very end. */
        setattr_key = PyUnicode_InternFromString("__setattr__");
        if (setattr_key == NULL) {
            return -1;
        }
    }
    if (delattr_key == NULL) {
        delattr_key = PyUnicode_InternFromString("__delattr__");
        if (delattr_key == NULL) {
            return -1;
        }
    }
    if (!atexit_registered && is_main_interpreter()) {
        if (Py_AtExit(forget_finished_runtime) < 0) {
            PyErr_SetString(PyExc_RuntimeError,
                            "pep726hook._native could not register its Py_AtExit function");
            return -1;
        }
        atexit_registered = 1;
    }
    if (PyModule_AddIntConstant(module, "DIRECT_SLOT_IS_SAFE", DIRECT_SLOT_IS_SAFE) < 0) {
        return -1;
    }
    return 0;
}

static int
native_traverse(PyObject *module, visitproc visit, void *arg)
{
    native_state *state = get_state(module);
    if (state == NULL) {
        return 0;
    }
    Py_VISIT(state->entries.saved_setattr);
    Py_VISIT(state->entries.saved_delattr);
    Py_VISIT(state->entries.setattr_descr);
    Py_VISIT(state->entries.delattr_descr);
    return 0;
}

static int
native_clear(PyObject *module)
{
    native_state *state = get_state(module);
    if (state == NULL) {
        return 0;
    }
    /* Only a sub-interpreter's entries live here, and they die with it: its
     * ModuleType dict is being torn down at the same time. */
    Py_CLEAR(state->entries.saved_setattr);
    Py_CLEAR(state->entries.saved_delattr);
    Py_CLEAR(state->entries.setattr_descr);
    Py_CLEAR(state->entries.delattr_descr);
    return 0;
}

static void
native_free(void *module)
{
    (void)native_clear((PyObject *)module);
}

static PyModuleDef_Slot native_slots[] = {
    {Py_mod_exec, (void *)native_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* Loadable in sub-interpreters sharing the main GIL, refused in those with
     * their own GIL: the slot and the statics above are process-wide. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "pep726hook._native",
    "PEP 726 module __setattr__/__delattr__ through a patched ModuleType slot.",
    sizeof(native_state),
    native_methods,
    native_slots,
    native_traverse,
    native_clear,
    native_free,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    return PyModuleDef_Init(&native_module);
}
