/* The Python-facing module pep726hook._native, and its life across
 * interpreters and runtimes (multi-phase init, needed for sub-interpreters). */
#include "native.h"

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
    if (patch_module_type(module, direct_arg) < 0) {
        return NULL;
    }
    if (wide) {
        process_wide = 1;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(uninstall_doc,
"uninstall()\n--\n\n"
"Undo install() in this interpreter.  In the interpreter that patched the\n"
"slot this also restores ModuleType's slots and its subclasses' slots, turns\n"
"process-wide dispatch off and forgets every opt-in.\n"
"Idempotent.");

static PyObject *
native_uninstall(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    int unpatching = is_main_interpreter() && patch_owner != NULL;
    if (unpatch_module_type(module) < 0) {
        return NULL;
    }
    if (unpatching) {
        process_wide = 0;
        forget_all_opt_ins(1);
        forget_getattro_wrapper(1);
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
"opt_in(module, relocate_getattr=True, chosen=False, /)\n--\n\n"
"Call *module*'s hooks from now on, even while process-wide dispatch is off.\n"
"The module is held weakly; it needs install() first.  On CPython 3.11-3.14\n"
"*relocate_getattr* says whether its PEP 562 __getattr__ is held outside\n"
"its namespace (reads specialised; ModuleType's read slot wrapped) or left\n"
"there; *chosen* marks that as the author's choice, which a later call\n"
"with chosen false does not change.");

static PyObject *
native_opt_in(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *arg;
    int relocate_getattr = 1, chosen = 0;
    if (!PyArg_ParseTuple(args, "O|pp:opt_in", &arg, &relocate_getattr, &chosen)) {
        return NULL;
    }
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
    if (opt_in_module(arg, relocate_getattr, chosen) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(enable_alone_doc,
"enable_alone(module, state_module, /)\n--\n\n"
"Opt *module* in as enable() does under the native engine, for a process\n"
"that has not loaded pep726hook's installation state (*state_module* is its\n"
"name in sys.modules): patch ModuleType without process-wide dispatch, have\n"
"the module's class reach the patched slot, and opt the module in with this\n"
"version's default place for its PEP 562 __getattr__.  Returns False, having\n"
"changed nothing, where that state is loaded or this is not the main\n"
"interpreter: enable() then takes its full path.");

static PyObject *
native_enable_alone(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyModule_Check(args[0]) || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "enable_alone() takes a module and a str");
        return NULL;
    }
    int done = opt_in_alone(module, args[0], args[1]);
    if (done < 0) {
        return NULL;
    }
    return PyBool_FromLong(done);
}

PyDoc_STRVAR(lazy_alone_doc,
"lazy_alone(module, name, factory, state_module, /)\n--\n\n"
"lazy_attribute(module, name, factory=factory), for a process that has not\n"
"loaded pep726hook's installation state (*state_module* is its name in\n"
"sys.modules): the arguments checked and the submodule searched here, then\n"
"the module opted in as enable_alone() does, given private builtins, and the\n"
"name served from ModuleType's dict, as the deprecations package leaves a\n"
"module once its names have moved.  Returns False, having changed nothing,\n"
"where the full path must decide or refuse: a sub-interpreter, the state\n"
"loaded, bad arguments, no such submodule, a module that is no exact\n"
"ModuleType or whose names the deprecations package keeps, a name the\n"
"namespace holds.");

PyDoc_STRVAR(deprecated_alone_doc,
"deprecated_alone(module, name, message, category, warn, factory, state_module, /)\n--\n\n"
"deprecate_attribute(module, name, message, category=category, warn=warn,\n"
"factory=factory) of a name the module holds, as lazy_alone() declares a\n"
"lazy name: the value stays in the namespace while the body runs; at the\n"
"end of the window the module's functions get its private builtins and the\n"
"value moves there.\n"
"False, having changed nothing of the name, where the full path decides:\n"
"also a factory, a name declared already, a body running in another\n"
"thread, functions that cannot all be found.");

PyDoc_STRVAR(frozen_at_start_doc,
"frozen_at_start()\n--\n\n"
"gc.get_freeze_count() as deprecated_alone() noted it at the first\n"
"deprecation (the start-up's own frozen objects on 3.12; 0 elsewhere), or -1.");

PyDoc_STRVAR(removed_alone_doc,
"removed_alone(module, name, message, warning, category, state_module, /)\n--\n\n"
"removed_attribute(module, name, message, warning=warning, category=category)\n"
"as lazy_alone() declares a lazy name.");

PyDoc_STRVAR(declared_alone_doc,
"declared_alone()\n--\n\n"
"[(module, rebound, handed)] of the modules the extension declared names of\n"
"alone, forgotten here: the deprecations package adopts them as it loads.\n"
"*rebound* is True when no function of the module waits for its private\n"
"builtins; *handed* maps the deprecated names whose values are still in the\n"
"namespace (its body runs) to their entries, taken out of the extension's\n"
"for the package to declare again.");

static PyObject *
native_declared_alone(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return take_declared_alone();
}

PyDoc_STRVAR(opted_in_modules_doc,
"opted_in_modules()\n--\n\n"
"The modules opted in and alive, for the installation state to adopt those\n"
"that enable_alone() opted in before it loaded.");

static PyObject *
native_opted_in_modules(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    /* Made at its full size first: an allocation inside the loop could run
     * the collector, whose weak-reference callbacks change the table. */
    PyObject *modules = PyList_New((Py_ssize_t)opt_ins.count);
    if (modules == NULL) {
        return NULL;
    }
    Py_ssize_t filled = 0;
    for (size_t i = 0; i < opt_ins.capacity; i++) {
        PyObject *opted_in = opt_ins.entries[i].module;
        if (opted_in != NULL && filled < PyList_GET_SIZE(modules)) {
            Py_INCREF(opted_in);
            PyList_SET_ITEM(modules, filled++, opted_in);
        }
    }
    return modules;
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

PyDoc_STRVAR(return_getattr_doc,
"return_getattr(module)\n--\n\n"
"Put *module*'s PEP 562 __getattr__ back into its namespace if it is held\n"
"outside (3.11-3.14), for a module about to get a class of its own whose\n"
"reads look there (pep726hook's deprecating class).  Nothing otherwise.");

static PyObject *
native_return_getattr(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyModule_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "return_getattr() needs a module, not '%.200s'",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (return_relocated_getattr(arg) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The module object through which the main interpreter last set the marker
 * hook or the store callback (borrowed).  Those are held in statics, which the
 * collector cannot see: this object reports them as its own references
 * (native_traverse).  Otherwise, through the callbacks' globals, every module
 * of the package would outlive sys.modules at exit and be cleared name by
 * name instead of freed by the collector (0.75M instructions more at the
 * exit of a process that deprecated a name, on CPython 3.12). */
static PyObject *callbacks_owner = NULL;

PyDoc_STRVAR(set_marker_hook_doc,
"set_marker_hook(marker_type, callback)\n--\n\n"
"Have the patched slot call *callback(module, name, stored)* around a store\n"
"of an instance of *marker_type* (pep726hook.deprecated()'s markers):\n"
"stored False before the store (an exception refuses it), True after.  Both\n"
"None to stop.  Only the main interpreter's are kept.");

static PyObject *
native_set_marker_hook(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "set_marker_hook() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *type = args[0], *callback = args[1];
    if (type == Py_None && callback == Py_None) {
        type = callback = NULL;
    }
    else if (!PyType_Check(type) || !PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError,
                        "set_marker_hook() needs a type and a callable, or None and None");
        return NULL;
    }
    if (set_marker_hook(type, callback) < 0) {
        return NULL;
    }
    if (is_main_interpreter()) {
        callbacks_owner = module;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_deprecating_doc,
"set_deprecating(module, builtins, entries, interpreter_builtins)\n--\n\n"
"Serve reads of *module*'s deprecated names, which have left its namespace\n"
"for *builtins* (its private builtins dict): *entries* maps each name to\n"
"(message, category, warn, load, submodule).  Puts a descriptor for each\n"
"name into ModuleType's dict; mirrors changes of *interpreter_builtins*\n"
"into *builtins* and (3.12+) moves a deprecated name the module's own code\n"
"binds again back into them.  Main interpreter only.");

static PyObject *
native_set_deprecating(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "set_deprecating() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyModule_Check(args[0]) || !PyDict_CheckExact(args[1]) || !PyDict_CheckExact(args[2]) ||
        !PyDict_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "set_deprecating() needs a module and three dicts");
        return NULL;
    }
    if (set_deprecating(args[0], args[1], args[2], args[3]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(deprecating_record_doc,
"deprecating_record(module)\n--\n\n"
"The (builtins, entries, namespace) that set_deprecating() keeps for\n"
"*module*, or None.  The module holds it, as the collector sees: Python\n"
"code reads it here rather than keeping its own strong reference, which\n"
"would keep a module whose namespace leads back to itself alive.");

static PyObject *
native_deprecating_record(PyObject *module, PyObject *target)
{
    (void)module;
    weak_entry *entry =
        is_main_interpreter() ? weak_table_find(&deprecating_modules, target) : NULL;
    PyObject *record = entry != NULL && entry->value != NULL ? entry->value : Py_None;
    Py_INCREF(record);
    return record;
}

PyDoc_STRVAR(set_storing_doc,
"set_storing(module, flag)\n--\n\n"
"Tell that a store of one of *module*'s deprecated names, which puts the\n"
"name back into its namespace itself, is under way (flag true) or over.");

static PyObject *
native_set_storing(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "set_storing() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    int flag = PyObject_IsTrue(args[1]);
    if (flag < 0 || set_storing(args[0], flag) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_deprecated_store_callback_doc,
"set_deprecated_store_callback(callback)\n--\n\n"
"Have the patched slot call *callback(module, name, value)* for a store, and\n"
"*callback(module, name)* for a deletion, of a deprecated name through its\n"
"deprecating module, instead of storing.  None to stop.");

static PyObject *
native_set_deprecated_store_callback(PyObject *module, PyObject *arg)
{
    (void)module;
    if (arg != Py_None && !PyCallable_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "the callback must be callable or None");
        return NULL;
    }
    if (set_store_callback(arg == Py_None ? NULL : arg) < 0) {
        return NULL;
    }
    if (is_main_interpreter()) {
        callbacks_owner = module;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(store_through_hooks_doc,
"store_through_hooks(module, name[, value])\n--\n\n"
"Store (or, without *value*, delete) *name* on *module* as the patched slot\n"
"does for a name that is not deprecated: hooks, then the plain store.");

static PyObject *
native_store_through_hooks(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 && nargs != 3) {
        PyErr_Format(PyExc_TypeError, "store_through_hooks() takes 2 or 3 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (!PyModule_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "store_through_hooks() needs a module and a str");
        return NULL;
    }
    if (store_through_hooks(args[0], args[1], nargs == 3 ? args[2] : NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(rebind_builtins_doc,
"rebind_builtins(modules, privates, interpreter_builtins, needed)\n--\n\n"
"Give every function whose globals are the namespace of a module of the\n"
"list *modules* and whose builtins are *interpreter_builtins* the dict of\n"
"*privates* at the same index (3.10+; before, a call looks\n"
"globals['__builtins__'] up itself).  Each namespace is walked first; one\n"
"pass over the objects the collector tracks serves those whose walk could\n"
"not prove it found every such function, and runs only if one of the\n"
"first *needed* modules is among them.  Returns (rebound, whether the pass\n"
"ran, [(objects walked, None or why not proved) for each module]).");

static PyObject *
native_rebind_builtins(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "rebind_builtins() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t needed = PyLong_AsSsize_t(args[3]);
    if (needed == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (!PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1]) ||
        PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1]) || !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "rebind_builtins() needs two lists of one length and a dict");
        return NULL;
    }
    Py_ssize_t size = PyList_GET_SIZE(args[1]);
    for (Py_ssize_t i = 0; i < size; i++) {
        if (!PyModule_Check(PyList_GET_ITEM(args[0], i)) ||
            !PyDict_CheckExact(PyList_GET_ITEM(args[1], i))) {
            PyErr_SetString(PyExc_TypeError,
                            "rebind_builtins(): modules must be modules and privates dicts");
            return NULL;
        }
    }
    return rebind_builtins(args[0], args[1], args[2], needed);
}

PyDoc_STRVAR(body_runs_elsewhere_doc,
"body_runs_elsewhere(module, private_builtins)\n--\n\n"
"Whether a body of *module* runs in another thread of this interpreter\n"
"with other builtins than *private_builtins* (its import has not ended).");

static PyObject *
native_body_runs_elsewhere(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyModule_Check(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "body_runs_elsewhere() takes a module and a dict");
        return NULL;
    }
    return PyBool_FromLong(body_runs_in_another_thread(PyModule_GetDict(args[0]), args[1]));
}

PyDoc_STRVAR(rebinding_passes_doc,
"rebinding_passes()\n--\n\n"
"How many passes over the objects the collector tracks rebind_builtins()\n"
"has run in this process.");

static PyObject *
native_rebinding_passes(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromSsize_t(rebinding_passes);
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
"module's hooks are called), 'opted_in' (number of live opted-in modules),\n"
"'getattro_wrapped' (ModuleType's read slot serves held __getattr__ functions),\n"
"'relocating' (live opted-in modules whose PEP 562 __getattr__ is held\n"
"outside their namespace, or watched for, on 3.11-3.14).");

static PyObject *
native_state_info(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    entries_t *entries = get_entries(module);
    if (entries == NULL) {
        return NULL;
    }
    int ours = entries_are_current(entries);
    if (ours < 0) {
        return NULL;
    }
    PyInterpreterState *interp = PyInterpreterState_Get();
    return Py_BuildValue(
        "{sOsOsOsOsOsOsOsnsOsn}",
        "patched", patch_owner != NULL ? Py_True : Py_False,
        "owner_is_current", (patch_owner != NULL && patch_owner == interp) ? Py_True : Py_False,
        "main", is_main_interpreter() ? Py_True : Py_False,
        "entries", ours ? Py_True : Py_False,
        "direct",
        (patch_owner != NULL && installed_setattro == hooked_setattro) ? Py_True : Py_False,
        "call_guard", call_guard_is_installed() ? Py_True : Py_False,
        "process_wide", process_wide ? Py_True : Py_False,
        "opted_in", (Py_ssize_t)opt_ins.count,
        "getattro_wrapped", getattro_is_wrapped() ? Py_True : Py_False,
        "relocating", relocating_count);
}

static PyMethodDef native_methods[] = {
    {"install", (PyCFunction)(void (*)(void))native_install, METH_VARARGS | METH_KEYWORDS,
     install_doc},
    {"uninstall", native_uninstall, METH_NOARGS, uninstall_doc},
    {"upgrade_type", native_upgrade_type, METH_O, upgrade_type_doc},
    {"set_deprecating", (PyCFunction)(void (*)(void))native_set_deprecating, METH_FASTCALL,
     set_deprecating_doc},
    {"deprecating_record", native_deprecating_record, METH_O, deprecating_record_doc},
    {"set_storing", (PyCFunction)(void (*)(void))native_set_storing, METH_FASTCALL,
     set_storing_doc},
    {"set_deprecated_store_callback", native_set_deprecated_store_callback, METH_O,
     set_deprecated_store_callback_doc},
    {"store_through_hooks", (PyCFunction)(void (*)(void))native_store_through_hooks,
     METH_FASTCALL, store_through_hooks_doc},
    {"rebind_builtins", (PyCFunction)(void (*)(void))native_rebind_builtins, METH_FASTCALL,
     rebind_builtins_doc},
    {"body_runs_elsewhere", (PyCFunction)(void (*)(void))native_body_runs_elsewhere,
     METH_FASTCALL, body_runs_elsewhere_doc},
    {"rebinding_passes", native_rebinding_passes, METH_NOARGS, rebinding_passes_doc},
    {"type_reaches_hook", native_type_reaches_hook, METH_O, type_reaches_hook_doc},
    {"state", native_state_info, METH_NOARGS, state_doc},
    {"set_process_wide", native_set_process_wide, METH_O, set_process_wide_doc},
    {"opt_in", native_opt_in, METH_VARARGS, opt_in_doc},
    {"is_opted_in", native_is_opted_in, METH_O, is_opted_in_doc},
    {"enable_alone", (PyCFunction)(void (*)(void))native_enable_alone, METH_FASTCALL,
     enable_alone_doc},
    {"opted_in_modules", native_opted_in_modules, METH_NOARGS, opted_in_modules_doc},
    {"lazy_alone", (PyCFunction)(void (*)(void))native_lazy_alone, METH_FASTCALL,
     lazy_alone_doc},
    {"removed_alone", (PyCFunction)(void (*)(void))native_removed_alone, METH_FASTCALL,
     removed_alone_doc},
    {"deprecated_alone", (PyCFunction)(void (*)(void))native_deprecated_alone, METH_FASTCALL,
     deprecated_alone_doc},
    {"frozen_at_start", native_frozen_at_start, METH_NOARGS, frozen_at_start_doc},
    {"declared_alone", native_declared_alone, METH_NOARGS, declared_alone_doc},
    {"return_getattr", native_return_getattr, METH_O, return_getattr_doc},
    {"set_marker_hook", (PyCFunction)(void (*)(void))native_set_marker_hook, METH_FASTCALL,
     set_marker_hook_doc},
    {NULL, NULL, 0, NULL},
};

/* ---- module lifecycle (multi-phase init, needed for sub-interpreters) ---- */

/* Py_AtExit: see patch_forget_finished_runtime() for why and when. */
static int atexit_registered = 0;

static void
forget_finished_runtime(void)
{
    atexit_registered = 0;
    /* The weak references and their callback belonged to the finished
     * runtime; the next one opts its modules in again. */
    forget_all_opt_ins(0);
    forget_getattro_wrapper(0);
    forget_marker_hook(0);
    forget_deprecations(0);
    if (patch_forget_finished_runtime()) {
        process_wide = 0;
        setattr_key = NULL;
        delattr_key = NULL;
    }
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
    native_state *state = (native_state *)PyModule_GetState(module);
    if (state == NULL) {
        return 0;
    }
    Py_VISIT(state->entries.saved_setattr);
    Py_VISIT(state->entries.saved_delattr);
    Py_VISIT(state->entries.setattr_descr);
    Py_VISIT(state->entries.delattr_descr);
    if (module == callbacks_owner) {
        int failed = visit_marker_hook(visit, arg);
        if (failed) {
            return failed;
        }
        return visit_store_callback(visit, arg);
    }
    return 0;
}

static int
native_clear(PyObject *module)
{
    native_state *state = (native_state *)PyModule_GetState(module);
    if (state == NULL) {
        return 0;
    }
    /* Only a sub-interpreter's entries live here, and they die with it: its
     * ModuleType dict is being torn down at the same time. */
    Py_CLEAR(state->entries.saved_setattr);
    Py_CLEAR(state->entries.saved_delattr);
    Py_CLEAR(state->entries.setattr_descr);
    Py_CLEAR(state->entries.delattr_descr);
    if (module == callbacks_owner) {
        /* Part of garbage, or being freed: the callbacks belong to the copy
         * of the package that set them through this object. */
        callbacks_owner = NULL;
        (void)set_marker_hook(NULL, NULL);
        (void)set_store_callback(NULL);
    }
    return 0;
}

static void
native_free(void *module)
{
    (void)native_clear((PyObject *)module);
}

static PyModuleDef_Slot native_slots[] = {
    {Py_mod_exec, (void *)native_exec},
#if MULTIPLE_INTERPRETERS_SLOT
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
