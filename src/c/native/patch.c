/* Putting the patch in and taking it out again: the slot, the entries of
 * ModuleType's dict(s), the tp_methods table new interpreters are built from,
 * and (through the other files) the call guard, the subclasses and the
 * hookless cache. */
#include "native.h"

setattrofunc original_setattro = NULL;
setattrofunc installed_setattro = NULL;
PyInterpreterState *patch_owner = NULL;

/* The main interpreter's entries live for the whole process, outside any
 * module object: a second instance of this module (sys.modules entry deleted
 * and imported again) must find the originals the first one saved. */
static entries_t main_entries = {0, NULL, NULL, NULL, NULL};

/* The entries of the current interpreter, descriptors created on first use. */
entries_t *
get_entries(PyObject *module)
{
    entries_t *entries;
    if (is_main_interpreter()) {
        entries = &main_entries;
    }
    else {
        native_state *state = (native_state *)PyModule_GetState(module);
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

/* This interpreter's ModuleType dict (new reference). */
static PyObject *
module_type_dict(void)
{
    PyObject *dict = type_dict(&PyModule_Type);
    if (dict == NULL && !PyErr_Occurred()) {
        PyErr_SetString(PyExc_SystemError, "ModuleType has no type dict");
    }
    return dict;
}

/* Whether this interpreter's ModuleType dict holds our descriptors (-1 on
 * error).  Before 3.12 sub-interpreters share the main interpreter's. */
int
entries_are_current(entries_t *entries)
{
    PyObject *dict = module_type_dict();
    if (dict == NULL) {
        return -1;
    }
    PyObject *current = PyDict_GetItemWithError(dict, setattr_key);
    Py_DECREF(dict);
    if (current == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    return current == entries->setattr_descr || current == main_entries.setattr_descr;
}

/* ---- finding slot_tp_setattro ---- */

setattrofunc
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

/* ---- new interpreters while patched (3.12+) ----
 *
 * From 3.12 on every new interpreter builds its own dict for each static
 * builtin type: add_operators() fills it with slot wrappers around the slots
 * *as they are now*, then the type's tp_methods are added.  With ModuleType's
 * slot at slot_tp_setattro the new dict's '__setattr__' would be a wrapper
 * around slot_tp_setattro, which looks '__setattr__' up and finds itself: the
 * new interpreter dies with "Fatal Python error: _PySys_Create".  With the
 * direct slot on 3.12 a wrapper around hooked_setattro (which the call guard
 * leaves to CPython) would be rejected by hackcheck() once the main
 * interpreter uninstalls.
 *
 * So while patched, ModuleType's tp_methods is a copy of the original table
 * followed by our two methods flagged METH_COEXIST, which type_add_method()
 * stores over the slot wrappers: every interpreter created while patched,
 * whoever creates it, from any thread, with or without a thread state, gets
 * our method descriptors in its ModuleType dict from the start.  (An earlier
 * design lent the generic slot out from an audit hook around each creation;
 * it raced with other threads and interpreters and could be fooled by
 * sys.audit().)  The table is never freed: interpreters being
 * created in other threads may be reading it. */
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

/* Whether new interpreters must find our methods in ModuleType's tp_methods
 * while *target* is in the slot: from 3.12 on, unless the direct slot is
 * safe without them (3.13+). */
static int
needs_new_interpreter_methods(setattrofunc target)
{
    return PATCH_TP_METHODS && (target != hooked_setattro || !DIRECT_SLOT_IS_SAFE);
}

/* Put the original table back (uninstall, or a runtime that finished). */
static void
restore_tp_methods(void)
{
    if (original_tp_methods != NULL) {
        PyModule_Type.tp_methods = original_tp_methods;
        original_tp_methods = NULL;
    }
}

/* ---- what lookups through ModuleType have cached ----
 *
 * CPython caches a type's attribute lookups under its version tag: the method
 * cache (_PyType_Lookup, which also serves hasattr(), the generic getattr
 * and slot_tp_setattro's look-up of '__setattr__'), and the specialised
 * instructions of the interpreter, with the tier-2 optimizer's type watchers
 * behind them.  PyType_Modified() drops a tag, and with it all of that, for a
 * type and its subclasses.  ModuleType cannot take it from 3.14 on, where
 * static builtin types are immutable (a debug build aborts in
 * type_modified_unlocked), and from 3.13 on each call spends one of the about
 * 1,000 tags a type ever gets: past them ModuleType has none, and every
 * lookup through it misses the method cache for good.
 *
 * What can hold a stale lookup after our changes, found by reading
 * Objects/typeobject.c and Python/specialize.c and checked with
 * dis.get_instructions(adaptive=True) on 3.11 to 3.15:
 *
 *   - the method cache, for ModuleType and its subclasses alike.  From 3.12
 *     on it is per interpreter and PyType_ClearCache() empties it without
 *     touching any tag; our dict changes are made in the interpreter whose
 *     ModuleType dict they change, so clearing its cache is enough.  Before
 *     3.12 PyType_ClearCache() drops the tag of every type in the process,
 *     whereas PyType_Modified(ModuleType) drops only those of ModuleType and
 *     its subclasses, and tags are not limited per type there.
 *   - specialised stores into a subclass instance's __slots__
 *     (STORE_ATTR_SLOT, 3.11+), chosen while the subclass's store slot was
 *     the generic one and guarded by the subclass's tag alone: a subclass
 *     whose slot we repoint must get PyType_Modified(), which it may, being
 *     a heap type (repoint_subclasses() and repoint_getattro_subclasses()).
 *   - nothing else: the specialiser refuses stores into exact modules,
 *     loads of '__setattr__'/'__delattr__' from a module class (type defines
 *     both, so they are metaclass attributes) and the attribute loads of any
 *     subclass instance but those of LOAD_ATTR_MODULE (3.14+), which compare
 *     the read slot with ModuleType's at every execution.  The tier-2
 *     optimizer builds only on specialised instructions, so it holds no
 *     lookup of ours either.
 *
 * The same holds for a descriptor put into ModuleType's dict under a name it
 * did not have: what a lookup cached of that name is its absence, in the
 * method cache only. */
void
forget_module_type_lookups(void)
{
#if PER_INTERPRETER_TYPE_DICT
    (void)PyType_ClearCache();
#else
    PyType_Modified(&PyModule_Type);
#endif
}

/* ---- our entries in a ModuleType dict ---- */

int
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
int
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
    forget_module_type_lookups();
    return 0;
fail:
    Py_XDECREF(old_set);
    Py_XDECREF(old_del);
    Py_DECREF(dict);
    forget_module_type_lookups();
    return -1;
}

int
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
    forget_module_type_lookups();
    if (rc == 0) {
        state->installed = 0;
        Py_CLEAR(state->saved_setattr);
        Py_CLEAR(state->saved_delattr);
    }
    return rc;
}

/* ---- the patch ---- */

/* install() in a sub-interpreter: the main interpreter's patch serves it;
 * from 3.12 on its own ModuleType dict gets our entries. */
static int
attach_interpreter(PyObject *module)
{
    if (patch_owner == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the native engine patches the module type for the whole "
                        "process, so the main interpreter must install it first");
        return -1;
    }
    if (!PER_INTERPRETER_TYPE_DICT) {
        return 0;
    }
    entries_t *entries = get_entries(module);
    return entries == NULL ? -1 : install_dict_entries(entries);
}

/* The function for ModuleType's slot: hooked_setattro when *direct_arg* is
 * None or true and the call guard (3.8-3.12) can be installed, else the
 * slot design's slot_tp_setattro.  NULL on error. */
static setattrofunc
choose_slot(PyObject *direct_arg)
{
    int direct = direct_arg == Py_None ? 1 : PyObject_IsTrue(direct_arg);
    if (direct > 0) {
        /* Without the guard object.__setattr__ would fail on modules: then
         * the slot design it is. */
        direct = prepare_call_guard();
    }
    if (direct < 0) {
        return NULL;
    }
    return direct ? hooked_setattro : find_slot_tp_setattro();
}

/* Point the slot of ModuleType and of its subclasses at *target*, with the
 * dict entries and the call guard in place first.  On failure nothing is
 * changed. */
static int
switch_slot(entries_t *entries, setattrofunc target)
{
    if (install_dict_entries(entries) < 0) {
        return -1;
    }
    if (target == hooked_setattro) {
        /* Before any slot points at hooked_setattro. */
        install_call_guard();
    }
    if (repoint_subclasses(&PyModule_Type, PyObject_GenericSetAttr, target) < 0) {
        /* No subclass was changed. */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        (void)uninstall_dict_entries(entries);
        uninstall_call_guard();
        PyErr_Restore(type, value, tb);
        return -1;
    }
    original_setattro = PyModule_Type.tp_setattro;
    installed_setattro = target;
    PyModule_Type.tp_setattro = target;
    patch_owner = PyInterpreterState_Get();
    return 0;
}

int
patch_module_type(PyObject *module, PyObject *direct_arg)
{
    if (!is_main_interpreter()) {
        return attach_interpreter(module);
    }
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return -1;
    }
    if (patch_owner != NULL) {
        return install_dict_entries(entries);
    }
    if (PyModule_Type.tp_setattro != PyObject_GenericSetAttr) {
        /* Someone else patched the slot: refuse rather than chain to an
         * unknown function (or to slot_tp_setattro, which would loop). */
        PyErr_SetString(PyExc_RuntimeError,
                        "ModuleType's attribute store slot was already replaced by "
                        "something other than pep726hook");
        return -1;
    }
    setattrofunc target = choose_slot(direct_arg);
    if (target == NULL) {
        return -1;
    }
    /* The methods go in before the slot (and come out after it, in
     * unpatch_module_type()): an interpreter that a thread with its own GIL
     * creates meanwhile must never find slot_tp_setattro without them.  The
     * calls in between keep the compiler from reordering the two stores. */
    PyMethodDef *methods_before = PyModule_Type.tp_methods;
    int lend_methods = needs_new_interpreter_methods(target);
    if (lend_methods) {
        if (build_patched_tp_methods() < 0) {
            return -1;
        }
        PyModule_Type.tp_methods = patched_tp_methods;
    }
    if (switch_slot(entries, target) < 0) {
        PyModule_Type.tp_methods = methods_before;
        return -1;
    }
    if (lend_methods) {
        original_tp_methods = methods_before;
    }
    start_hookless_cache();
    return 0;
}

int
unpatch_module_type(PyObject *module)
{
    if (!is_main_interpreter() && !PER_INTERPRETER_TYPE_DICT) {
        return 0;
    }
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return -1;
    }
    if (is_main_interpreter() && patch_owner != NULL) {
        if (repoint_subclasses(&PyModule_Type, installed_setattro, original_setattro) < 0) {
            return -1;
        }
        PyModule_Type.tp_setattro = original_setattro;
        patch_owner = NULL;
        installed_setattro = NULL;
        /* After the slots: until then object.__setattr__ needs it. */
        uninstall_call_guard();
        stop_hookless_cache();
        restore_tp_methods();
        forget_module_type_lookups();
    }
    return uninstall_dict_entries(entries);
}

/* An embedding program may call Py_FinalizeEx() and then Py_Initialize()
 * again; this library (and so every static) stays loaded.  From 3.11 on
 * finalisation tears the static builtin types down and the next
 * initialisation readies them again from their slots as they are: a patched
 * slot_tp_setattro there makes the new ModuleType dict recurse ("Fatal Python
 * error: _PySys_Create: failed to create a module object"), and our statics
 * would point at objects of the finished runtime.  Py_AtExit functions run
 * after that teardown, so this one, without touching any object, puts the
 * type back as it was and forgets the finished runtime.  Where ModuleType
 * survives finalisation (3.8-3.10 keep static types readied, and so their
 * dicts with our entries) the patch carries over into the next runtime, as
 * the class engine's classes would not, and nothing is reset: returns 0
 * then, 1 when it reset the patch. */
int
patch_forget_finished_runtime(void)
{
    if (PyModule_Type.tp_flags & Py_TPFLAGS_READY) {
        return 0;
    }
    if (patch_owner != NULL) {
        PyModule_Type.tp_setattro = original_setattro;
    }
    /* wrapper_descriptor is readied again too, its __call__ from tp_call. */
    uninstall_call_guard();
    restore_tp_methods();
    patch_owner = NULL;
    installed_setattro = NULL;
    /* Their objects died with the runtime: drop the pointers, not references. */
    main_entries.installed = 0;
    main_entries.saved_setattr = NULL;
    main_entries.saved_delattr = NULL;
    main_entries.setattr_descr = NULL;
    main_entries.delattr_descr = NULL;
    return 1;
}
