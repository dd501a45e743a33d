/* pep726hook._native: PEP 726 for every module by patching the module type's
 * store/delete slot, the way the reference implementation (CPython PR #108261,
 * https://github.com/python/cpython/pull/108261) did inside
 * Objects/moduleobject.c.  Private header shared by the files of this folder.
 *
 * Design (docs/native-engine.md has the measurements behind it):
 *
 *   ModuleType->tp_setattro points straight at hooked_setattro() (store.c), so
 *   `mod.x = v` costs one C call, the hook check and the store.  Which
 *   modules get their hooks called is decided there too: all of them while
 *   process-wide dispatch is on, otherwise those opted in (opt_in.c).
 *
 *   ModuleType.__dict__['__setattr__'] / ['__delattr__'] become method
 *   descriptors (descriptor.c) running the same dispatch.  They are what
 *   `super().__setattr__` in a ModuleType subclass reaches, so the subclass
 *   runs first and the module hook second (the MRO rule).
 *
 *   On 3.8-3.12 typeobject.c's hackcheck() rejects `object.__setattr__(mod,
 *   ...)` once ModuleType's slot is a C function other than the generic one;
 *   call_guard.c wraps the calls of those slot wrappers.  If its layout
 *   checks fail, install() falls back to the former slot design (the slot is
 *   the interpreter's own slot_tp_setattro, which hackcheck() skips).
 *
 *   From 3.12 on a dict watcher keeps a cache of namespaces without hooks
 *   (hookless_cache.c); subclasses made before the patch are re-pointed
 *   (subclasses.c); patch.c puts everything in and takes it out again;
 *   module.c is the Python-facing module and the interpreter lifecycle.
 *
 *   weak_table.c holds the opted-in modules weakly, and the deprecating
 *   modules (deprecating_modules.c, with the store slot's detour for their
 *   deprecated names): once a deprecating module's import has ended, its
 *   deprecated names live in a builtins dict of its own and a descriptor in
 *   ModuleType's dict serves reads of each through the module
 *   (deprecated_descriptor.c); changes of the interpreter's builtins and
 *   names the module binds again are followed (deprecation_watchers.c);
 *   functions made before then get those builtins (rebinding_pass.c, from
 *   each namespace first: namespace_walk.c), and so do frames that started
 *   before then (frame_builtins.c).
 *
 *   An opted-in module's PEP 562 __getattr__ (3.11-3.14, relocated_getattr.c)
 *   moves out of its namespace into its opt-in entry, so that the
 *   specialiser specialises reads of its names; the read slot wrapper calls
 *   it on a miss.
 *
 * Everything uses the public C API but two functions that CPython's own
 * headers declare and export: _PyDict_GetItem_KnownHash (store.c) and, on
 * 3.11-3.14 only, _PyObject_GenericGetAttrWithDict (getattr_wrapper.c).  The patch of the slot is process-wide and
 * belongs to the main interpreter; the namespace entries live in the type
 * dict, which is shared by every interpreter up to 3.11 and is per
 * interpreter from 3.12 on (PyType_GetDict).  All state is guarded by the
 * GIL: the module refuses to load in interpreters with their own GIL and is
 * not built for free-threading. */
#ifndef PEP726HOOK_NATIVE_H
#define PEP726HOOK_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* What later versions have and 3.8/3.9 lack. */
#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *
native_new_ref(PyObject *object)
{
    Py_INCREF(object);
    return object;
}
#  define Py_NewRef(object) native_new_ref((PyObject *)(object))
#endif
#if PY_VERSION_HEX < 0x03090000
#  define Py_SET_TYPE(object, type) (Py_TYPE(object) = (type))
#endif
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- what each CPython version needs: every feature macro, defined once ----
 *
 * DIRECT_SLOT_IS_SAFE  3.13+: hackcheck() guards type objects only, so the
 *                      direct slot needs no call guard.
 * CALL_GUARD           3.8-3.12: wrap the tp_call of wrapper_descriptor and
 *                      method-wrapper (call_guard.c).
 * HOOKLESS_CACHE       3.12+: dict watchers exist (hookless_cache.c).
 * KEYS_VERSION_CACHE   3.11: the "no hook here" cache keyed by the version of
 *                      a dict's keys instead (hookless_cache.c).
 * PATCH_TP_METHODS     3.12+: every new interpreter builds its own ModuleType
 *                      dict from the slots and tp_methods (patch.c).
 * PER_INTERPRETER_TYPE_DICT  3.12+: PyType_GetDict; tp_dict of a static
 *                      builtin type is NULL there.
 * MULTIPLE_INTERPRETERS_SLOT  3.12+: Py_mod_multiple_interpreters exists. */
#if PY_VERSION_HEX >= 0x030D0000
#  define DIRECT_SLOT_IS_SAFE 1
#else
#  define DIRECT_SLOT_IS_SAFE 0
#endif
#define CALL_GUARD (!DIRECT_SLOT_IS_SAFE)
#if PY_VERSION_HEX >= 0x030C0000
#  define HOOKLESS_CACHE 1
#  define PATCH_TP_METHODS 1
#  define PER_INTERPRETER_TYPE_DICT 1
#  define MULTIPLE_INTERPRETERS_SLOT 1
#else
#  define HOOKLESS_CACHE 0
#  define PATCH_TP_METHODS 0
#  define PER_INTERPRETER_TYPE_DICT 0
#  define MULTIPLE_INTERPRETERS_SLOT 0
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#  define KEYS_VERSION_CACHE 1
#else
#  define KEYS_VERSION_CACHE 0
#endif
/* 3.13 stopped setting Py_TPFLAGS_VALID_VERSION_TAG: a zero tag is invalid. */
#if PY_VERSION_HEX >= 0x030D0000
#  define VERSION_TAG_FLAG_IS_SET 0
#else
#  define VERSION_TAG_FLAG_IS_SET 1
#endif
/* 3.8 spells the vectorcall flag with a leading underscore and has only the
 * provisional _PyObject_Vectorcall, and neither PyInterpreterState_Get() nor
 * PyThreadState_GetInterpreter(): the thread state's interp field is the
 * documented way there. */
#if PY_VERSION_HEX < 0x03090000
#  define HAS_VECTORCALL_FLAG _Py_TPFLAGS_HAVE_VECTORCALL
#  define HAS_PUBLIC_VECTORCALL 0
#  define PyInterpreterState_Get() (PyThreadState_Get()->interp)
#else
#  define HAS_VECTORCALL_FLAG Py_TPFLAGS_HAVE_VECTORCALL
#  define HAS_PUBLIC_VECTORCALL 1
#endif
/* RELOCATE_GETATTR  3.11-3.14: the specialiser refuses LOAD_ATTR on a module
 *                   whose namespace holds '__getattr__'
 *                   (https://github.com/python/cpython/issues/143469, fixed
 *                   in 3.15), so an opted-in module's PEP 562 function moves
 *                   out of the namespace into its opt-in entry and the read
 *                   slot wrapper calls it on a miss (relocated_getattr.c).
 *                   Before 3.11 no module read is specialised. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030F0000
#  define RELOCATE_GETATTR 1
#else
#  define RELOCATE_GETATTR 0
#endif
/* Py_NO_INLINE came with 3.9's pyport.h; the same definition for 3.8. */
#ifndef Py_NO_INLINE
#  if defined(__GNUC__) || defined(__clang__)
#    define Py_NO_INLINE __attribute__((noinline))
#  elif defined(_MSC_VER)
#    define Py_NO_INLINE __declspec(noinline)
#  else
#    define Py_NO_INLINE
#  endif
#endif

/* Names shared between the files of this extension stay inside it: hidden
 * from the dynamic symbol table (no clash with other extensions, and
 * -fPIC code reaches the data without a GOT load on the hot path). */
#if defined(__GNUC__) && !defined(_WIN32) && !defined(__CYGWIN__)
#  define NATIVE_INTERNAL __attribute__((visibility("hidden")))
#else
#  define NATIVE_INTERNAL
#endif

/* ---- patch state (patch.c) ---- */

/* The module type's slot before the patch (the generic one). */
NATIVE_INTERNAL extern setattrofunc original_setattro;
/* What the patch put in the slot: hooked_setattro or slot_tp_setattro. */
NATIVE_INTERNAL extern setattrofunc installed_setattro;
/* The interpreter that patched the slot, or NULL when unpatched. */
NATIVE_INTERNAL extern PyInterpreterState *patch_owner;

/* What install() put into one ModuleType dict, and what it replaced. */
typedef struct {
    /* Whether our descriptors are in this interpreter's ModuleType dict. */
    int installed;
    /* The entries install() replaced, restored by uninstall(); NULL when the
     * key was absent (3.13 dropped ModuleType's own tp_setattro, so its dict
     * has no '__setattr__' there). */
    PyObject *saved_setattr;
    PyObject *saved_delattr;
    /* Our method descriptors, to put there and to recognise them. */
    PyObject *setattr_descr;
    PyObject *delattr_descr;
} entries_t;

/* Module state: the entries of a sub-interpreter, whose ModuleType dict is its
 * own from 3.12 on.  The main interpreter's live in patch.c for the whole
 * process. */
typedef struct {
    entries_t entries;
} native_state;

/* After ModuleType changed in this interpreter (an entry of its dict
 * replaced, added or removed, or its store or read slot swapped): no cached
 * lookup through ModuleType or its subclasses may answer from before.  Never
 * spends ModuleType's version tag from 3.12 on, never raises.  Subclasses
 * whose slot is changed get PyType_Modified() from the repoint functions. */
NATIVE_INTERNAL void forget_module_type_lookups(void);
NATIVE_INTERNAL entries_t *get_entries(PyObject *module);
NATIVE_INTERNAL int entries_are_current(entries_t *entries);
NATIVE_INTERNAL int install_dict_entries(entries_t *entries);
NATIVE_INTERNAL int uninstall_dict_entries(entries_t *entries);
/* Put *saved* back under *key* of *dict*, or remove the key (absent or not)
 * where *saved* is NULL: 0, or -1 with an exception. */
NATIVE_INTERNAL int restore_entry(PyObject *dict, PyObject *key, PyObject *saved);
/* Patch the slot from the main interpreter (or attach); 0 or -1. */
NATIVE_INTERNAL int patch_module_type(PyObject *module, PyObject *direct_arg);
NATIVE_INTERNAL int unpatch_module_type(PyObject *module);
NATIVE_INTERNAL setattrofunc find_slot_tp_setattro(void);
/* Py_AtExit: put the type back without touching objects of the runtime. */
NATIVE_INTERNAL int patch_forget_finished_runtime(void);

static inline int
is_main_interpreter(void)
{
    return PyInterpreterState_Get() == PyInterpreterState_Main();
}

/* The dict of *type* in this interpreter (new reference), NULL without an
 * exception if it has none. */
static inline PyObject *
type_dict(PyTypeObject *type)
{
#if PER_INTERPRETER_TYPE_DICT
    return PyType_GetDict(type);
#else
    PyObject *dict = type->tp_dict;
    Py_XINCREF(dict);
    return dict;
#endif
}

/* ---- the store slot (store.c) ---- */

/* Interned "__setattr__" / "__delattr__", kept for the life of the runtime.
 * From 3.12 on these are CPython's statically allocated, immortal
 * identifiers, so any interpreter may use them; before 3.12 all
 * interpreters share one GIL. */
NATIVE_INTERNAL extern PyObject *setattr_key;
NATIVE_INTERNAL extern PyObject *delattr_key;

/* Whether *name* (a str) starts with two underscores: the only names under
 * which ModuleType and object have data descriptors. */
static inline int
is_dunder_name(PyObject *name)
{
    return PyUnicode_GET_LENGTH(name) >= 2 && PyUnicode_READ_CHAR(name, 0) == '_' &&
           PyUnicode_READ_CHAR(name, 1) == '_';
}

NATIVE_INTERNAL int hooked_setattro(PyObject *self, PyObject *name, PyObject *value);
/* The type of deprecated() markers and the function called around their
 * stores through a module (both NULL to stop); the main interpreter's only. */
NATIVE_INTERNAL int set_marker_hook(PyObject *type, PyObject *callback);
/* Whether *value* is a deprecated() marker. */
NATIVE_INTERNAL int is_marker(PyObject *value);
/* Drop them (*release* 0: the runtime is gone, touch no object). */
NATIVE_INTERNAL void forget_marker_hook(int release);
/* Report them to the collector as references of the caller's object. */
NATIVE_INTERNAL int visit_marker_hook(visitproc visit, void *arg);
NATIVE_INTERNAL extern PyMethodDef setattr_def;
NATIVE_INTERNAL extern PyMethodDef delattr_def;

/* ---- tables of modules held weakly, keyed by address (weak_table.c) ---- */

typedef struct {
    PyObject *module; /* borrowed: the weak reference's callback removes it */
    PyObject *ref;    /* owned weak reference to module */
    PyObject *value;  /* owned, or NULL */
    unsigned int flags; /* the owner table's own use; 0 for a new entry */
} weak_entry;

typedef struct {
    weak_entry *entries;
    size_t capacity; /* 0 or a power of two */
    size_t count;
    /* The weak references' callback, made from callback_def on first use;
     * it calls weak_table_forget_ref(). */
    PyObject *callback;
    PyMethodDef *callback_def;
} weak_table;

static inline size_t
weak_table_home(weak_table *table, PyObject *module)
{
    uintptr_t address = (uintptr_t)module;
    return (size_t)((address >> 4) ^ (address >> 13)) & (table->capacity - 1);
}

/* The entry of *module*, NULL if it has none.  Runs no code. */
static inline weak_entry *
weak_table_find(weak_table *table, PyObject *module)
{
    if (table->count == 0) {
        return NULL;
    }
    size_t mask = table->capacity - 1;
    for (size_t i = weak_table_home(table, module); table->entries[i].module != NULL;
         i = (i + 1) & mask) {
        if (table->entries[i].module == module) {
            return &table->entries[i];
        }
    }
    return NULL;
}

/* Add *module* (or replace its value); *value* is borrowed. */
NATIVE_INTERNAL int weak_table_set(weak_table *table, PyObject *module, PyObject *value);
/* The callback's work: drop the entry of the weak reference *ref*; 1 if that
 * entry had a value, else 0. */
NATIVE_INTERNAL int weak_table_forget_ref(weak_table *table, PyObject *ref);
/* Drop every entry.  *release* is 0 when the runtime that made the weak
 * references is gone: then only the pointers are dropped. */
NATIVE_INTERNAL void weak_table_clear(weak_table *table, int release);

/* ---- whose hooks are called (opt_in.c) ---- */

NATIVE_INTERNAL extern int process_wide;
NATIVE_INTERNAL extern weak_table opt_ins;
NATIVE_INTERNAL int is_opted_in(PyObject *module);
/* Opt *module* in; *relocate_getattr* and *chosen* as for
 * place_module_getattr(). */
NATIVE_INTERNAL int opt_in_module(PyObject *module, int relocate_getattr, int chosen);
/* enable()'s opt-in of *module* under the native engine, done by the
 * extension (*extension*, its module object) alone: 1 done, 0 not here (a
 * sub-interpreter, or the installation state, *state_module* in
 * sys.modules, is loaded: nothing changed), -1 with an exception. */
NATIVE_INTERNAL int opt_in_alone(PyObject *extension, PyObject *module, PyObject *state_module);
NATIVE_INTERNAL void forget_all_opt_ins(int release);

/* ---- an opted-in module's PEP 562 __getattr__, 3.11-3.14 (relocated_getattr.c) ----
 *
 * The value of a module's opt_ins entry: NULL while nothing is known of a
 * __getattr__, relocation_marker while the module is watched for one (the
 * read slot is wrapped for it), or the function moved out of its namespace.
 * relocating_count counts the entries with a value. */
NATIVE_INTERNAL extern Py_ssize_t relocating_count;
/* Flags of an opt_ins entry (3.12+): the namespace may hold '__getattr__'
 * (set by the dict watcher, cleared by a look), and the namespace is not
 * watched (look every time). */
#define NAMESPACE_MAY_HOLD_GETATTR 1u
#define NAMESPACE_UNWATCHED 2u
/* Flags of an opt_ins entry (3.11-3.14): the module's __getattr__ stays in
 * its namespace (enable(fast_getattr=False) or the version's default), and
 * that placement was the author's explicit choice, which a later default
 * does not override. */
#define GETATTR_KEPT_IN_PLACE 4u
#define GETATTR_PLACE_CHOSEN 8u
NATIVE_INTERNAL extern PyObject *relocation_marker;
/* Where opted-in *module*'s __getattr__ lives: relocated (*relocate_getattr*
 * 1: its reads are specialised, the read slot is wrapped for the process) or
 * kept in its namespace (0).  With *chosen* 0 this is a default, which an
 * earlier explicit choice for the module overrides.  Nothing on versions
 * that never relocate. */
NATIVE_INTERNAL int place_module_getattr(PyObject *module, int relocate_getattr, int chosen);
/* The namespace's __getattr__, if any, moves into *module*'s entry (it wins
 * over the one there).  Returns the entry's function, borrowed (NULL without
 * an exception if there is none).  May run no code but dict operations. */
NATIVE_INTERNAL PyObject *relocated_getattr(PyObject *module, int *error);
/* A store or deletion of '__getattr__' through the module: the relocated
 * function goes back into the namespace first, so that the store, the
 * module's own hooks and `del globals()[name]` in them see plain PEP 562. */
NATIVE_INTERNAL int return_relocated_getattr(PyObject *module);
/* Forget the dict watcher of 3.12+ (*release* 0: the runtime is gone). */
NATIVE_INTERNAL void stop_getattr_watcher(int release);
/* uninstall(): every relocated function goes back into its namespace. */
NATIVE_INTERNAL void return_all_relocated(void);

/* ---- ModuleType's read slot wrapper, 3.11-3.14 (getattr_wrapper.c) ---- */

NATIVE_INTERNAL int getattro_is_wrapped(void);
/* Interned "__getattr__", made with the first wrap. */
NATIVE_INTERNAL extern PyObject *getattr_key;

/* Whether *name* is '__getattr__' (any str equal to it; getattr_key is set
 * whenever a module is relocating). */
static inline int
is_getattr_name(PyObject *name)
{
    if (name == getattr_key) {
        return 1;
    }
    return PyUnicode_Check(name) && PyUnicode_GET_LENGTH(name) == 11 &&
           PyUnicode_Compare(name, getattr_key) == 0;
}

/* Whether the read slot must look for a '__getattr__' in the namespace of
 * the module of opt-in *entry*: always on 3.11, and from 3.12 on only after
 * the dict watcher saw a store that may have put one there. */
static inline int
namespace_needs_look(weak_entry *entry)
{
#if HOOKLESS_CACHE
    return (entry->flags & (NAMESPACE_MAY_HOLD_GETATTR | NAMESPACE_UNWATCHED)) != 0;
#else
    (void)entry;
    return 1;
#endif
}
NATIVE_INTERNAL int wrap_getattro(void);
NATIVE_INTERNAL void unwrap_getattro(int release);
/* Take the wrapper out once no module needs it (no relocated __getattr__). */
NATIVE_INTERNAL void release_getattro_wrapper(void);
NATIVE_INTERNAL int give_wrapper_to(PyTypeObject *type);
/* Whether reads of *type*'s instances reach the wrapper (not a class with
 * a Python __getattr__/__getattribute__ of its own). */
NATIVE_INTERNAL int reads_through_wrapper(PyTypeObject *type);
/* Take the read slot wrapper out (uninstall(), the end of the runtime).
 * *release* as for weak_table_clear(). */
NATIVE_INTERNAL void forget_getattro_wrapper(int release);

/* Whether the hooks found in *module*'s namespace are called.  Only asked
 * once a hook was found: a store on a module without hooks never pays it. */
static inline int
hooks_dispatched(PyObject *module)
{
    return process_wide || is_opted_in(module);
}

/* ---- ModuleType.__setattr__ / __delattr__ (descriptor.c) ---- */

NATIVE_INTERNAL PyObject *new_hook_descr(int deleting);

/* ---- deprecated names after the move (deprecating_modules.c) ---- */

/* The deprecating modules whose names have moved out of their namespace,
 * each with (private builtins, {name: (message, category, warn, load,
 * submodule, kind, warning)}, namespace); kind is one of the DECLARED_*
 * below. */
NATIVE_INTERNAL extern weak_table deprecating_modules;
/* The interpreter's builtins dict, whose changes every private builtins dict
 * mirrors (borrowed: it lives as long as the interpreter); NULL before the
 * first deprecation. */
NATIVE_INTERNAL extern PyObject *interpreter_builtins;
NATIVE_INTERNAL int set_deprecating(PyObject *module, PyObject *builtins, PyObject *entries,
                                    PyObject *interpreter);
/* Count a store of a deprecated name through *module* as under way (1) or over (0). */
NATIVE_INTERNAL int set_storing(PyObject *module, int storing);
NATIVE_INTERNAL int set_store_callback(PyObject *callback);
/* Report it to the collector as a reference of the caller's object. */
NATIVE_INTERNAL int visit_store_callback(visitproc visit, void *arg);
NATIVE_INTERNAL void forget_deprecations(int release);
NATIVE_INTERNAL int store_while_deprecating(PyObject *self, PyObject *name, PyObject *value);
/* Give the functions whose globals are the namespaces of the list *modules*
 * and whose builtins are *interpreter* the matching dict of *privates*, all
 * of them for the first *needed* modules: (rebound, whether a pass over the
 * tracked objects ran, [(objects walked, None or why the walk from that
 * namespace proved nothing)]), or NULL with an exception. */
NATIVE_INTERNAL PyObject *rebind_builtins(PyObject *modules, PyObject *privates,
                                          PyObject *interpreter, Py_ssize_t needed);
/* How many passes over the tracked objects rebind_builtins() ran so far
 * (rebinding_pass.c). */
NATIVE_INTERNAL extern Py_ssize_t rebinding_passes;

/* ---- lazy and removed names declared by the extension alone (declared_alone.c) ---- */

/* The modules declared there and not yet adopted by the deprecations
 * package, each with Py_True when no function of it waits for rebinding. */
NATIVE_INTERNAL extern weak_table declared_alone_modules;
/* lazy_attribute()/removed_attribute() of *module*'s *name* (exact str) with
 * *entry* (a 7-tuple whose load the declaration makes from *factory*, or
 * None for the submodule it names), done by the extension (*extension*)
 * alone: 1 done, 0 not here (nothing changed: the full path decides), -1
 * with an exception. */
NATIVE_INTERNAL int declare_alone(PyObject *extension, PyObject *module, PyObject *name,
                                  PyObject *entry, PyObject *factory, PyObject *state_module);
/* lazy_attribute() and removed_attribute() with their callers' arguments,
 * checked there, a lazy submodule searched, and declare_alone() called
 * (declared_front_door.c): the Python functions _native.lazy_alone() and
 * _native.removed_alone(). */
NATIVE_INTERNAL PyObject *native_lazy_alone(PyObject *extension, PyObject *const *args,
                                            Py_ssize_t nargs);
NATIVE_INTERNAL PyObject *native_removed_alone(PyObject *extension, PyObject *const *args,
                                               Py_ssize_t nargs);
/* deprecate_attribute() with its callers' arguments, as lazy_alone() takes
 * lazy_attribute()'s (declared_front_door.c): _native.deprecated_alone(). */
NATIVE_INTERNAL PyObject *native_deprecated_alone(PyObject *extension, PyObject *const *args,
                                                  Py_ssize_t nargs);
/* [(module, rebound, {name: entry})] of the modules declared alone,
 * forgotten here: the deprecations package adopts them, and declares again
 * the deprecated names handed over (hand_over_deprecated_values()). */
NATIVE_INTERNAL PyObject *take_declared_alone(void);
/* The store slot's detour for a module declared alone while no Python
 * callback is set: a store or deletion of a lazy or removed name ends its
 * declaration. */
NATIVE_INTERNAL int store_declared_alone(PyObject *self, PyObject *name, PyObject *value,
                                         PyObject *entries);
/* ---- deprecated names declared by the extension alone (deprecated_alone.c) ---- */

/* Before the deprecated values of *module* (declared alone, with
 * *private_builtins*) move, no body of it running: the functions it made
 * before its private builtins get them.  1 done, 0 not (they could not all
 * be found: the full path decides), -1 with an exception. */
NATIVE_INTERNAL int rebind_for_move(PyObject *module, PyObject *private_builtins,
                                    PyObject *interpreter);
/* *name*'s value from *namespace* into *private_builtins*: 0 (also when the
 * namespace no longer holds it), -1 with an exception. */
NATIVE_INTERNAL int move_into_private_builtins(PyObject *namespace, PyObject *private_builtins,
                                               PyObject *name);
/* A deprecated name's value, in its module's namespace while the body runs,
 * copied into the private builtins of *record* (the module's record of
 * deprecating_modules.c): 0, or -1 with an exception.  Nothing for a name
 * that is not deprecated there or not in the namespace. */
NATIVE_INTERNAL int copy_deprecated_value(PyObject *record, PyObject *name);
/* Every deprecated name of *module* still in its namespace moves into its
 * private builtins (the end of its declaration window): 0, or -1. */
NATIVE_INTERNAL int move_deprecated_values(PyObject *module);
/* gc.get_freeze_count() noted once, at the first deprecation (what a
 * gc.freeze() after it hides from the pass): 0, or -1 with an exception. */
NATIVE_INTERNAL int note_frozen_at_start(void);
/* _native.frozen_at_start(): that count, or -1 before the first deprecation. */
NATIVE_INTERNAL PyObject *native_frozen_at_start(PyObject *extension, PyObject *ignored);
/* Whether the deprecated values *module* still keeps in its namespace may
 * move into its private builtins now (no body of it runs in another thread,
 * its functions were given them): 1 (also with none to move), 0 not yet,
 * -1 with an exception. */
NATIVE_INTERNAL int deprecated_values_may_move(PyObject *module);
/* {name: entry} of the deprecated names *module* keeps in its namespace,
 * taken out of its entries for the deprecations package to declare again
 * (a new reference), or NULL with an exception. */
NATIVE_INTERNAL PyObject *hand_over_deprecated_values(PyObject *module);
/* Whether *module* is in the window of its declarations (declared_alone.c):
 * its body runs, its deprecated values are still in its namespace. */
NATIVE_INTERNAL int in_declaration_window(PyObject *module);
/* Give *module* (an exact ModuleType) the window's class. */
NATIVE_INTERNAL void enter_declaration_window(PyObject *module);
/* Before 3.12, after importlib.reload() stored *module*'s __spec__: a module
 * with names deprecated alone enters its window again. */
NATIVE_INTERNAL void reopen_window_for_reload(PyObject *module);
/* A store (or deletion: *value* NULL) through *self* of its deprecated
 * *name*, whose entry is *deprecation* in *entries*: warn, bind it in the
 * namespace through the module's hooks, end the deprecation. */
NATIVE_INTERNAL int store_deprecated_alone(PyObject *self, PyObject *name, PyObject *value,
                                           PyObject *entries, PyObject *deprecation);

/* ---- the descriptors in ModuleType's dict (deprecated_descriptor.c) ---- */

/* Warn as a read of a deprecated name through its module does, at the line
 * of the Python code running now: 0, or -1 with the exception. */
NATIVE_INTERNAL int warn_deprecation(PyObject *deprecation);
/* Put a descriptor for each name of the dict *names* that has none into
 * ModuleType's dict; refuses (ValueError, nothing added) a name under which
 * that dict holds anything else. */
NATIVE_INTERNAL int add_descriptors(PyObject *names);
/* The same without forgetting ModuleType's cached lookups: 1 if one was
 * added (the caller forgets them before a read through ModuleType may need
 * the new name), 0 if none, -1 with an exception. */
NATIVE_INTERNAL int add_descriptors_keeping_lookups(PyObject *names);
/* Whether *key* is deprecated by some module: ModuleType's dict holds a
 * descriptor of ours under it. */
NATIVE_INTERNAL int is_deprecated_somewhere(PyObject *key);
/* What an entry's kind (item 5) says: a deprecated name (its value in the
 * private builtins), a lazy one (pep726hook.lazy_attribute()), a removed
 * one (pep726hook.removed_attribute()). */
#define DECLARED_DEPRECATED 0
#define DECLARED_LAZY 1
#define DECLARED_REMOVED 2
#define DECLARED_ENTRY_SIZE 7
/* Raise the AttributeError of a miss of *name* on *obj*, a module that does
 * not declare it, as the generic lookup makes it; *kept_error* and
 * *kept_message* (the name's descriptor's, owned references or NULL) keep
 * the error and its message for the next miss (declared_miss.c).  Returns
 * NULL. */
NATIVE_INTERNAL PyObject *raise_declared_name_miss(PyObject *obj, PyObject *name,
                                                   PyObject **kept_error,
                                                   PyObject **kept_message);
/* Whether the entries dict *entries* deprecates *name* with a value in the
 * private builtins (kind DECLARED_DEPRECATED): 1, 0, or -1 with an error. */
NATIVE_INTERNAL int has_moved_value(PyObject *entries, PyObject *name);
/* *slot*(module, name) with the warning of a removed name *name* of
 * *module* left out: a second lookup of a read that has warned already
 * (getattr_wrapper.c asks ModuleType's slot again for CPython's message). */
NATIVE_INTERNAL PyObject *read_again_without_warning(getattrofunc slot, PyObject *module,
                                                     PyObject *name);

/* ---- private builtins and namespaces kept right (deprecation_watchers.c) ---- */

/* Mirror a change of the interpreter's builtins (*value* NULL: a deletion)
 * into every private builtins dict, but never over a deprecated name. */
NATIVE_INTERNAL void mirror_builtin(PyObject *key, PyObject *value);
#if HOOKLESS_CACHE
/* Watch *namespace* (and, once, the interpreter's builtins); never raises. */
NATIVE_INTERNAL void watch_for_deprecations(PyObject *namespace);
/* Forget the watchers (the interpreter that made them is going). */
NATIVE_INTERNAL void forget_deprecation_watchers(void);
/* Ask for the move of the names the modules' code bound again (a store that
 * held them back has ended). */
NATIVE_INTERNAL void schedule_rebound_moves(void);
#endif

#if PY_VERSION_HEX >= 0x030A0000
/* Give *function* *private_builtins* if it still has the *interpreter*'s
 * builtins; 1 if given, else 0 (made with the private ones already). */
static inline int
give_private_builtins(PyFunctionObject *function, PyObject *interpreter,
                      PyObject *private_builtins)
{
    if (function->func_builtins != interpreter) {
        return 0;
    }
    Py_INCREF(private_builtins);
    /* Frees nothing: the interpreter holds its builtins. */
    Py_SETREF(function->func_builtins, private_builtins);
    return 1;
}
#endif

/* ---- a module's functions found from its namespace (namespace_walk.c) ---- */

/* References the walk may visit: this many per name of the namespace, and
 * this many more. */
#define WALK_BUDGET_PER_NAME 64
#define WALK_BUDGET_BASE 4096

enum walk_outcome {
    WALK_PROVED,                  /* every function with those globals was found */
    WALK_BUDGET_EXCEEDED,         /* the walk stopped early */
    WALK_NAMESPACE_HELD,          /* extra: references to the namespace not explained */
    WALK_GENERATOR_FUNCTION_HELD, /* extra: references to held_function not seen */
    WALK_GREENLETS_LOADED,        /* 3.11+: a parked greenlet's frame may hold a function */
};

typedef struct {
    Py_ssize_t walked; /* objects walked */
    PyObject **to_rebind; /* held, raw memory: functions found with the interpreter's builtins */
    Py_ssize_t to_rebind_count;
    enum walk_outcome outcome;
    Py_ssize_t extra;
    PyObject *held_function; /* its __qualname__ (a new reference), or NULL */
} namespace_walk_result;

/* Walk from *namespace* to the functions whose globals it is, hold those
 * with the *interpreter* builtins (3.10+) for the caller to rebind, and tell
 * whether they were provably all: whether nothing but its module, *known* other
 * references and those functions holds it.  0, or -1 with an exception. */
NATIVE_INTERNAL int walk_namespace(PyObject *namespace, PyObject *private_builtins,
                                   PyObject *interpreter, Py_ssize_t known,
                                   namespace_walk_result *result);

/* ---- frames that started before the move (frame_builtins.c) ---- */

/* A frame whose globals are namespaces[i] and whose builtins are
 * *interpreter* gets privates[i]. */
typedef struct {
    PyObject *const *namespaces;
    PyObject *const *privates;
    Py_ssize_t count;
    PyObject *interpreter;
} frame_targets;
/* Whether the code that *frame* runs is named *name*. */
NATIVE_INTERNAL int frame_code_is_named(struct _frame *frame, const char *name);
/* Whether *item* is a generator, coroutine or async generator, whose frame
 * may wait with the builtins it started with. */
NATIVE_INTERNAL int may_hold_waiting_frame(PyObject *item);
/* Give the frame of *generator* its private builtins if it is a target's;
 * 3.11+: only if its code is in the set *codes* (those of the functions
 * rebound) or its file in the set *files* (theirs and the modules'; the
 * code a function had when the generator started may have been replaced
 * since).  1 if given, 0 if not, -1 with an exception. */
NATIVE_INTERNAL int rebind_generator_frame(PyObject *generator, const frame_targets *targets,
                                           PyObject *codes, PyObject *files);
/* The same for *frame* (a reference the call takes) and every frame below
 * it, but a module body's; the number given. */
NATIVE_INTERNAL Py_ssize_t rebind_frame_chain(struct _frame *frame, const frame_targets *targets);
/* The same for every frame running in a thread of this interpreter (never
 * another interpreter's); the number given, or -1 with an exception. */
NATIVE_INTERNAL Py_ssize_t rebind_running_frames(const frame_targets *targets);
/* 1 if a body of the module whose namespace is *namespace* runs in another
 * thread of this interpreter with other builtins than *private_builtins*
 * (its import has not ended), else 0. */
NATIVE_INTERNAL int body_runs_in_another_thread(PyObject *namespace, PyObject *private_builtins);
/* 1 if a body of the module whose namespace is *namespace* runs in this
 * thread (a `<module>` frame with those globals), else 0. */
NATIVE_INTERNAL int body_runs_here(PyObject *namespace);
/* Before 3.12: 1 if importlib.reload() runs (or will run) *module*'s body here. */
NATIVE_INTERNAL int reload_runs_here(PyObject *module);

/* The store slot without the deprecation detour (store.c). */
NATIVE_INTERNAL int store_through_hooks(PyObject *self, PyObject *name, PyObject *value);

/* ---- the "no hook here" cache, 3.12+ (hookless_cache.c) ---- */

#if HOOKLESS_CACHE
#  define HOOKLESS_SLOTS 256
NATIVE_INTERNAL extern PyObject *hookless[HOOKLESS_SLOTS];

static inline size_t
hookless_slot(PyObject *dict)
{
    uintptr_t address = (uintptr_t)dict;
    return (size_t)((address >> 4) ^ (address >> 12)) & (HOOKLESS_SLOTS - 1);
}

/* Whether *dict* is a live namespace known to hold neither hook key. */
static inline int
known_hookless(PyObject *dict)
{
    return hookless[hookless_slot(dict)] == dict;
}

NATIVE_INTERNAL void remember_hookless(PyObject *dict);
NATIVE_INTERNAL void start_hookless_cache(void);
NATIVE_INTERNAL void stop_hookless_cache(void);
#elif KEYS_VERSION_CACHE
#  define HOOKLESS_SLOTS 256
/* The head of CPython 3.11's PyDictKeysObject (Include/internal/pycore_dict.h,
 * the same in every 3.11 release); start_hookless_cache() checks it against
 * the running interpreter before the cache is used. */
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind;
    uint32_t dk_version;
} keys_head_3_11;
/* Per slot (by the dict's address), a keys version known to hold neither
 * hook key; 0 for none.  Stays 0 everywhere if the check failed. */
NATIVE_INTERNAL extern uint32_t hookless_versions[HOOKLESS_SLOTS];

static inline size_t
hookless_slot(PyObject *dict)
{
    uintptr_t address = (uintptr_t)dict;
    return (size_t)((address >> 4) ^ (address >> 12)) & (HOOKLESS_SLOTS - 1);
}

/* Whether the keys of *dict*, an exact dict, are known to hold neither hook
 * key: their version, which CPython resets to 0 whenever a key is added or
 * removed and otherwise never gives to two different key sets, is one a
 * lookup found without them. */
static inline uint32_t
keys_version(PyObject *dict)
{
    return ((keys_head_3_11 *)((PyDictObject *)dict)->ma_keys)->dk_version;
}

static inline int
known_hookless(PyObject *dict)
{
    uint32_t version = keys_version(dict);
    return version != 0 && hookless_versions[hookless_slot(dict)] == version;
}

NATIVE_INTERNAL void remember_hookless(PyObject *dict);
NATIVE_INTERNAL void start_hookless_cache(void);
static inline void
stop_hookless_cache(void)
{
}
#else
static inline void
start_hookless_cache(void)
{
}

static inline void
stop_hookless_cache(void)
{
}
#endif

/* ---- the call guard, 3.8-3.12 (call_guard.c) ---- */

#if CALL_GUARD
/* 1 if the guard can be installed, 0 if not (keep the slot design), -1 on
 * error. */
NATIVE_INTERNAL int prepare_call_guard(void);
NATIVE_INTERNAL void install_call_guard(void);
NATIVE_INTERNAL void uninstall_call_guard(void);
NATIVE_INTERNAL int call_guard_is_installed(void);
#else
static inline int
prepare_call_guard(void)
{
    return 1;
}

static inline void
install_call_guard(void)
{
}

static inline void
uninstall_call_guard(void)
{
}

static inline int
call_guard_is_installed(void)
{
    return 0;
}
#endif

/* ---- subclasses made before the patch (subclasses.c) ---- */

NATIVE_INTERNAL int repoint_subclasses(PyTypeObject *root, setattrofunc from, setattrofunc to);
NATIVE_INTERNAL int repoint_getattro_subclasses(PyTypeObject *root, getattrofunc from,
                                                getattrofunc to);

#endif /* PEP726HOOK_NATIVE_H */
