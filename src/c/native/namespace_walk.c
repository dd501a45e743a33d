/* Finding a module's functions from its namespace, with a proof that none
 * was missed.
 *
 * At the move, the functions made before a module's first deprecation call
 * still have the interpreter's builtins and must get the module's private
 * ones.  A pass over every object the collector tracks finds them all, but
 * costs as much as the process is large.  Most of them are reachable from
 * the namespace: its functions, its classes' methods, properties and
 * static or class methods, decorated functions through their wrappers'
 * closures and __wrapped__, lambdas in its containers.  This file walks
 * those, within a budget, and then proves by reference counts that nothing
 * else holds a function of that namespace:
 *
 * - a function holds exactly one strong reference to its globals, the
 *   module one (its md_dict) and the caller knows of its own (the record of
 *   the deprecating module); so when the namespace's count is 1 + those +
 *   the functions found, no other function has those globals.  Anything else
 *   that holds the namespace (a frame on 3.10, a kept globals(), a
 *   function only another module's registry holds) makes the count larger:
 *   then the pass runs.  A reference that a frame's stack borrows (3.14)
 *   is not counted, but it borrows what something else holds strongly, so
 *   it never hides a function;
 * - from 3.11 on a suspended generator's frame holds its function (and not
 *   the globals): a generator function found must have no reference beyond
 *   those the walk saw, or the pass runs (it is where such frames are found);
 *   so must a function whose __code__ was replaced (its generators run the
 *   old code).  Before 3.11 the frame holds the globals, which the first rule
 *   counts.
 *
 * Before 3.10 a function has no builtins of its own and nothing is rebound,
 * but the proof still tells whether the pass must look for generators
 * suspended with the interpreter's builtins (frame_builtins.c).
 *
 * The walk reads the object graph only (tp_traverse and the dicts' own
 * iteration): it runs no Python code and makes no object, so nothing it
 * notes can change or go away before the counts are read. */
#include "native.h"

/* Every object walked, with the references to it that the walk saw. */
typedef struct {
    PyObject *object;
    Py_ssize_t edges;
} walked_object;

typedef struct {
    PyObject *namespace;
    PyObject *module_name; /* the namespace's __name__ (borrowed), or NULL */
    PyObject *skipped[2];  /* the private and the interpreter's builtins */
    PyObject *parent;      /* the object whose references are being visited */
    walked_object *table;  /* open addressing, capacity a power of two */
    size_t capacity;
    size_t used;
    PyObject **stack; /* walked, not yet visited */
    size_t depth;
    size_t stack_capacity;
    Py_ssize_t budget; /* references left to visit */
    int no_memory;
} namespace_walk;

static size_t
slot_of(namespace_walk *walk, PyObject *object)
{
    uintptr_t address = (uintptr_t)object;
    size_t mask = walk->capacity - 1;
    size_t slot = (size_t)((address >> 4) * 0x9E3779B97F4A7C15ULL) & mask;
    while (walk->table[slot].object != NULL && walk->table[slot].object != object) {
        slot = (slot + 1) & mask;
    }
    return slot;
}

static int
grow_table(namespace_walk *walk)
{
    walked_object *old = walk->table;
    size_t old_capacity = walk->capacity;
    size_t capacity = old_capacity == 0 ? 256 : old_capacity * 2;
    walked_object *table = (walked_object *)PyMem_RawCalloc(capacity, sizeof(walked_object));
    if (table == NULL) {
        return -1;
    }
    walk->table = table;
    walk->capacity = capacity;
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].object != NULL) {
            walk->table[slot_of(walk, old[i].object)] = old[i];
        }
    }
    PyMem_RawFree(old);
    return 0;
}

static int
push(namespace_walk *walk, PyObject *object)
{
    if (walk->depth == walk->stack_capacity) {
        size_t capacity = walk->stack_capacity == 0 ? 256 : walk->stack_capacity * 2;
        PyObject **stack = (PyObject **)PyMem_RawRealloc(walk->stack, capacity * sizeof(PyObject *));
        if (stack == NULL) {
            return -1;
        }
        walk->stack = stack;
        walk->stack_capacity = capacity;
    }
    walk->stack[walk->depth++] = object;
    return 0;
}

/* functools.partial, whose type is not public: its references are its
 * function, arguments and __dict__.  (A class merely named so is walked
 * through its tp_traverse too, which is as safe.) */
static int
is_partial(PyObject *object)
{
    PyTypeObject *type = Py_TYPE(object);
    return PyObject_IS_GC(object) && type->tp_traverse != NULL &&
           strcmp(type->tp_name, "functools.partial") == 0;
}

/* The objects whose references the walk follows. */
static int
is_walked_kind(PyObject *object)
{
    PyTypeObject *type = Py_TYPE(object);
    return PyFunction_Check(object) || type == &PyCell_Type || type == &PyTuple_Type ||
           type == &PyList_Type || type == &PyDict_Type || type == &PySet_Type ||
           type == &PyFrozenSet_Type || type == &PyStaticMethod_Type ||
           type == &PyClassMethod_Type || type == &PyProperty_Type || type == &PyMethod_Type ||
           (PyType_Check(object) &&
            PyType_HasFeature((PyTypeObject *)object, Py_TPFLAGS_HEAPTYPE)) ||
           is_partial(object);
}

/* tp_traverse's visitproc: note one reference of walk->parent. */
static int
visit_reference(PyObject *object, void *arg)
{
    namespace_walk *walk = (namespace_walk *)arg;
    PyObject *parent = walk->parent;
    if (--walk->budget < 0) {
        return 1;
    }
    if (object == (PyObject *)Py_TYPE(parent) || object == walk->skipped[0] ||
        object == walk->skipped[1] || object == walk->namespace || !is_walked_kind(object)) {
        return 0;
    }
    if (PyFunction_Check(parent)) {
        /* Never a function's globals or builtins: other modules' namespaces. */
        PyFunctionObject *function = (PyFunctionObject *)parent;
        if (object == function->func_globals) {
            return 0;
        }
#if PY_VERSION_HEX >= 0x030A0000
        if (object == function->func_builtins) {
            return 0;
        }
#endif
    }
    if (2 * (walk->used + 1) > walk->capacity && grow_table(walk) < 0) {
        walk->no_memory = 1;
        return 1;
    }
    walked_object *entry = &walk->table[slot_of(walk, object)];
    entry->edges++;
    if (entry->object == NULL) {
        entry->object = object;
        walk->used++;
        if (push(walk, object) < 0) {
            walk->no_memory = 1;
            return 1;
        }
    }
    return 0;
}

/* 1 if *cls*'s own __module__ is the walked module's name. */
static int
defined_in_module(namespace_walk *walk, PyTypeObject *cls)
{
    if (walk->module_name == NULL || cls->tp_dict == NULL) {
        return 0;
    }
    Py_ssize_t position = 0;
    PyObject *key;
    PyObject *value;
    while (PyDict_Next(cls->tp_dict, &position, &key, &value)) {
        walk->budget--;
        if (PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, "__module__") == 0) {
            return PyUnicode_CheckExact(value) && PyUnicode_Compare(value, walk->module_name) == 0;
        }
    }
    return 0;
}

/* Visit the references of *object*: a class's own dict's values (not its
 * bases nor its MRO), the others' through their tp_traverse. */
static int
visit_references(namespace_walk *walk, PyObject *object)
{
    walk->parent = object;
    if (!PyType_Check(object)) {
        return Py_TYPE(object)->tp_traverse(object, visit_reference, walk);
    }
    PyTypeObject *cls = (PyTypeObject *)object;
    if (!defined_in_module(walk, cls)) {
        return 0;
    }
    Py_ssize_t position = 0;
    PyObject *key;
    PyObject *value;
    while (PyDict_Next(cls->tp_dict, &position, &key, &value)) {
        if (visit_reference(value, walk)) {
            return 1;
        }
    }
    return 0;
}

#if PY_VERSION_HEX >= 0x030A0000
/* 1 if *function*'s suspended generators may wait with a frame that holds
 * it: its code makes generators, or it is not the code the function was
 * made with (``f.__code__ = other``: the generators started before run the
 * old code, whose flags are not known here).  A function keeps the name of
 * its first code, unless functools.wraps() renamed it (then it has
 * __wrapped__); a hot reload that keeps the name is not told apart. */
static int
may_have_suspended_generators(PyFunctionObject *function)
{
    PyCodeObject *code = (PyCodeObject *)function->func_code;
    if ((code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) != 0) {
        return 1;
    }
    if (!PyUnicode_Check(function->func_name) ||
        PyUnicode_Compare(function->func_name, code->co_name) == 0) {
        return 0;
    }
    if (function->func_dict != NULL) {
        Py_ssize_t position = 0;
        PyObject *key;
        PyObject *value;
        while (PyDict_Next(function->func_dict, &position, &key, &value)) {
            if (PyUnicode_CheckExact(key) &&
                PyUnicode_CompareWithASCIIString(key, "__wrapped__") == 0) {
                return 0;
            }
        }
    }
    return 1;
}
#endif

int
walk_namespace(PyObject *namespace, PyObject *private_builtins, PyObject *interpreter,
               Py_ssize_t known, namespace_walk_result *result)
{
    namespace_walk walk = {namespace, NULL, {private_builtins, interpreter}, NULL,
                           NULL, 0, 0, NULL, 0, 0, 0, 0};
    walk.budget = WALK_BUDGET_PER_NAME * PyDict_GET_SIZE(namespace) + WALK_BUDGET_BASE;
    result->walked = 0;
    result->to_rebind = NULL;
    result->to_rebind_count = 0;
    result->extra = 0;
    result->outcome = WALK_PROVED;
    result->held_function = NULL;
    Py_ssize_t position = 0;
    PyObject *key;
    PyObject *value;
    while (PyDict_Next(namespace, &position, &key, &value)) {
        if (PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, "__name__") == 0 &&
            PyUnicode_CheckExact(value)) {
            walk.module_name = value;
        }
    }
    int stopped = visit_references(&walk, namespace);
    while (!stopped && walk.depth > 0) {
        stopped = visit_references(&walk, walk.stack[--walk.depth]);
    }
    result->walked = (Py_ssize_t)walk.used;
    if (walk.no_memory) {
        PyMem_RawFree(walk.table);
        PyMem_RawFree(walk.stack);
        PyErr_NoMemory();
        return -1;
    }
    /* The functions found with the interpreter's builtins are held for the
     * caller, which gives them the private ones where the proof holds or the
     * pass runs.  A walk that proved nothing and gave them anyway would have
     * a later walk take them for functions made with the private builtins,
     * and not look for their suspended generators (after gc.freeze(), where
     * no pass runs, the next read walks again). */
    Py_ssize_t functions = 0;
#if PY_VERSION_HEX >= 0x030A0000
    Py_ssize_t held_capacity = 0;
#endif
    for (size_t i = 0; i < walk.capacity; i++) {
        PyObject *object = walk.table[i].object;
        if (object == NULL || !PyFunction_Check(object)) {
            continue;
        }
        PyFunctionObject *function = (PyFunctionObject *)object;
        if (function->func_globals != namespace) {
            continue;
        }
        functions++;
#if PY_VERSION_HEX >= 0x030A0000
        if (function->func_builtins != interpreter) {
            /* Made with the private builtins, or given them where a proof
             * held or the pass ran: so are its generators' frames. */
            continue;
        }
        if (!stopped && result->outcome == WALK_PROVED && may_have_suspended_generators(function) &&
            Py_REFCNT(object) != walk.table[i].edges) {
            result->outcome = WALK_GENERATOR_FUNCTION_HELD;
            result->extra = Py_REFCNT(object) - walk.table[i].edges;
            result->held_function = Py_NewRef(function->func_qualname);
        }
        if (result->to_rebind_count == held_capacity) {
            held_capacity = held_capacity == 0 ? 16 : held_capacity * 2;
            PyObject **grown = (PyObject **)PyMem_RawRealloc(
                result->to_rebind, (size_t)held_capacity * sizeof(PyObject *));
            if (grown == NULL) {
                walk.no_memory = 1;
                break;
            }
            result->to_rebind = grown;
        }
        /* Counted above: the reference taken changes no count read later. */
        result->to_rebind[result->to_rebind_count++] = Py_NewRef(object);
#else
        (void)private_builtins;
        (void)interpreter;
#endif
    }
    PyMem_RawFree(walk.table);
    PyMem_RawFree(walk.stack);
    if (walk.no_memory) {
        for (Py_ssize_t i = 0; i < result->to_rebind_count; i++) {
            Py_DECREF(result->to_rebind[i]);
        }
        PyMem_RawFree(result->to_rebind);
        result->to_rebind = NULL;
        result->to_rebind_count = 0;
        PyErr_NoMemory();
        return -1;
    }
    if (stopped) {
        result->outcome = WALK_BUDGET_EXCEEDED;
    }
    else if (result->outcome == WALK_PROVED && Py_REFCNT(namespace) != 1 + known + functions) {
        result->outcome = WALK_NAMESPACE_HELD;
        result->extra = Py_REFCNT(namespace) - 1 - known - functions;
    }
    return 0;
}
