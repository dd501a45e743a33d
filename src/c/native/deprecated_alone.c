/* Deprecated names declared by the extension alone.
 *
 * deprecate_attribute() of a name the module holds, in a process that has
 * not loaded pep726hook's installation state, done as the deprecations
 * package does it, with none of its Python machinery.  The value stays in
 * the namespace while the body runs (the body's frame reads its names with
 * the builtins it started with), served by the window's class of
 * declared_alone.c; at the window's end, the first read through the module
 * from outside its body, the functions the module made before its private
 * builtins get them (rebinding_pass.c) and the values move there, where
 * the module's own code then reads them, with no warning.  A body running
 * in another thread, or functions that cannot all be found (a pass over the
 * collector's objects that gc.freeze() would blind), keep the window open;
 * a body still running when the package loads hands its values over, for
 * the package's own window.  A store or deletion of the name through the
 * module warns, binds it in the namespace through the module's hooks and
 * ends the deprecation (store_deprecated_alone()), as the package's store
 * callback does once it is adopted. */
#include "native.h"

/* gc.get_freeze_count() at the first deprecation, as the deprecations
 * package counts it when it loads: CPython 3.12 freezes objects of its own
 * start-up (375 on 3.12.1); only a gc.freeze() after that hides objects from
 * the pass.  Other versions freeze nothing themselves. */
static Py_ssize_t frozen_at_start = -1;

static Py_ssize_t
freeze_count(void)
{
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *count = gc == NULL ? NULL : PyObject_CallMethod(gc, "get_freeze_count", NULL);
    Py_XDECREF(gc);
    Py_ssize_t frozen = count == NULL ? -1 : PyLong_AsSsize_t(count);
    Py_XDECREF(count);
    return frozen;
}

int
note_frozen_at_start(void)
{
    if (frozen_at_start < 0) {
        Py_ssize_t frozen = freeze_count();
        if (frozen < 0) {
            return -1;
        }
        frozen_at_start = PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000 ? frozen : 0;
    }
    return 0;
}

PyObject *
native_frozen_at_start(PyObject *extension, PyObject *Py_UNUSED(ignored))
{
    (void)extension;
    return PyLong_FromSsize_t(frozen_at_start);
}

/* Whether objects were frozen since start-up: 1, 0, or -1 with an error. */
static int
frozen_since_start(void)
{
    if (note_frozen_at_start() < 0) {
        return -1;
    }
    Py_ssize_t frozen = freeze_count();
    return frozen < 0 ? -1 : frozen > frozen_at_start;
}

/* Whether the walk (or the pass) of rebind_builtins() found every function
 * of the one module it was given: 1, 0, or -1 with an error. */
static int
rebound_all(PyObject *modules, PyObject *privates, PyObject *interpreter, Py_ssize_t needed)
{
    PyObject *outcome = rebind_builtins(modules, privates, interpreter, needed);
    if (outcome == NULL) {
        return -1;
    }
    PyObject *walk = PyList_GET_ITEM(PyTuple_GET_ITEM(outcome, 2), 0);
    int proved = PyTuple_GET_ITEM(walk, 1) == Py_None || PyTuple_GET_ITEM(outcome, 1) == Py_True;
    Py_DECREF(outcome);
    return proved;
}

int
rebind_for_move(PyObject *module, PyObject *private_builtins, PyObject *interpreter)
{
    weak_entry *alone = weak_table_find(&declared_alone_modules, module);
    if (alone == NULL || alone->value == NULL) {
        return 0;
    }
    if (alone->value != Py_True) {
        /* Functions made before the private builtins: the walk from the
         * namespace, and, if it proved nothing, one pass, unless gc.freeze()
         * hid objects from it. */
        PyObject *modules = PyList_New(1);
        PyObject *privates = modules == NULL ? NULL : PyList_New(1);
        if (privates == NULL) {
            Py_XDECREF(modules);
            return -1;
        }
        PyList_SET_ITEM(modules, 0, Py_NewRef(module));
        PyList_SET_ITEM(privates, 0, Py_NewRef(private_builtins));
        /* One call: the pass tells a suspended generator by the code of
         * the functions the same call gave the builtins.  After a gc.freeze()
         * the walk alone: the pass would miss the frozen objects. */
        int frozen = frozen_since_start();
        int proved = frozen < 0 ? -1 : rebound_all(modules, privates, interpreter, !frozen);
        Py_DECREF(modules);
        Py_DECREF(privates);
        if (proved <= 0) {
            return proved;
        }
        if (weak_table_set(&declared_alone_modules, module, Py_True) < 0) {
            return -1;
        }
    }
    return 1;
}

int
move_into_private_builtins(PyObject *namespace, PyObject *private_builtins, PyObject *name)
{
    PyObject *value = PyDict_GetItemWithError(namespace, name);
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    /* Into the private builtins before out of the namespace: a reader in
     * another thread finds it in one of them. */
    Py_INCREF(value);
    int result = PyDict_SetItem(private_builtins, name, value);
    Py_DECREF(value);
    return result < 0 ? -1 : PyDict_DelItem(namespace, name);
}

int
copy_deprecated_value(PyObject *record, PyObject *name)
{
    Py_INCREF(record); /* a store below may run the collector */
    int result = has_moved_value(PyTuple_GET_ITEM(record, 1), name);
    PyObject *value = result <= 0 ? NULL : PyDict_GetItemWithError(PyTuple_GET_ITEM(record, 2), name);
    if (value != NULL) {
        Py_INCREF(value);
        result = PyDict_SetItem(PyTuple_GET_ITEM(record, 0), name, value);
        Py_DECREF(value);
    }
    else if (result > 0) {
        result = PyErr_Occurred() ? -1 : 0;
    }
    Py_DECREF(record);
    return result < 0 ? -1 : 0;
}

/* The record of *module* (a new reference) and, in *waiting*, the list of
 * its deprecated names whose values are still in its namespace; NULL with
 * *waiting* NULL where it has no record, or with an exception. */
static PyObject *
waiting_values(PyObject *module, PyObject **waiting)
{
    *waiting = NULL;
    weak_entry *entry = weak_table_find(&deprecating_modules, module);
    if (entry == NULL || entry->value == NULL) {
        return NULL;
    }
    PyObject *record = Py_NewRef(entry->value);
    PyObject *names = PyDict_Keys(PyTuple_GET_ITEM(record, 1));
    PyObject *found = names == NULL ? NULL : PyList_New(0);
    for (Py_ssize_t i = 0; found != NULL && i < PyList_GET_SIZE(names); i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        /* A name not in the namespace moved already (or its body deleted
         * it: then its value stays where it was, deprecated). */
        int deprecated = has_moved_value(PyTuple_GET_ITEM(record, 1), name);
        if (deprecated > 0) {
            deprecated = PyDict_Contains(PyTuple_GET_ITEM(record, 2), name);
        }
        if (deprecated < 0 || (deprecated > 0 && PyList_Append(found, name) < 0)) {
            Py_CLEAR(found);
        }
    }
    Py_XDECREF(names);
    if (found == NULL) {
        Py_DECREF(record);
        return NULL;
    }
    *waiting = found;
    return record;
}

int
move_deprecated_values(PyObject *module)
{
    PyObject *waiting;
    PyObject *record = waiting_values(module, &waiting);
    if (record == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int result = 0;
    for (Py_ssize_t i = 0; result == 0 && i < PyList_GET_SIZE(waiting); i++) {
        result = move_into_private_builtins(PyTuple_GET_ITEM(record, 2),
                                            PyTuple_GET_ITEM(record, 0),
                                            PyList_GET_ITEM(waiting, i));
    }
    Py_DECREF(waiting);
    Py_DECREF(record);
    return result;
}

/* The interpreter's builtin of *name* back into the private builtins, or
 * the name out of them (a deprecated name that shadowed a builtin, open or
 * id, gives it back). */
static int
restore_builtin(PyObject *private_builtins, PyObject *name)
{
    PyObject *builtin = interpreter_builtins == NULL
                            ? NULL
                            : PyDict_GetItemWithError(interpreter_builtins, name);
    if (builtin == NULL && PyErr_Occurred()) {
        return -1;
    }
    return restore_entry(private_builtins, name, builtin);
}

int
store_deprecated_alone(PyObject *self, PyObject *name, PyObject *value, PyObject *entries,
                       PyObject *deprecation)
{
    weak_entry *entry = weak_table_find(&deprecating_modules, self);
    if (entry == NULL || entry->value == NULL) {
        return store_through_hooks(self, name, value);
    }
    if (warn_deprecation(deprecation) < 0) {
        return -1; /* as a warnings filter "error" does: nothing changed */
    }
    /* Held: the module's hooks run below. */
    PyObject *record = Py_NewRef(entry->value);
    PyObject *private_builtins = PyTuple_GET_ITEM(record, 0);
    PyObject *namespace = PyTuple_GET_ITEM(record, 2);
    int result = -1;
    /* The name goes back into the namespace for the store (the module's
     * hooks see it there): not a rebinding for the watchers to move back. */
    (void)set_storing(self, 1);
    PyObject *moved = PyDict_GetItemWithError(private_builtins, name);
    Py_XINCREF(moved);
    if (moved == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (moved != NULL &&
        (PyDict_SetDefault(namespace, name, moved) == NULL ||
         restore_builtin(private_builtins, name) < 0)) {
        goto done;
    }
    result = store_through_hooks(self, name, value);
    PyObject *current = PyDict_GetItemWithError(entries, name);
    if (current == NULL && PyErr_Occurred()) {
        result = -1;
    }
    else if (current == deprecation && result == 0) {
        result = PyDict_DelItem(entries, name); /* the deprecation ends */
    }
    else if (current == deprecation) {
        /* A failing store leaves it as it was. */
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        if ((in_declaration_window(self) ? copy_deprecated_value(record, name)
                                         : move_into_private_builtins(namespace, private_builtins,
                                                                      name)) < 0) {
            PyErr_Clear();
        }
        PyErr_Restore(type, error, traceback);
    }
done:
    Py_XDECREF(moved);
    (void)set_storing(self, 0);
    Py_DECREF(record);
    return result;
}

int
deprecated_values_may_move(PyObject *module)
{
    PyObject *waiting;
    PyObject *record = waiting_values(module, &waiting);
    if (record == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    int ready = 1;
    if (PyList_GET_SIZE(waiting) > 0) {
        /* As the deprecations package tells that a module's import has
         * ended: no body of it runs in another thread with other builtins
         * than its private ones; then its functions get them. */
        ready = body_runs_in_another_thread(PyTuple_GET_ITEM(record, 2),
                                            PyTuple_GET_ITEM(record, 0))
                    ? 0
                    : rebind_for_move(module, PyTuple_GET_ITEM(record, 0), interpreter_builtins);
    }
    Py_DECREF(waiting);
    Py_DECREF(record);
    return ready;
}

PyObject *
hand_over_deprecated_values(PyObject *module)
{
    PyObject *waiting;
    PyObject *record = waiting_values(module, &waiting);
    if (record == NULL) {
        return PyErr_Occurred() ? NULL : PyDict_New();
    }
    PyObject *entries = PyTuple_GET_ITEM(record, 1);
    PyObject *handed = PyDict_New();
    for (Py_ssize_t i = 0; handed != NULL && i < PyList_GET_SIZE(waiting); i++) {
        /* Out of the entries (the value is the namespace's), and its copy
         * out of the private builtins. */
        PyObject *name = PyList_GET_ITEM(waiting, i);
        PyObject *deprecation = PyDict_GetItemWithError(entries, name);
        if (deprecation == NULL || PyDict_SetItem(handed, name, deprecation) < 0 ||
            PyDict_DelItem(entries, name) < 0 ||
            restore_builtin(PyTuple_GET_ITEM(record, 0), name) < 0) {
            Py_CLEAR(handed);
        }
    }
    Py_DECREF(waiting);
    Py_DECREF(record);
    return handed;
}

#if !HOOKLESS_CACHE
void
reopen_window_for_reload(PyObject *module)
{
    /* Before 3.12 no dict watcher sees the body bind a moved deprecated
     * name in the namespace again: the window's end moves it again, as the
     * deprecations package's pending-markers class does. */
    weak_entry *record = weak_table_find(&deprecating_modules, module);
    if (Py_TYPE(module) != &PyModule_Type || record == NULL || record->value == NULL ||
        weak_table_find(&declared_alone_modules, module) == NULL || !reload_runs_here(module)) {
        return;
    }
    PyObject *entries = PyTuple_GET_ITEM(record->value, 1);
    PyObject *name, *entry;
    Py_ssize_t position = 0;
    while (PyDict_Next(entries, &position, &name, &entry)) {
        int deprecated = has_moved_value(entries, name);
        if (deprecated != 0) {
            if (deprecated < 0) {
                PyErr_WriteUnraisable(module); /* the store itself succeeded */
                return;
            }
            enter_declaration_window(module);
            return;
        }
    }
}
#endif
