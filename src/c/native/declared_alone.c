/* Lazy and removed names declared by the extension alone.
 *
 * pep726hook.lazy_attribute() and removed_attribute() of an exact ModuleType,
 * in a process that has not loaded pep726hook's installation state, need
 * none of the Python machinery behind deprecated names: a lazy or removed
 * name has no value to keep in the namespace while the module's body runs,
 * so nothing waits for the end of its import.  The declaration leaves the
 * module as the deprecations package leaves it once its names have moved:
 * opted in, with private builtins of its own, its entries in the record of
 * deprecating_modules.c, a descriptor per name in ModuleType's dict
 * (deprecated_descriptor.c serves the reads), and a __dir__ that lists the
 * lazy names.  A lazy name's load is a callable of this file, and a store
 * or deletion of a declared name ends its declaration here
 * (store_declared_alone()) while no Python callback is set.
 *
 * Each new name's descriptor would have ModuleType's method cache forgotten
 * (PyType_ClearCache() on 3.12+, some 60,000 instructions), which a package
 * declaring 70 names would pay 70 times: so while a body of the module runs
 * in the declaring thread, the module has the pending class below, whose
 * read slot serves its declared names itself, and the first read through it
 * from anywhere else forgets the cache once and gives the module
 * ModuleType back.
 *
 * The deprecations package, when it loads, adopts these modules
 * (declared_alone()): from then on it keeps their tables, their loads are
 * its own, and its store callback serves them. */
#include "native.h"

/* ---- the modules declared here and not yet adopted ---- */

static PyObject *
forget_declared_alone(PyObject *self, PyObject *ref)
{
    (void)self;
    (void)weak_table_forget_ref(&declared_alone_modules, ref);
    Py_RETURN_NONE;
}

static PyMethodDef forget_declared_alone_def = {"_forget_declared_alone", forget_declared_alone,
                                                METH_O, NULL};

/* Each module's value: Py_True when no function of it made before its
 * private builtins waits for them (its namespace had no __builtins__, so no
 * code had run in it), else Py_False. */
weak_table declared_alone_modules = {NULL, 0, 0, NULL, &forget_declared_alone_def};

/* ---- a lazy name's load ---- */

typedef struct {
    PyObject_HEAD
    PyObject *module;    /* the module (the collector sees the cycle) */
    PyObject *name;      /* exact str */
    PyObject *factory;   /* the factory, or NULL: the submodule is imported */
    PyObject *submodule; /* the submodule's full name, or NULL */
} lazy_load;

static int
lazy_load_traverse(PyObject *self, visitproc visit, void *arg)
{
    lazy_load *load = (lazy_load *)self;
    Py_VISIT(load->module);
    Py_VISIT(load->factory);
    return 0;
}

static int
lazy_load_clear(PyObject *self)
{
    lazy_load *load = (lazy_load *)self;
    Py_CLEAR(load->module);
    Py_CLEAR(load->factory);
    return 0;
}

static void
lazy_load_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    (void)lazy_load_clear(self);
    Py_CLEAR(((lazy_load *)self)->name);
    Py_CLEAR(((lazy_load *)self)->submodule);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
lazy_load_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<lazy load of %R (pep726hook.lazy_attribute())>",
                                ((lazy_load *)self)->name);
}

/* Compute the value (the factory's, or importlib.import_module() of the
 * submodule, as the deprecations package's load does), store it in the
 * namespace unless a value got there meanwhile (another thread, or the
 * import system binding the submodule), which wins, end the declaration if
 * it is still this load's, and return the namespace's value.  An exception
 * from the computation propagates and nothing changes: the next read tries
 * again. */
static PyObject *
lazy_load_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    lazy_load *load = (lazy_load *)self;
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "a lazy load takes no arguments");
        return NULL;
    }
    if (load->module == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "this lazy load's module is gone");
        return NULL;
    }
    PyObject *value;
    if (load->factory != NULL) {
        value = PyObject_CallObject(load->factory, NULL);
    }
    else {
        PyObject *importlib = PyImport_ImportModule("importlib");
        if (importlib == NULL) {
            return NULL;
        }
        value = PyObject_CallMethod(importlib, "import_module", "O", load->submodule);
        Py_DECREF(importlib);
    }
    if (value == NULL) {
        return NULL;
    }
    /* The module and its namespace, held: the computation ran code. */
    PyObject *module = Py_NewRef(load->module);
    PyObject *namespace = PyModule_GetDict(module);
    PyObject *kept = namespace == NULL ? NULL : PyDict_SetDefault(namespace, load->name, value);
    Py_DECREF(value);
    if (kept == NULL) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(kept);
    weak_entry *entry = weak_table_find(&deprecating_modules, module);
    if (entry != NULL && entry->value != NULL) {
        PyObject *entries = PyTuple_GET_ITEM(entry->value, 1);
        PyObject *current = PyDict_GetItemWithError(entries, load->name);
        if (current != NULL && PyTuple_CheckExact(current) &&
            PyTuple_GET_SIZE(current) == DECLARED_ENTRY_SIZE &&
            PyTuple_GET_ITEM(current, 3) == self) {
            if (PyDict_DelItem(entries, load->name) < 0) {
                Py_CLEAR(kept);
            }
        }
        else if (current == NULL && PyErr_Occurred()) {
            Py_CLEAR(kept);
        }
    }
    Py_DECREF(module);
    return kept;
}

static PyObject *
lazy_load_factory(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *factory = ((lazy_load *)self)->factory;
    return Py_NewRef(factory != NULL ? factory : Py_None);
}

static PyGetSetDef lazy_load_getset[] = {
    {"factory", lazy_load_factory, NULL,
     "The factory, or None for a submodule (the entry's own item 4 names it).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject lazy_load_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.lazy_load",
    .tp_basicsize = sizeof(lazy_load),
    .tp_dealloc = lazy_load_dealloc,
    .tp_repr = lazy_load_repr,
    .tp_call = lazy_load_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A lazy name's load (pep726hook.lazy_attribute(), declared by the extension "
              "alone): compute the value, store it in the namespace, end the declaration.",
    .tp_traverse = lazy_load_traverse,
    .tp_clear = lazy_load_clear,
    .tp_getset = lazy_load_getset,
};

/* ---- dir() of a module with declared names ---- */

typedef struct {
    PyObject_HEAD
    PyObject *module;
} declared_dir;

static int
declared_dir_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((declared_dir *)self)->module);
    return 0;
}

static int
declared_dir_clear(PyObject *self)
{
    Py_CLEAR(((declared_dir *)self)->module);
    return 0;
}

static void
declared_dir_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    (void)declared_dir_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
declared_dir_repr(PyObject *self)
{
    (void)self;
    return PyUnicode_FromString("<dir() of a module with deprecated names (pep726hook)>");
}

/* The namespace's names but __dir__, and every declared name but a removed one, sorted. */
static PyObject *
declared_dir_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "__dir__() takes no arguments");
        return NULL;
    }
    PyObject *module = ((declared_dir *)self)->module;
    if (module == NULL) {
        return PyList_New(0);
    }
    PyObject *namespace = PyModule_GetDict(module);
    if (namespace == NULL) {
        return NULL;
    }
    PyObject *names = PySet_New(NULL);
    if (names == NULL) {
        return NULL;
    }
    /* Copies first: adding a name can run its Python __hash__. */
    PyObject *keys = PyDict_Keys(namespace);
    if (keys == NULL) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        if (PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, "__dir__") == 0) {
            continue;
        }
        if (PySet_Add(names, key) < 0) {
            Py_DECREF(keys);
            goto fail;
        }
    }
    Py_DECREF(keys);
    weak_entry *entry = weak_table_find(&deprecating_modules, module);
    if (entry != NULL && entry->value != NULL) {
        PyObject *items = PyDict_Items(PyTuple_GET_ITEM(entry->value, 1));
        if (items == NULL) {
            goto fail;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
            PyObject *item = PyList_GET_ITEM(items, i);
            PyObject *deprecation = PyTuple_GET_ITEM(item, 1);
            if (PyTuple_CheckExact(deprecation) &&
                PyTuple_GET_SIZE(deprecation) == DECLARED_ENTRY_SIZE &&
                PyLong_AsLong(PyTuple_GET_ITEM(deprecation, 5)) == DECLARED_REMOVED) {
                continue;
            }
            if (PyErr_Occurred() || PySet_Add(names, PyTuple_GET_ITEM(item, 0)) < 0) {
                Py_DECREF(items);
                goto fail;
            }
        }
        Py_DECREF(items);
    }
    PyObject *listed = PySequence_List(names);
    Py_DECREF(names);
    if (listed != NULL && PyList_Sort(listed) < 0) {
        Py_CLEAR(listed);
    }
    return listed;
fail:
    Py_DECREF(names);
    return NULL;
}

static PyTypeObject declared_dir_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pep726hook._native.declared_dir",
    .tp_basicsize = sizeof(declared_dir),
    .tp_dealloc = declared_dir_dealloc,
    .tp_repr = declared_dir_repr,
    .tp_call = declared_dir_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A module's PEP 562 __dir__: its namespace's names and its declared ones.",
    .tp_traverse = declared_dir_traverse,
    .tp_clear = declared_dir_clear,
};

/* ---- the window: reads through a module whose body still declares ---- */

/* The module type back, once: ModuleType's cached lookups are forgotten (one
 * of them may be the absence of a name declared since), then the module is
 * an exact ModuleType again.  Both classes are static: no reference to a
 * class changes hands. */
static void
leave_window(PyObject *module)
{
    forget_module_type_lookups();
    Py_SET_TYPE(module, &PyModule_Type);
}

/* The end of the window, where its deprecated names may move (their readers
 * given the private builtins first, deprecated_alone.c): 1 ended, 0 not yet
 * (the names stay in the namespace, served here), -1 with an exception. */
static int
end_window(PyObject *module)
{
    int ready = deprecated_values_may_move(module);
    if (ready <= 0) {
        return ready;
    }
    if (move_deprecated_values(module) < 0) {
        return -1;
    }
    leave_window(module);
    return 1;
}

static int
pending_traverse(PyObject *self, visitproc visit, void *arg)
{
    return PyModule_Type.tp_traverse(self, visit, arg);
}

static int
pending_clear(PyObject *self)
{
    return PyModule_Type.tp_clear(self);
}

static PyObject *pending_getattro(PyObject *self, PyObject *name);

/* Named as ModuleType is (repr(type(m)) reads "<class 'module'>"), its layout
 * ModuleType's; its store slot is inherited, and repointed with ModuleType's
 * subclasses. */
static PyTypeObject pending_module_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "module",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A module whose body declares lazy and removed names "
              "(pep726hook.lazy_attribute(), removed_attribute()) while it runs.",
    .tp_traverse = pending_traverse,
    .tp_clear = pending_clear,
    .tp_getattro = pending_getattro,
};

static int
ready_pending_type(void)
{
    if (pending_module_type.tp_flags & Py_TPFLAGS_READY) {
        return 0;
    }
    pending_module_type.tp_base = &PyModule_Type;
    pending_module_type.tp_basicsize = PyModule_Type.tp_basicsize;
    return PyType_Ready(&pending_module_type);
}

int
in_declaration_window(PyObject *module)
{
    return Py_TYPE(module) == &pending_module_type;
}

void
enter_declaration_window(PyObject *module)
{
    Py_SET_TYPE(module, &pending_module_type);
}

/* Whether this thread runs a body of *module* (whose namespace is
 * *namespace*), or, before 3.12, is about to run it again for
 * importlib.reload(), which reads the module before its body starts. */
static int
body_runs_or_reruns_here(PyObject *module, PyObject *namespace)
{
#if !HOOKLESS_CACHE
    if (reload_runs_here(module)) {
        return 1;
    }
#else
    (void)module;
#endif
    return namespace != NULL && body_runs_here(namespace);
}

/* While a body of the module runs in this thread, a declared name is served
 * here: ModuleType's cached lookups may still hold its absence.  Any other
 * read ends the window first. */
static PyObject *
pending_getattro(PyObject *self, PyObject *name)
{
    PyObject *namespace = PyModule_GetDict(self);
    if (!body_runs_or_reruns_here(self, namespace)) {
        int ended = end_window(self);
        if (ended != 0) {
            return ended < 0 ? NULL : PyObject_GetAttr(self, name);
        }
    }
    weak_entry *entry = weak_table_find(&deprecating_modules, self);
    if (entry != NULL && entry->value != NULL && PyUnicode_CheckExact(name)) {
        int declared = PyDict_Contains(PyTuple_GET_ITEM(entry->value, 1), name);
        /* A deprecated name's value is the namespace's while the body runs
         * (it may have bound it again): the descriptor reads it from the
         * private builtins. */
        if (declared > 0 && copy_deprecated_value(entry->value, name) < 0) {
            return NULL;
        }
        if (declared < 0) {
            return NULL;
        }
        PyObject *dict = declared ? type_dict(&PyModule_Type) : NULL;
        if (dict != NULL) {
            PyObject *descr = PyDict_GetItemWithError(dict, name);
            Py_XINCREF(descr);
            Py_DECREF(dict);
            if (descr != NULL && Py_TYPE(descr)->tp_descr_get != NULL) {
                PyObject *value =
                    Py_TYPE(descr)->tp_descr_get(descr, self, (PyObject *)Py_TYPE(self));
                Py_DECREF(descr);
                return value;
            }
            Py_XDECREF(descr);
            if (PyErr_Occurred()) {
                return NULL;
            }
        }
    }
    return PyModule_Type.tp_getattro(self, name);
}

/* ---- the declaration ---- */

/* "__builtins__", interned once for the life of the process (main interpreter only). */
static PyObject *builtins_name = NULL;

static PyObject *
builtins_key(void)
{
    if (builtins_name == NULL) {
        builtins_name = PyUnicode_InternFromString("__builtins__");
    }
    return builtins_name;
}

/* The interpreter's builtins dict (borrowed), or NULL without an exception. */
static PyObject *
builtins_of_interpreter(PyObject **builtins_module)
{
    *builtins_module = PyDict_GetItemString(PyImport_GetModuleDict(), "builtins");
    if (*builtins_module == NULL || !PyModule_Check(*builtins_module)) {
        return NULL;
    }
    PyObject *dict = PyModule_GetDict(*builtins_module);
    return dict != NULL && PyDict_CheckExact(dict) ? dict : NULL;
}

/* Whether the namespace's __builtins__ (*current*, borrowed or NULL) lets
 * the module have private builtins: absent, or the interpreter's (its dict,
 * or the module as in __main__), as the deprecations package asks. */
static int
builtins_are_the_interpreters(PyObject *current, PyObject *interpreter, PyObject *builtins_module)
{
    return current == NULL || current == interpreter || current == builtins_module;
}

int
declare_alone(PyObject *extension, PyObject *module, PyObject *name, PyObject *entry,
              PyObject *factory, PyObject *state_module)
{
    if (!is_main_interpreter() ||
        (Py_TYPE(module) != &PyModule_Type && Py_TYPE(module) != &pending_module_type)) {
        return 0;
    }
    if (builtins_key() == NULL) {
        return -1;
    }
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 5));
    if (kind == -1 && PyErr_Occurred()) {
        return -1;
    }
    /* A deprecated name waits in the namespace for its window's end
     * (deprecated_alone.c). */
    int deprecated = kind == DECLARED_DEPRECATED;
    if (kind != DECLARED_LAZY && kind != DECLARED_REMOVED && !deprecated) {
        return 0;
    }
    PyObject *namespace = PyModule_GetDict(module);
    if (namespace == NULL || !PyDict_CheckExact(namespace)) {
        PyErr_Clear();
        return 0;
    }
    /* A lazy or removed name has no value yet; a deprecated one has. */
    int present = PyDict_Contains(namespace, name);
    if (present != deprecated) {
        return present < 0 ? -1 : 0;
    }
    weak_entry *record_entry = weak_table_find(&deprecating_modules, module);
    weak_entry *alone = weak_table_find(&declared_alone_modules, module);
    if ((record_entry != NULL) != (alone != NULL) ||
        (record_entry != NULL && record_entry->value == NULL)) {
        return 0; /* the deprecations package keeps this module's names */
    }
    PyObject *builtins_module;
    PyObject *interpreter = builtins_of_interpreter(&builtins_module);
    if (interpreter == NULL ||
        (interpreter_builtins != NULL && interpreter_builtins != interpreter)) {
        return 0;
    }
    PyObject *current = PyDict_GetItemWithError(namespace, builtins_key());
    if (current == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (alone == NULL && !builtins_are_the_interpreters(current, interpreter, builtins_module)) {
        return 0;
    }
    if (deprecated) {
        /* Not a name declared already (a second deprecation replaces the
         * first: the full path's), nor a body running in another thread,
         * whose import has not ended there. */
        PyObject *had = alone == NULL ? NULL : PyTuple_GET_ITEM(record_entry->value, 0);
        int declared_already =
            alone == NULL ? 0 : PyDict_Contains(PyTuple_GET_ITEM(record_entry->value, 1), name);
        if (declared_already != 0) {
            return declared_already < 0 ? -1 : 0;
        }
        if (body_runs_in_another_thread(namespace, had)) {
            return 0;
        }
        if (note_frozen_at_start() < 0) {
            return -1;
        }
    }
    /* Every test above only read.  From here on the module changes. */
    int opted_in = opt_in_alone(extension, module, state_module);
    if (opted_in <= 0) {
        return opted_in;
    }
    if (PyType_Ready(&lazy_load_type) < 0 || PyType_Ready(&declared_dir_type) < 0 ||
        ready_pending_type() < 0) {
        return -1;
    }
    /* A tuple of ours (the caller's may be shared), whose load is set below. */
    PyObject *declared = PyTuple_New(DECLARED_ENTRY_SIZE);
    if (declared == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < DECLARED_ENTRY_SIZE; i++) {
        PyTuple_SET_ITEM(declared, i, Py_NewRef(PyTuple_GET_ITEM(entry, i)));
    }
    if (kind == DECLARED_LAZY) {
        lazy_load *load = PyObject_GC_New(lazy_load, &lazy_load_type);
        if (load == NULL) {
            Py_DECREF(declared);
            return -1;
        }
        load->module = Py_NewRef(module);
        load->name = Py_NewRef(name);
        load->factory = factory == Py_None ? NULL : Py_NewRef(factory);
        PyObject *submodule = PyTuple_GET_ITEM(entry, 4);
        load->submodule = submodule == Py_None ? NULL : Py_NewRef(submodule);
        PyObject_GC_Track((PyObject *)load);
        Py_SETREF(((PyTupleObject *)declared)->ob_item[3], (PyObject *)load);
    }
    int result = -1;
    if (alone == NULL) {
        /* The record made with no entry (set_deprecating() would forget the
         * cached lookups for it), the name added below as any later one. */
        PyObject *private = PyDict_Copy(interpreter);
        PyObject *entries = private == NULL ? NULL : PyDict_New();
        if (entries != NULL && PyDict_SetItem(namespace, builtins_key(), private) == 0) {
            if (set_deprecating(module, private, entries, interpreter) == 0 &&
                weak_table_set(&declared_alone_modules, module,
                               current == NULL ? Py_True : Py_False) == 0) {
                record_entry = weak_table_find(&deprecating_modules, module);
                result = record_entry != NULL && record_entry->value != NULL ? 0 : -1;
            }
            else {
                /* The module's own builtins back, as they were. */
                PyObject *type, *value, *traceback;
                PyErr_Fetch(&type, &value, &traceback);
                if (current == NULL ? PyDict_DelItem(namespace, builtins_key())
                                    : PyDict_SetItem(namespace, builtins_key(), current)) {
                    PyErr_Clear();
                }
                PyErr_Restore(type, value, traceback);
            }
        }
        Py_XDECREF(private);
        Py_XDECREF(entries);
    }
    else {
        result = 0;
    }
    /* Whether a body of the module runs in this thread: asked where it
     * matters (a walk of the frames), -1 until then. */
    int window = deprecated ? body_runs_here(namespace) : -1;
    if (result == 0 && deprecated && !window) {
        /* No body of it runs: the value moves at once, everything that reads
         * the module's names with the interpreter's builtins given the
         * private ones first.  (In a window that waits for its end.) */
        result = rebind_for_move(module, PyTuple_GET_ITEM(record_entry->value, 0), interpreter);
        if (result <= 0) {
            Py_DECREF(declared);
            return result; /* 0: the full path decides, as for a module it adopts */
        }
        record_entry = weak_table_find(&deprecating_modules, module);
        result = record_entry != NULL && record_entry->value != NULL ? 0 : -1;
    }
    if (result == 0) {
        /* Its descriptor first (nothing is added if ModuleType's dict holds
         * anything else under the name), then its entry.  A module that is
         * not in its window yet enters it: a read through it that comes from
         * outside its body forgets the cached lookups, once. */
        result = -1;
        PyObject *one = PyDict_New();
        int added = one == NULL || PyDict_SetItem(one, name, declared) < 0
                        ? -1
                        : add_descriptors_keeping_lookups(one);
        if (added >= 0 &&
            PyDict_SetItem(PyTuple_GET_ITEM(record_entry->value, 1), name, declared) == 0 &&
            (!deprecated || copy_deprecated_value(record_entry->value, name) == 0)) {
            result = 0;
            /* A deprecated name keeps its value in the namespace while the
             * body runs, as the deprecations package keeps it: the window's
             * class serves it, and moves it at the window's end. */
            if (Py_TYPE(module) == &PyModule_Type && (added > 0 || deprecated) && window < 0) {
                window = body_runs_here(namespace);
            }
            if (Py_TYPE(module) == &PyModule_Type && window > 0 && (added > 0 || deprecated)) {
                Py_SET_TYPE(module, &pending_module_type);
            }
            else if (Py_TYPE(module) == &PyModule_Type && added > 0) {
                forget_module_type_lookups();
            }
            if (deprecated && window == 0) {
                /* Its functions were given the private builtins above. */
                result = move_deprecated_values(module);
                if (result == 0 && Py_TYPE(module) == &pending_module_type) {
                    leave_window(module);
                }
            }
        }
        Py_XDECREF(one);
    }
    Py_DECREF(declared);
    if (result < 0) {
        return -1;
    }
    static PyObject *dir_key = NULL; /* the main interpreter's, as every object here */
    if (dir_key == NULL && (dir_key = PyUnicode_InternFromString("__dir__")) == NULL) {
        return -1;
    }
    int has_dir = PyDict_Contains(namespace, dir_key);
    if (has_dir == 0) {
        declared_dir *listing = PyObject_GC_New(declared_dir, &declared_dir_type);
        if (listing == NULL) {
            has_dir = -1;
        }
        else {
            listing->module = Py_NewRef(module);
            PyObject_GC_Track((PyObject *)listing);
            has_dir = PyDict_SetItem(namespace, dir_key, (PyObject *)listing);
            Py_DECREF(listing);
        }
    }
    return has_dir < 0 ? -1 : 1;
}

PyObject *
take_declared_alone(void)
{
    /* The modules first, in a list made at its full size: an allocation
     * inside the loop could run the collector, whose weak-reference
     * callbacks change the table. */
    Py_ssize_t count = (Py_ssize_t)declared_alone_modules.count;
    PyObject *modules = PyList_New(count);
    if (modules == NULL) {
        return NULL;
    }
    Py_ssize_t filled = 0;
    for (size_t i = 0; i < declared_alone_modules.capacity; i++) {
        weak_entry *entry = &declared_alone_modules.entries[i];
        if (entry->module != NULL && filled < count) {
            PyList_SET_ITEM(modules, filled, Py_NewRef(entry->module));
            filled++;
        }
    }
    PyObject *taken = PyList_New(0);
    for (Py_ssize_t i = 0; taken != NULL && i < filled; i++) {
        PyObject *module = PyList_GET_ITEM(modules, i);
        /* An open window ends where its deprecated values may move; where
         * its body still runs (or its functions cannot all be found), they
         * stay in the namespace and are handed over, for the package's own
         * window. */
        PyObject *handed = NULL;
        if (Py_TYPE(module) == &pending_module_type) {
            PyObject *namespace = PyModule_GetDict(module);
            int ended = body_runs_or_reruns_here(module, namespace) ? 0 : end_window(module);
            if (ended < 0) {
                PyErr_WriteUnraisable(module); /* the values stay in the namespace */
                ended = 0;
            }
            if (ended == 0) {
                handed = hand_over_deprecated_values(module);
                leave_window(module);
            }
        }
        if (handed == NULL && !PyErr_Occurred()) {
            handed = PyDict_New();
        }
        weak_entry *entry = weak_table_find(&declared_alone_modules, module);
        PyObject *triple = handed == NULL ? NULL
                                          : PyTuple_Pack(3, module,
                                                         entry != NULL && entry->value != NULL
                                                             ? entry->value
                                                             : Py_False,
                                                         handed);
        if (triple == NULL || PyList_Append(taken, triple) < 0) {
            Py_CLEAR(taken);
        }
        Py_XDECREF(triple);
        Py_XDECREF(handed);
    }
    weak_table_clear(&declared_alone_modules, 1);
    if (filled > 0) {
        /* Once more for all: a module whose own code gave it another class
         * during its window left the window without its end. */
        forget_module_type_lookups();
    }
    Py_DECREF(modules);
    return taken;
}

int
store_declared_alone(PyObject *self, PyObject *name, PyObject *value, PyObject *entries)
{
    /* Held: the store runs the module's hooks, which may change the table. */
    PyObject *declared = PyDict_GetItemWithError(entries, name);
    if (declared == NULL) {
        return PyErr_Occurred() ? -1 : store_through_hooks(self, name, value);
    }
    Py_INCREF(declared);
    Py_INCREF(entries);
    long kind = PyTuple_CheckExact(declared) && PyTuple_GET_SIZE(declared) == DECLARED_ENTRY_SIZE
                    ? PyLong_AsLong(PyTuple_GET_ITEM(declared, 5))
                    : DECLARED_DEPRECATED;
    int result = 0;
    if (kind == -1 && PyErr_Occurred()) {
        result = -1;
    }
    else if (kind == DECLARED_DEPRECATED) {
        result = store_deprecated_alone(self, name, value, entries, declared);
    }
    else {
        /* A store binds the name as on a plain module (the import system's
         * binding of a lazy submodule too) and ends the declaration; a
         * deletion of a lazy name never loaded just ends it. */
        PyObject *namespace = PyModule_GetDict(self);
        int skip = 0;
        if (value == NULL && kind == DECLARED_LAZY && namespace != NULL) {
            skip = PyDict_Contains(namespace, name) == 0;
        }
        if (!skip) {
            result = store_through_hooks(self, name, value);
        }
        if (result == 0) {
            PyObject *current = PyDict_GetItemWithError(entries, name);
            if (current == declared) {
                result = PyDict_DelItem(entries, name);
            }
            else if (current == NULL && PyErr_Occurred()) {
                result = -1;
            }
        }
    }
    Py_DECREF(entries);
    Py_DECREF(declared);
    return result;
}
